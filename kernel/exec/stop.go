package exec

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/traefik/yaegi/interp"
)

// How a cell is stopped. yaegi stops interpreted code by moving its run id on: every
// frame carries the id it was made under and runs only while that is the interpreter's,
// and blocked channel operations also wait on a done channel that a stop closes. Its
// ExecuteWithContext does this on cancellation but returns at once, leaving a call into
// compiled code (Fit) running after the cell's reply; and frames made before a stop
// keep the old id for good, so every closure created before an interrupt silently
// returns zero values afterwards. runControl therefore runs each chunk with Execute on
// a goroutine of its own, stops it by moving the id on and closing the done channel,
// waits until the goroutine has returned (compiled code checks runtime.Interrupted
// between steps), and then moves the id back, so the closures of earlier cells work
// again. yaegi offers no API for this: runControl reaches Interpreter.id, .done,
// .cancelChan and .mutex (yaegi v0.16.1) by reflection, as scope.go does for the scope;
// TestInterruptKeepsClosures checks that this still works. Where the layout is not the
// expected one, chunks run with ExecuteWithContext and keep its behaviour.

// runControl is the access to yaegi's run id and done channel.
type runControl struct {
	id   *uint64
	done *chan struct{}
	mu   *sync.RWMutex
}

// newRunControl returns the run control of yi, or nil when yaegi's layout is not the
// expected one. It turns on cancellable channel operations, which yaegi enables only in
// its *WithContext calls, before any code is compiled (the choice is made at compile
// time).
func newRunControl(yi *interp.Interpreter) *runControl {
	v := reflect.ValueOf(yi).Elem()
	field := func(name string, t reflect.Type) unsafe.Pointer {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Type() != t {
			return nil
		}
		return unsafe.Pointer(f.UnsafeAddr())
	}
	id := field("id", reflect.TypeOf(uint64(0)))
	done := field("done", reflect.TypeOf((chan struct{})(nil)))
	mu := field("mutex", reflect.TypeOf(sync.RWMutex{}))
	cancelChan := field("cancelChan", reflect.TypeOf(false))
	if id == nil || done == nil || mu == nil || cancelChan == nil {
		return nil
	}
	rc := &runControl{id: (*uint64)(id), done: (*chan struct{})(done), mu: (*sync.RWMutex)(mu)}
	rc.mu.Lock()
	*(*bool)(cancelChan) = true
	rc.mu.Unlock()
	return rc
}

// chunkRun is one chunk's execution.
type chunkRun struct {
	rc       *runControl
	done     chan struct{} // closed when Execute has returned
	err      error
	gid      uint64 // the goroutine running the chunk
	stopOnce sync.Once
	stopped  bool
}

// start runs prog on a new goroutine with a fresh done channel for its frames.
func (rc *runControl) start(yi *interp.Interpreter, prog *interp.Program) *chunkRun {
	r := &chunkRun{rc: rc, done: make(chan struct{})}
	rc.mu.Lock()
	*rc.done = make(chan struct{})
	rc.mu.Unlock()
	started := make(chan struct{})
	go func() {
		defer close(r.done) // also when the recursion guard ends the goroutine
		r.gid = goroutineID()
		close(started)
		_, r.err = yi.Execute(prog)
	}()
	<-started
	return r
}

// stop stops the interpreted code of every goroutine, at its next step.
func (r *chunkRun) stop() {
	r.stopOnce.Do(func() {
		r.stopped = true
		atomic.AddUint64(r.rc.id, 1)
		r.rc.mu.Lock()
		close(*r.rc.done)
		r.rc.mu.Unlock()
	})
}

// resume moves the run id back after a stopped chunk has returned, so frames made
// before the stop (closures of earlier cells) run again.
func (r *chunkRun) resume() {
	if r.stopped {
		atomic.AddUint64(r.rc.id, ^uint64(0))
	}
}

// stuckAfter is how long an interrupted chunk may take to stop before the notebook is
// told where it is stuck.
const stuckAfter = 2 * time.Second

