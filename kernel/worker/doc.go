// Package worker runs the kernel's cells in a child process, the worker, supervised by
// the process that owns the Jupyter sockets, so that nothing a cell does can end the
// kernel without a word: when the worker dies (a fatal runtime error, the OOM killer, a
// crash in a driver, os.Exit in compiled code) the supervisor tells the notebook why and
// starts a new one.
//
// Decisions:
//   - The supervisor is `gml kernel` itself: package kernel's dispatcher with a
//     Supervisor as its Executor. It holds no interpreter and runs no cell code, so the
//     sockets, the execution count, history and the heartbeat outlive any worker. The
//     worker is `gml kernel -worker`, which calls Serve with the yaegi executor.
//   - Requests and the running cell's messages (display, clear, input, result) travel
//     as length-prefixed JSON frames over a socketpair (fd 3 in the worker). That is one
//     hop each way (measured with a do-nothing executor on the loaded 2-core machine:
//     45-150 us a round trip, almost all of it waiting for the other process to be
//     scheduled). The kernel starts a cell (Start) before it publishes status busy and
//     execute_input, so the hop overlaps them where a core is free, and the worker no
//     longer redirects fds 1 and 2 into pipes per cell: its stdout and stderr are pipes
//     for its whole life, read by the supervisor, which sends what arrives to the running
//     cell every 50 ms.
//   - Order: before the worker sends a message it waits until the supervisor has read
//     its pipes empty (TIOCINQ); the supervisor stamps the message with how much output
//     had arrived, sends the output up to that mark first, and acknowledges display,
//     clear and stream messages before the worker goes on, so text printed before a
//     display, a prompt or the result shows before it and text printed after, after.
//   - Output that arrives between cells (goroutines a cell left running) is held, up to
//     1 MiB, and shown at the start of the next cell on stderr, marked as such.
//   - The worker routes the runtime's crash report (debug.SetCrashOutput) to an
//     unlinked file the supervisor reads after the worker has exited (fd 4). The report
//     also reaches stderr; the supervisor strips it there and puts it, cut to 40 lines,
//     in the cell's error (name KernelDied), with the cause: the runtime's headline, the
//     OOM killer (the cgroup's oom_kill count rose, or SIGKILL) with the peak memory,
//     another signal, or an exit status. The whole report goes to the kernel's log.
//   - A worker that dies during a cell fails that cell; one that dies between cells is
//     replaced at once and the next cell's output says so. Either way the kernel
//     publishes status starting (and idle when no cell runs), without a parent, as a
//     kernel does when it starts. A new worker is started at once in both cases.
//   - Interrupts: the cell's context is cancelled and the worker stops the cell and
//     replies only when its work has stopped. When it has not stopped after a few
//     seconds (compiled code that never checks for interrupts), the worker says where
//     it is; then a second interrupt kills the worker (KernelRestarted), as the only
//     way left to give the user a working kernel.
//   - The worker runs in its own process group (a Ctrl-C in a terminal reaches only the
//     supervisor, which turns it into an interrupt) and dies with the supervisor
//     (PR_SET_PDEATHSIG, and end of file on its connection). Close hangs up first and
//     kills the worker only after 2 s, so its executor removes what it made (the %go
//     get workspace); Config.Exited removes what a worker that died left.
//   - is_complete is answered by the supervisor (it needs no interpreter); complete and
//     inspect are forwarded and answered empty when no worker answers within 10 s.
package worker
