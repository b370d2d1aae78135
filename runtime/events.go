package runtime

import (
	"fmt"
	"sync"
	"time"
)

// Event is work in flight: an asynchronous transfer, a computation started without
// waiting, or a point recorded on a device. Synchronize blocks the host until it
// completed; PhysicalDevice.Wait orders a device's later work after it. Where a device
// cannot work asynchronously the call that made the event did the work already, and
// the event is complete from the start, so code written with events runs everywhere.
type Event struct {
	kind   string // upload, download, copy, compute, record
	device string // the ID of the device that runs it
	bytes  int64
	c      Completion // nil: completed when made

	mu        sync.Mutex
	submitted time.Time
	finished  time.Time // when the host saw it complete
	done      bool
	err       error
}

// newEvent wraps a backend's completion (nil when the work is done already, with err
// its outcome) and enters it in the active timeline.
func newEvent(kind, device string, bytes int64, c Completion, submitted time.Time, err error) *Event {
	e := &Event{kind: kind, device: device, bytes: bytes, c: c, submitted: submitted}
	if c == nil {
		e.done, e.finished, e.err = true, time.Now(), err
	}
	if tl := activeTimeline(); tl != nil {
		tl.addEvent(e)
	}
	return e
}

// Kind says what the event is: "upload", "download", "copy", "compute" or "record".
func (e *Event) Kind() string { return e.kind }

// Device is the ID of the device that runs the work.
func (e *Event) Device() string { return e.device }

// Synchronize blocks until the work completed and returns its error.
func (e *Event) Synchronize() error {
	e.mu.Lock()
	if e.done {
		defer e.mu.Unlock()
		return e.err
	}
	c := e.c
	e.mu.Unlock()
	err := c.Wait()
	e.complete(err)
	return e.Err()
}

// Done reports, without blocking, whether the work completed.
func (e *Event) Done() bool {
	e.mu.Lock()
	if e.done {
		e.mu.Unlock()
		return true
	}
	c := e.c
	e.mu.Unlock()
	if !c.Done() {
		return false
	}
	e.complete(c.Wait()) // returns at once: the work completed
	return true
}

// Err returns the work's error once it completed (nil before).
func (e *Event) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

func (e *Event) complete(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done {
		e.done, e.err, e.finished = true, err, time.Now()
	}
}