// runChunk runs prog under ctx and returns its error, or ctx's when ctx ended first.
// After a cancellation it returns only once the chunk's goroutine has returned (or,
// with a stop limit, once the limit has passed), telling the front end (i.notice) where
// the work is stuck if that takes longer than stuckAfter.
func (i *Interp) runChunk(ctx context.Context, prog *interp.Program) error {
	if i.rc == nil {
		_, err := i.yi.ExecuteWithContext(ctx, prog)
		return err
	}
	r := i.rc.start(i.yi, prog)
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
	}
	r.stop()
	i.mu.Lock()
	if c := i.cell; c != nil {
		c.stopOnce.Do(func() { close(c.stopped) })
	}
	i.mu.Unlock()
	stuck := time.NewTimer(stuckAfter)
	defer stuck.Stop()
	var limit <-chan time.Time
	if i.cfg.stopLimit > 0 {
		t := time.NewTimer(i.cfg.stopLimit)
		defer t.Stop()
		limit = t.C
	}
	for {
		select {
		case <-r.done:
			r.resume()
			return ctx.Err()
		case <-stuck.C:
			if i.notice != nil {
				i.notice(i.stuckNote(r.gid))
			}
		case <-limit:
			// Given up: the goroutine stays stopped for good when it returns to
			// interpreted code, and so do closures made before this cell.
			return &notStoppedError{cause: ctx.Err(), limit: i.cfg.stopLimit}
		}
	}
}

// notStoppedError is an interrupted chunk whose goroutine was still running when
// Execute gave up waiting for it.
type notStoppedError struct {
	cause error
	limit time.Duration
}

func (e *notStoppedError) Error() string {
	return fmt.Sprintf("%v; the cell's work did not stop within %v and goes on in the background", e.cause, e.limit)
}

func (e *notStoppedError) Unwrap() error { return e.cause }

// stuckNote says where an interrupted chunk's goroutine is.
func (i *Interp) stuckNote(gid uint64) string {
	where := "compiled code"
	if fns := goroutineFuncs(gid); len(fns) > 0 {
		where = strings.Join(fns, " called from ")
	}
	next := "The kernel waits for it to return; interrupt again to restart the kernel's worker instead (all state is lost)."
	if i.cfg.stopLimit > 0 {
		next = fmt.Sprintf("gml waits for it to return, at most %v in all.", i.cfg.stopLimit)
	}
	return fmt.Sprintf("The cell was interrupted, but after %v its work has not stopped: it is in %s, "+
		"which does not check for interrupts. %s\n", stuckAfter, where, next)
}

// goroutineID returns the id of the calling goroutine, from its stack header.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:goruntime.Stack(buf[:], false)]
	b, _ = bytes.CutPrefix(b, []byte("goroutine "))
	if k := bytes.IndexByte(b, ' '); k > 0 {
		id, _ := strconv.ParseUint(string(b[:k]), 10, 64)
		return id
	}
	return 0
}

// goroutineFuncs returns the innermost functions of goroutine gid other than the
// runtime's, reflection's and the interpreter's own, at most three.
func goroutineFuncs(gid uint64) []string {
	buf := make([]byte, 1<<20)
	for {
		n := goruntime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	head := []byte(fmt.Sprintf("goroutine %d [", gid))
	k := bytes.Index(buf, head)
	if k < 0 {
		return nil
	}
	trace := buf[k:]
	if end := bytes.Index(trace, []byte("\n\n")); end >= 0 {
		trace = trace[:end]
	}
	var fns []string
	for _, line := range strings.Split(string(trace), "\n")[1:] {
		if line == "" || line[0] == '\t' || strings.HasPrefix(line, "created by") {
			continue
		}
		fn := line
		if p := strings.LastIndexByte(fn, '('); p > 0 {
			fn = fn[:p]
		}
		if internalFunc(fn) {
			continue
		}
		if len(fns) == 0 || fns[len(fns)-1] != fn {
			fns = append(fns, fn)
		}
		if len(fns) == 3 {
			break
		}
	}
	return fns
}

// internalFunc reports functions that say nothing about where a cell is stuck.
func internalFunc(fn string) bool {
	if strings.Contains(fn, ".runtime_") { // sync.runtime_Semacquire and the like
		return true
	}
	for _, p := range []string{"runtime.", "reflect.", "internal/", "github.com/traefik/yaegi/", "github.com/gml-dev/gml/kernel/exec."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// sleep is time.Sleep as cells see it: it returns early when the cell that was running
// when it began is interrupted (not when that cell ends), so `time.Sleep(time.Hour)`
// does not hold the kernel.
func (i *Interp) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	i.mu.Lock()
	c := i.cell
	i.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	if c == nil {
		<-t.C
		return
	}
	select {
	case <-t.C:
	case <-c.stopped:
	}
}
