package worker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/gml-dev/gml/kernel"
	"github.com/gml-dev/gml/kernel/internal/pipeio"
)

// Hooks are what the worker offers the executor it builds.
type Hooks struct {
	// Stuck tells the supervisor, and through it the notebook, that an interrupted cell's
	// work has not stopped (note says where it is); from then on a second interrupt
	// ends the worker.
	Stuck func(note string)
	// Log is the supervisor's log, for the worker's own diagnostics: the worker's
	// stdout and stderr are the cells' output.
	Log *os.File
}

// Serve is the worker's side: it builds the executor, then runs the supervisor's
// requests on it until the supervisor hangs up. It must be called by the program the
// supervisor's Config.Command starts, before anything else writes to the connection.
func Serve(newExec func(Hooks) (kernel.Executor, error)) error {
	logFile := os.NewFile(fdLog, "supervisor log")
	syscall.CloseOnExec(fdLog)
	crash := os.NewFile(fdCrash, "crash report")
	// The runtime's report of a fatal error goes to this file (and to stderr, which the
	// supervisor reads too), for the supervisor to show after the process has died.
	if err := debug.SetCrashOutput(crash, debug.CrashOptions{}); err != nil {
		fmt.Fprintf(logFile, "gml worker: cannot route crash reports: %v\n", err)
	}
	crash.Close()
	f := os.NewFile(fdConn, "supervisor connection")
	raw, err := net.FileConn(f) // a close-on-exec copy: children of cells do not hold it
	f.Close()
	if err != nil {
		return fmt.Errorf("worker: the supervisor connection (fd %d): %w", fdConn, err)
	}
	defer raw.Close()
	w := &server{c: newConn(raw), inputs: make(chan *msg, 1), acks: make(chan struct{}, 1)}
	ex, err := newExec(Hooks{Stuck: w.stuck, Log: logFile})
	ready := &msg{T: tReady}
	if err != nil {
		ready.Error = err.Error()
	} else {
		defer ex.Close() // the supervisor hung up: remove what the executor made
	}
	if serr := w.c.Send(ready); serr != nil || err != nil {
		return errors.Join(err, serr)
	}
	for {
		m, err := w.c.Recv()
		if err != nil {
			return nil // the supervisor is gone
		}
		switch m.T {
		case tExecute:
			ctx, cancel := context.WithCancel(context.Background())
			w.mu.Lock()
			w.cancel = cancel
			w.mu.Unlock()
			go w.execute(ctx, ex, m)
		case tInterrupt:
			w.mu.Lock()
			if w.cancel != nil {
				w.cancel()
			}
			w.mu.Unlock()
		case tInputReply:
			select {
			case w.inputs <- m:
			default:
			}
		case tAck:
			select {
			case w.acks <- struct{}{}:
			default:
			}
		case tComplete:
			go func() {
				matches, start, end := ex.Complete(m.Code, m.Cursor)
				w.c.Send(&msg{T: tCompleteReply, ID: m.ID, Matches: matches, Start: start, End: end})
			}()
		case tInspect:
			go func() {
				data, found := ex.Inspect(m.Code, m.Cursor, m.Detail)
				w.c.Send(&msg{T: tInspectReply, ID: m.ID, Data: data, Found: found})
			}()
		}
	}
}

// server is the worker's state between the supervisor's requests.
type server struct {
	c      *conn
	inputs chan *msg
	acks   chan struct{}
	ackMu  sync.Mutex // one acknowledged message at a time
	mu     sync.Mutex
	cancel context.CancelFunc // of the running cell
}

// ackWait bounds the wait for an acknowledgement, should the supervisor be slow.
const ackWait = time.Second

// sendAcked sends m once the supervisor has read the output written before it, and
// waits until the supervisor has passed it on: output the caller writes next can then
// only come after it. (Without the wait, the supervisor's pipe readers could take in
// output written just after m before the supervisor looked at m.)
func (w *server) sendAcked(m *msg) {
	w.ackMu.Lock()
	defer w.ackMu.Unlock()
	select {
	case <-w.acks: // a late acknowledgement of an earlier message
	default:
	}
	awaitOutputRead()
	if w.c.Send(m) != nil {
		return
	}
	select {
	case <-w.acks:
	case <-time.After(ackWait):
	}
}

func (w *server) execute(ctx context.Context, ex kernel.Executor, m *msg) {
	res := ex.Execute(ctx, m.Code, &remotePub{w: w, ctx: ctx})
	w.mu.Lock()
	w.cancel()
	w.cancel = nil
	w.mu.Unlock()
	awaitOutputRead()
	if err := w.c.Send(&msg{T: tResult, ID: m.ID, Data: res.Data, Metadata: res.Metadata, Err: res.Err}); err != nil {
		// The value could not be sent (too large): the cell ends with that error instead.
		w.c.Send(&msg{T: tResult, ID: m.ID, Err: &kernel.CellError{Name: "ResultTooLarge", Value: err.Error()}})
	}
}

func (w *server) stuck(note string) {
	w.sendAcked(&msg{T: tStuck, Text: note})
}

// remotePub is the running cell's publisher: each call becomes a message to the
// supervisor, sent once the supervisor has read what the cell wrote before it.
type remotePub struct {
	w   *server
	ctx context.Context
}

func (p *remotePub) Stream(name, text string) {
	p.w.sendAcked(&msg{T: tStream, Name: name, Text: text})
}

func (p *remotePub) Display(data, metadata map[string]any, displayID string, update bool) {
	p.w.sendAcked(&msg{T: tDisplay, Data: data, Metadata: metadata, DisplayID: displayID, Update: update})
}

func (p *remotePub) ClearOutput(wait bool) {
	p.w.sendAcked(&msg{T: tClear, Wait: wait})
}

func (p *remotePub) Input(prompt string, password bool) (string, error) {
	for len(p.w.inputs) > 0 { // a reply to an earlier, abandoned request
		<-p.w.inputs
	}
	awaitOutputRead()
	if err := p.w.c.Send(&msg{T: tInput, Prompt: prompt, Password: password}); err != nil {
		return "", err
	}
	select {
	case r := <-p.w.inputs:
		if r.Error != "" {
			return "", errors.New(r.Error)
		}
		return r.Text, nil
	case <-p.ctx.Done():
		return "", fmt.Errorf("input interrupted: %w", p.ctx.Err())
	}
}

// outputWait bounds how long a message waits for the supervisor to read the output
// written before it; past it, order is given up rather than the cell held back.
const outputWait = 200 * time.Millisecond

// awaitOutputRead waits until the supervisor has read everything written to fd 1 and
// 2 so far, so that output printed before a display, a prompt or the cell's result is
// shown before it.
func awaitOutputRead() {
	deadline := time.Now().Add(outputWait)
	for _, fd := range []int{1, 2} {
		for pipeio.Pending(fd) > 0 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
	}
}