// Span returns when the work ran: on the device's clock where the device times its
// work (GPU timestamps, calibrated to the host's), else from submission to when the
// host saw it complete. ok is false while it runs.
func (e *Event) Span() (start, end time.Time, ok bool) {
	if !e.Done() {
		return time.Time{}, time.Time{}, false
	}
	if tc, isTimed := e.c.(TimedCompletion); isTimed {
		if s, t, ok := tc.Span(); ok {
			return s, t, true
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.submitted, e.finished, true
}

// String describes the event: "upload 4.0 MiB on vulkan:0 (done in 1.2ms)".
func (e *Event) String() string {
	s := e.kind
	if e.bytes > 0 {
		s += " " + FormatBytes(e.bytes)
	}
	s += " on " + e.device
	if start, end, ok := e.Span(); ok {
		s += fmt.Sprintf(" (done in %v)", end.Sub(start).Round(time.Microsecond))
	} else {
		s += " (running)"
	}
	if err := e.Err(); err != nil {
		s += ": " + err.Error()
	}
	return s
}

// goCompletion is work a goroutine does: copies between devices.
type goCompletion struct {
	ch  chan struct{}
	err error
}

func goWork(f func() error) *goCompletion {
	g := &goCompletion{ch: make(chan struct{})}
	go func() {
		defer close(g.ch)
		g.err = f()
	}()
	return g
}

func (g *goCompletion) Wait() error { <-g.ch; return g.err }

func (g *goCompletion) Done() bool {
	select {
	case <-g.ch:
		return true
	default:
		return false
	}
}

// WriteAsync copies src into the buffer at offset without waiting for the device: src
// has been copied (to staging) when it returns, and the event completes when the data
// is in the buffer.
func (db *DeviceBuffer) WriteAsync(offset int64, src []byte) (*Event, error) {
	if err := db.checkRange("WriteAsync", offset, int64(len(src))); err != nil {
		return nil, err
	}
	st, err := db.use("WriteAsync")
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	t0 := time.Now()
	if at, ok := st.b.(AsyncTransfer); ok {
		c, err := at.UploadAsync(st.buf, offset, src)
		if err != nil {
			return nil, err
		}
		return st.track(newEvent("upload", db.dev.id, int64(len(src)), c, t0, nil)), nil
	}
	err = writeAt(st.b, st.buf, st.size, offset, src)
	return newEvent("upload", db.dev.id, int64(len(src)), nil, t0, err), err
}

// ReadAsync copies the buffer from offset into dst without waiting: dst holds the data
// once the event completed (Synchronize, or Done reporting true).
func (db *DeviceBuffer) ReadAsync(offset int64, dst []byte) (*Event, error) {
	if err := db.checkRange("ReadAsync", offset, int64(len(dst))); err != nil {
		return nil, err
	}
	st, err := db.use("ReadAsync")
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	t0 := time.Now()
	if at, ok := st.b.(AsyncTransfer); ok {
		c, err := at.DownloadAsync(st.buf, offset, dst)
		if err != nil {
			return nil, err
		}
		return st.track(newEvent("download", db.dev.id, int64(len(dst)), c, t0, nil)), nil
	}
	err = readAt(st.b, st.buf, offset, dst)
	return newEvent("download", db.dev.id, int64(len(dst)), nil, t0, err), err
}

// CopyToAsync copies the whole buffer into the start of dst without waiting: on the
// device when one device holds both, else through the host on a goroutine (between
// devices: a download, then an upload).
func (db *DeviceBuffer) CopyToAsync(dst *DeviceBuffer) (*Event, error) {
	if dst.st.size < db.st.size {
		return nil, fmt.Errorf("runtime: CopyToAsync from %v into the smaller %v", db, dst)
	}
	src, to, unlock, err := lockPair(db, dst, "CopyToAsync")
	if err != nil {
		return nil, err
	}
	defer unlock()
	t0 := time.Now()
	var c Completion
	if at, ok := src.b.(AsyncTransfer); ok && src.b == to.b {
		if c, err = at.CopyAsync(to.buf, 0, src.buf, 0, src.size); err != nil {
			return nil, err
		}
	} else {
		sb, sbuf, tb, tbuf, n, tsize := src.b, src.buf, to.b, to.buf, src.size, to.size
		c = goWork(func() error { return copyBuffers(tb, tbuf, tsize, sb, sbuf, n) })
	}
	e := newEvent("copy", db.dev.id, src.size, c, t0, nil)
	src.track(e)
	if to != src {
		to.track(e)
	}
	return e, nil
}

// lockPair locks two buffers in a fixed order (so two copies in opposite directions
// cannot deadlock) and settles their work.
func lockPair(a, b *DeviceBuffer, op string) (sa, sb *bufState, unlock func(), err error) {
	if a.st == b.st {
		s, err := a.use(op)
		if err != nil {
			return nil, nil, nil, err
		}
		return s, s, s.mu.Unlock, nil
	}
	first, second := a, b
	if a.st.id > b.st.id {
		first, second = b, a
	}
	s1, err := first.use(op)
	if err != nil {
		return nil, nil, nil, err
	}
	s2, err := second.use(op)
	if err != nil {
		s1.mu.Unlock()
		return nil, nil, nil, err
	}
	unlock = func() { s2.mu.Unlock(); s1.mu.Unlock() }
	if first == a {
		return s1, s2, unlock, nil
	}
	return s2, s1, unlock, nil
}

// track remembers e until the buffer's next call settles it. st.mu must be held.
func (st *bufState) track(e *Event) *Event {
	st.pending = append(st.pending, e)
	return e
}

// Record returns an event that completes when all the work submitted to the device so
// far has (a complete event on devices whose work is synchronous).
func (d *PhysicalDevice) Record() (*Event, error) {
	b, err := d.Open()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if r, ok := b.(EventRecorder); ok {
		c, err := r.Record()
		if err != nil {
			return nil, err
		}
		return newEvent("record", d.id, 0, c, t0, nil), nil
	}
	return newEvent("record", d.id, 0, nil, t0, nil), nil
}

// Wait makes the device's later work start after e completes: work submitted to d from
// now on sees e's results. The host waits for e (backends order work on the host
// today), so Wait returns e's error.
func (d *PhysicalDevice) Wait(e *Event) error { return e.Synchronize() }

// Synchronize waits until all the work submitted to the device has completed.
func (d *PhysicalDevice) Synchronize() error {
	e, err := d.Record()
	if err != nil {
		return err
	}
	return e.Synchronize()
}
