package kernel

import (
	"context"
)

// Publisher is what a running cell uses to reach its front end. It has the method set of
// exec.Publisher, so the kernel's implementation serves the real interpreter directly.
type Publisher interface {
	// Stream sends text written to "stdout" or "stderr".
	Stream(name, text string)
	// Display sends display_data, or update_display_data when update is set.
	Display(data, metadata map[string]any, displayID string, update bool)
	// ClearOutput clears the cell's output, at once or (wait) when new output arrives.
	ClearOutput(wait bool)
	// Input asks the user for a line of text; it fails when the front end does not
	// allow stdin or the cell is interrupted while waiting.
	Input(prompt string, password bool) (string, error)
}

// CellError describes why a cell failed: ename, evalue and a traceback of text lines.
type CellError struct {
	Name, Value string
	Traceback   []string
}

// Result is the outcome of one cell.
type Result struct {
	Data, Metadata map[string]any // MIME bundle of the cell's value; nil when it has none
	Err            *CellError     // non-nil when the cell failed
}

// Executor runs cells. The kernel calls Execute from one goroutine at a time; Complete,
// Inspect and IsComplete are called between cells from the same goroutine. Cursor
// positions are in Unicode code points, as in protocol 5.2 and later.
type Executor interface {
	Execute(ctx context.Context, code string, pub Publisher) Result
	Complete(code string, cursor int) (matches []string, start, end int)
	Inspect(code string, cursor int, detail int) (data map[string]any, found bool)
	IsComplete(code string) (status, indent string)
	Close() error
}

// Interrupter is implemented by executors that act on every interrupt request besides
// the cancellation of the running cell's context: the worker supervisor ends a worker
// whose interrupted cell does not stop when the user interrupts again.
type Interrupter interface {
	Interrupt()
}

// Starter is implemented by executors that can begin a cell before Execute is called
// for it, so that the cell runs while the kernel publishes status busy and
// execute_input; the next Execute with the same code finishes it. Start must not block.
type Starter interface {
	Start(code string)
}

// lazyExecutor builds the real executor in the background and waits for it on first
// use, so the kernel answers kernel_info while the interpreter is still being set up.
type lazyExecutor struct {
	ready chan struct{}
	exec  Executor
	err   error
}

// startLazy calls newExec in a new goroutine and returns an Executor that waits for it.
func startLazy(newExec func() (Executor, error)) *lazyExecutor {
	l := &lazyExecutor{ready: make(chan struct{})}
	go func() {
		defer close(l.ready)
		l.exec, l.err = newExec()
	}()
	return l
}

// get waits for the executor; it returns nil with the construction error on failure.
func (l *lazyExecutor) get() (Executor, error) {
	<-l.ready
	return l.exec, l.err
}

func (l *lazyExecutor) Execute(ctx context.Context, code string, pub Publisher) Result {
	e, err := l.get()
	if err != nil {
		return Result{Err: &CellError{Name: "KernelError", Value: "the Go interpreter could not start: " + err.Error(),
			Traceback: []string{"KernelError: the Go interpreter could not start: " + err.Error()}}}
	}
	return e.Execute(ctx, code, pub)
}

func (l *lazyExecutor) Complete(code string, cursor int) ([]string, int, int) {
	e, err := l.get()
	if err != nil {
		return nil, cursor, cursor
	}
	return e.Complete(code, cursor)
}

func (l *lazyExecutor) Inspect(code string, cursor, detail int) (map[string]any, bool) {
	e, err := l.get()
	if err != nil {
		return nil, false
	}
	return e.Inspect(code, cursor, detail)
}

func (l *lazyExecutor) IsComplete(code string) (string, string) {
	e, err := l.get()
	if err != nil {
		return "unknown", ""
	}
	return e.IsComplete(code)
}

// Start begins code when the executor is built and can start cells early.
func (l *lazyExecutor) Start(code string) {
	select {
	case <-l.ready:
		if st, ok := l.exec.(Starter); ok {
			st.Start(code)
		}
	default:
	}
}

// Interrupt passes an interrupt to the executor when it is built and wants them.
func (l *lazyExecutor) Interrupt() {
	select {
	case <-l.ready:
		if in, ok := l.exec.(Interrupter); ok {
			in.Interrupt()
		}
	default:
	}
}

func (l *lazyExecutor) Close() error {
	e, err := l.get()
	if err != nil {
		return nil
	}
	return e.Close()
}
