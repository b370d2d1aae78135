// Package kernel is the dispatcher of the gml Jupyter kernel: it serves the shell,
// control, stdin, IOPub and heartbeat sockets of one connection (package wire does the
// framing and signing) and hands cells to an Executor (in the product a
// kernel/worker.Supervisor, which runs package kernel/exec in a worker process it
// restarts when it dies; a fake in tests).
//
// Decisions:
//   - Concurrency: one goroutine reads each socket. Shell requests go through a queue to
//     one worker that handles them in order, so cells never overlap. Control requests
//     are handled on their reader's goroutine, so interrupt_request and
//     shutdown_request are answered while a cell runs. SIGINT (when Config.HandleSIGINT
//     is set, as `gml kernel` does) cancels the running cell like interrupt_request and
//     never kills the process.
//   - Every request, kernel_info and control requests included, is bracketed by status
//     busy and idle on IOPub, with the request as parent: jupyter_client's wait_for_ready
//     relies on it, and jupyter_kernel_test checks that busy is the first IOPub message.
//     An executor that implements Starter gets an execute_request's code before busy
//     is published, so that the cell runs meanwhile in the worker; the history entry is
//     written after idle. Both keep the process hop to the worker out of the `1+1` round
//     trip where cores are free.
//   - Interrupt cancels the cell's context, and tells an executor that implements
//     Interrupter (the supervisor counts interrupts: a second one ends a worker whose cell
//     does not stop). The executor turns that into the cell's error once the cell's work
//     has stopped, and with stop_on_error the execute requests already queued behind it
//     are answered "aborted" (as ipykernel does); other queued requests are handled
//     normally.
//   - An executor that replaced the process running cells calls Restarted, which
//     publishes status starting (and idle when no cell runs) without a parent, as a
//     kernel does when it starts.
//   - execution_count grows only for cells with store_history; silent cells publish
//     nothing but busy and idle and store no history.
//   - shutdown_request, with or without restart, is answered on its socket and on IOPub
//     and then Run returns; `gml kernel` exits and, for a restart, the front end starts a
//     fresh process. That is what jupyter_client's restart_kernel expects (it waits for
//     the process to end, then launches the kernelspec again), and it guarantees that all
//     interpreter state, goroutines and device buffers are gone.
//   - user_expressions are evaluated after a cell that succeeded, with nothing
//     published, each answered with its value's MIME bundle or its error, as ipykernel
//     does. Replies carry no payloads: no front end feature gml offers needs them.
//   - comm_info_request is answered with no comms and comm_open with comm_close: the
//     kernel registers no comm targets yet.
//   - History is kept in memory and appended, one JSON object per line, to a file
//     (`gml kernel` uses $XDG_DATA_HOME/gml/history.jsonl). Earlier sessions are read
//     only when a history_request first needs them; sessions are numbered in the order
//     they appear in the file. Search patterns are globs over the whole cell, as in
//     IPython.
//   - The Executor is built in the background right after the sockets are bound, so
//     kernel_info is answered before the interpreter exists; requests that need the
//     interpreter wait for it.
//   - The dispatcher defines its own Executor and Publisher types rather than importing
//     kernel/exec, so it can be tested with a fake executor and knows nothing of yaegi;
//     cmd/gml adapts exec.Interp to Executor.
//   - A panic that escapes the executor becomes the cell's error; a malformed or
//     wrongly signed message is logged and dropped. Nothing a front end sends stops the
//     kernel except shutdown_request.
package kernel
