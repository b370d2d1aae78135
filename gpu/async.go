package gpu

import (
	"fmt"
	"sync"
	"time"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// Asynchronous work: transfers on the transfer queue (Device.xq: a second queue of the
// compute family where it has one, so a copy overlaps a compute; else the compute
// queue, where copies still run without the caller waiting) and prepared recordings
// started without waiting. Each submission has a fence of its own and returns an Event
// at once. An upload copies the caller's bytes into a staging buffer first (reused
// across calls), so the caller may reuse them; a download copies out of staging when
// its event completes. Where the queue has timestamps, each event's command buffer is
// bracketed by two, and the event reports when the device ran it on the host's clock
// (calibrated by a submission that writes one timestamp between two host readings).
//
// Safety: freeing a buffer first waits for the events that touch it, a recording is
// not resubmitted while a start of it is in flight, and Close finishes every event
// (a later Wait returns its result) before it destroys anything.

// asyncState is the device's bookkeeping of asynchronous work; d.mu guards it, except
// waitMu, which fence waits hold for reading so that Close cannot destroy a fence
// being waited on.
type asyncState struct {
	pool     vk.CommandPool // command buffers of events, freed when each completes
	inflight []*Event
	stages   map[uint64][]*hostMem // free staging buffers by size
	kept     uint64                // bytes held in stages
	waitMu   sync.RWMutex
	// Calibration of device timestamps: host time = epoch + ticks·period + offset (ns).
	epoch   time.Time
	offset  float64
	calibAt time.Time
}

// hostMem is a host-visible buffer, mapped.
type hostMem struct {
	buf  vk.Buffer
	mem  vk.DeviceMemory
	ptr  unsafe.Pointer
	size uint64
}

// maxKeptStaging bounds the staging memory kept for reuse between asynchronous transfers.
const maxKeptStaging = 256 << 20

// Event is asynchronous work on the device: a transfer or a started recording. It
// implements runtime.TimedCompletion.
type Event struct {
	d       *Device
	what    string
	regions []region // the buffer ranges it touches: Free of any of them waits for it

	mu         sync.Mutex // guards done, err, start, end for the lock-free checks
	done       bool
	err        error
	start, end time.Time
	timed      bool

	// Device objects, released when it completes (d.mu held).
	fence   vk.Fence
	cbs     []vk.CommandBuffer
	queries vk.QueryPool
	stage   *hostMem
	after   func()      // host work once the device is done: a download's copy out
	checks  []dataCheck // a started recording's data checks
}

// takeStage returns a staging buffer of at least n bytes. d.mu must be held.
func (d *Device) takeStage(n uint64) (*hostMem, error) {
	size := uint64(64 << 10)
	for size < n {
		size *= 2
	}
	if l := d.async.stages[size]; len(l) > 0 {
		h := l[len(l)-1]
		d.async.stages[size] = l[:len(l)-1]
		d.async.kept -= size
		return h, nil
	}
	buf, mem, p, err := d.hostBuffer(size, vk.BufferUsageTransferSrcBit|vk.BufferUsageTransferDstBit, "async staging")
	if err != nil {
		return nil, err
	}
	return &hostMem{buf: buf, mem: mem, ptr: p, size: size}, nil
}

// putStage keeps a staging buffer for reuse, or frees it. d.mu must be held.
func (d *Device) putStage(h *hostMem) {
	if h == nil {
		return
	}
	if d.async.kept+h.size <= maxKeptStaging && !d.closed {
		if d.async.stages == nil {
			d.async.stages = map[uint64][]*hostMem{}
		}
		d.async.stages[h.size] = append(d.async.stages[h.size], h)
		d.async.kept += h.size
		return
	}
	d.freeHostBuffer(h.buf, h.mem)
}

// timestamps reports whether events can be timed on the device.
func (d *Device) timestamps() bool { return d.Info.TimestampPeriod > 0 && d.qtimeBits > 0 }

// launch submits e to queue: a command buffer that rec fills, between a leading
// timestamp and barrier and a trailing barrier, then the pre-recorded command buffers
// extra, then a closing timestamp. d.mu must be held.
func (d *Device) launch(queue vk.Queue, e *Event, rec func(cb vk.CommandBuffer), extra ...vk.CommandBuffer) (err error) {
	if d.closed {
		return ErrClosed
	}
	a := &d.async
	if a.pool == vk.NullCommandPool {
		pool, err := d.createCommandPool(vk.CommandPoolCreateTransientBit)
		if err != nil {
			return err
		}
		a.pool = pool
	}
	e.d = d
	e.timed = d.timestamps()
	if e.timed {
		if err := d.calibrate(); err != nil {
			return err
		}
	}
	defer func() {
		if err != nil {
			d.release(e)
		}
	}()
	// Handles are created into locals: cgo refuses a pointer into e, which holds Go
	// pointers.
	var fence vk.Fence
	if err := check(vk.CreateFence(d.dev, &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo}, nil, &fence), "vkCreateFence"); err != nil {
		return err
	}
	e.fence = fence
	if e.timed {
		var qp vk.QueryPool
		if err := check(vk.CreateQueryPool(d.dev, &vk.QueryPoolCreateInfo{SType: vk.StructureTypeQueryPoolCreateInfo, QueryType: vk.QueryTypeTimestamp, QueryCount: 2}, nil, &qp), "vkCreateQueryPool"); err != nil {
			return err
		}
		e.queries = qp
	}
	cb, err := d.startCommands(a.pool, true)
	if cb != nil {
		e.cbs = append(e.cbs, cb)
	}
	if err != nil {
		return err
	}
	if e.timed {
		vk.CmdResetQueryPool(cb, e.queries, 0, 2)
		vk.CmdWriteTimestamp(cb, vk.PipelineStageTopOfPipeBit, e.queries, 0)
	}
	d.fullBarrier(cb)
	rec(cb)
	d.fullBarrier(cb)
	last := cb
	if len(extra) > 0 && e.timed {
		// The closing timestamp follows the pre-recorded buffers, in one of its own.
		if err := check(vk.EndCommandBuffer(cb), "vkEndCommandBuffer"); err != nil {
			return err
		}
		if last, err = d.startCommands(a.pool, true); last != nil {
			e.cbs = append(e.cbs, last)
		}
		if err != nil {
			return err
		}
	}
	if e.timed {
		vk.CmdWriteTimestamp(last, vk.PipelineStageBottomOfPipeBit, e.queries, 1)
	}
	if err := check(vk.EndCommandBuffer(last), "vkEndCommandBuffer"); err != nil {
		return err
	}
	batch := []vk.CommandBuffer{cb}
	batch = append(batch, extra...)
	if last != cb {
		batch = append(batch, last)
	}
	if err := d.submit(queue, e.fence, batch...); err != nil {
		return err
	}
	a.inflight = append(a.inflight, e)
	return nil
}

// calibrate relates device timestamps to the host's clock, at most every ten seconds:
// one submission writes a timestamp, which the device took between the two host
// readings around it. d.mu must be held.
func (d *Device) calibrate() error {
	a := &d.async
	if !a.calibAt.IsZero() && time.Since(a.calibAt) < 10*time.Second {
		return nil
	}
	var qp vk.QueryPool
	if err := check(vk.CreateQueryPool(d.dev, &vk.QueryPoolCreateInfo{SType: vk.StructureTypeQueryPoolCreateInfo, QueryType: vk.QueryTypeTimestamp, QueryCount: 1}, nil, &qp), "vkCreateQueryPool"); err != nil {
		return err
	}
	defer vk.DestroyQueryPool(d.dev, qp, nil)
	cb, err := d.startCommands(d.pool, true)
	if cb != nil {
		defer vk.FreeCommandBuffers(d.dev, d.pool, 1, []vk.CommandBuffer{cb})
	}
	if err != nil {
		return err
	}
	vk.CmdResetQueryPool(cb, qp, 0, 1)
	vk.CmdWriteTimestamp(cb, vk.PipelineStageBottomOfPipeBit, qp, 0)
	if err := check(vk.EndCommandBuffer(cb), "vkEndCommandBuffer"); err != nil {
		return err
	}
	h0 := time.Now()
	if err := d.submitWait(cb); err != nil {
		return err
	}
	h1 := time.Now()
	ts, err := d.timestampsOf(qp, 1)
	if err != nil {
		return err
	}
	if a.epoch.IsZero() {
		a.epoch = h0
	}
	mid := float64(h0.Sub(a.epoch)) + float64(h1.Sub(h0))/2
	a.offset = mid - float64(ts[0])*float64(d.Info.TimestampPeriod)
	a.calibAt = h1
	return nil
}

// timestampsOf reads n timestamps of a pool whose work completed, masked to the valid bits.
func (d *Device) timestampsOf(qp vk.QueryPool, n uint32) ([]uint64, error) {
	ts := make([]uint64, n)
	if err := check(vk.GetQueryPoolResults(d.dev, qp, 0, n, uint64(8*n), unsafe.Pointer(&ts[0]), 8, vk.QueryResultFlags(vk.QueryResult64Bit|vk.QueryResultWaitBit)), "vkGetQueryPoolResults"); err != nil {
		return nil, err
	}
	if d.qtimeBits < 64 {
		for i := range ts {
			ts[i] &= 1<<d.qtimeBits - 1
		}
	}
	return ts, nil
}

// hostTime converts a device timestamp to the host's clock. d.mu must be held.
func (d *Device) hostTime(ticks uint64) time.Time {
	a := &d.async
	return a.epoch.Add(time.Duration(float64(ticks)*float64(d.Info.TimestampPeriod) + a.offset))
}

// finish completes e once its fence has signalled (or the device is idle): the host's
// part of the work, its timing and data checks, and the release of its objects. d.mu
// must be held.
func (d *Device) finish(e *Event, failed error) {
	e.mu.Lock()
	done := e.done
	e.mu.Unlock()
	if done {
		return
	}
	err := failed
	var start, end time.Time
	if err == nil && e.after != nil {
		e.after()
	}
	timed := e.timed
	if err == nil && timed {
		if ts, terr := d.timestampsOf(e.queries, 2); terr == nil {
			start, end = d.hostTime(ts[0]), d.hostTime(ts[1])
		} else {
			timed = false
		}
	}
	if err == nil && e.checks != nil {
		err = d.takeDataError(e.checks)
	}
	d.release(e)
	for i, x := range d.async.inflight {
		if x == e {
			d.async.inflight = append(d.async.inflight[:i], d.async.inflight[i+1:]...)
			break
		}
	}
	e.mu.Lock()
	e.done, e.err, e.start, e.end, e.timed = true, err, start, end, timed && err == nil
	e.mu.Unlock()
}

// release frees e's device objects. d.mu must be held.
func (d *Device) release(e *Event) {
	if len(e.cbs) > 0 {
		vk.FreeCommandBuffers(d.dev, d.async.pool, uint32(len(e.cbs)), e.cbs)
		e.cbs = nil
	}
	if e.fence != vk.NullFence {
		vk.DestroyFence(d.dev, e.fence, nil)
		e.fence = vk.NullFence
	}
	if e.queries != vk.NullQueryPool {
		vk.DestroyQueryPool(d.dev, e.queries, nil)
		e.queries = vk.NullQueryPool
	}
	d.putStage(e.stage)
	e.stage = nil
}

// Wait blocks until the work completed and returns its error (a data error found by a
// started recording's checks; ErrClosed never: Close completes every event first).
func (e *Event) Wait() error {
	if err, done := e.state(); done {
		return err
	}
	d := e.d
	d.async.waitMu.RLock()
	var res vk.Result = vk.Success
	if _, done := e.state(); !done {
		res = vk.WaitForFences(d.dev, 1, []vk.Fence{e.fence}, vk.True, ^uint64(0))
	}
	d.async.waitMu.RUnlock()
	d.mu.Lock()
	d.finish(e, check(res, "vkWaitForFences ("+e.what+")"))
	d.mu.Unlock()
	err, _ := e.state()
	return err
}

// Done reports whether the work completed, without blocking.
func (e *Event) Done() bool {
	if _, done := e.state(); done {
		return true
	}
	d := e.d
	d.async.waitMu.RLock()
	res := vk.Success
	if _, done := e.state(); !done {
		res = vk.GetFenceStatus(d.dev, e.fence)
	}
	d.async.waitMu.RUnlock()
	if res == vk.NotReady {
		return false
	}
	d.mu.Lock()
	d.finish(e, check(res, "vkGetFenceStatus ("+e.what+")"))
	d.mu.Unlock()
	return true
}

// Span returns when the device ran the work, on the host's clock; ok is false until
// the work completed, or when the queue has no timestamps.
func (e *Event) Span() (start, end time.Time, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.start, e.end, e.done && e.timed
}

func (e *Event) state() (error, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err, e.done
}

// touches reports whether e reads or writes any byte of b.
func (e *Event) touches(b *Buffer) bool {
	r := region{b.blk.buf, b.off, max(b.size, 1)}
	for _, x := range e.regions {
		if x.overlaps(r) {
			return true
		}
	}
	return false
}

// settle waits for the events in flight that touch b (before it is freed).
func (d *Device) settle(b *Buffer) {
	d.mu.Lock()
	var wait []*Event
	if b.blk != nil {
		for _, e := range d.async.inflight {
			if e.touches(b) {
				wait = append(wait, e)
			}
		}
	}
	d.mu.Unlock()
	for _, e := range wait {
		e.Wait()
	}
}

// closeAsync completes every event in flight and frees the asynchronous machinery; the
// device is idle. d.mu must be held.
func (d *Device) closeAsync() {
	a := &d.async
	a.waitMu.Lock()
	for len(a.inflight) > 0 {
		d.finish(a.inflight[0], nil)
	}
	a.waitMu.Unlock()
	for _, l := range a.stages {
		for _, h := range l {
			d.freeHostBuffer(h.buf, h.mem)
		}
	}
	a.stages, a.kept = nil, 0
	if a.pool != vk.NullCommandPool {
		vk.DestroyCommandPool(d.dev, a.pool, nil)
		a.pool = vk.NullCommandPool
	}
}

// done returns an event that has already completed, for empty transfers.
func (d *Device) doneEvent(what string) *Event {
	return &Event{d: d, what: what, done: true}
}

// UploadAsync copies c.Data into c.Buf at c.Offset without waiting for the device. The
// data is copied into staging before it returns.
func (d *Device) UploadAsync(c Copy) (*Event, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	n := uint64(len(c.Data))
	if n == 0 {
		return d.doneEvent("upload"), nil
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, ErrClosed
	}
	st, err := d.takeStage(n)
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	parallelCopy(unsafe.Slice((*byte)(st.ptr), n), c.Data)
	dst, off := c.Buf.blk.buf, c.Buf.off+c.Offset
	e := &Event{what: "upload", stage: st, regions: []region{{dst, off, n}}}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.launchTransfer(e, func(cb vk.CommandBuffer) { d.copyBuffer(cb, st.buf, dst, 0, off, n) }); err != nil {
		return nil, err
	}
	return e, nil
}

// DownloadAsync copies c.Buf from c.Offset into c.Data when the returned event
// completes, without waiting for the device.
func (d *Device) DownloadAsync(c Copy) (*Event, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	n := uint64(len(c.Data))
	if n == 0 {
		return d.doneEvent("download"), nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	st, err := d.takeStage(n)
	if err != nil {
		return nil, err
	}
	src, off, dst := c.Buf.blk.buf, c.Buf.off+c.Offset, c.Data
	e := &Event{what: "download", stage: st, regions: []region{{src, off, n}},
		after: func() { parallelCopy(dst, unsafe.Slice((*byte)(st.ptr), n)) }}
	if err := d.launchTransfer(e, func(cb vk.CommandBuffer) { d.copyBuffer(cb, src, st.buf, off, 0, n) }); err != nil {
		return nil, err
	}
	return e, nil
}

// CopyAsync copies size bytes of src at srcOff into dst at dstOff on the device,
// without waiting.
func (d *Device) CopyAsync(dst *Buffer, dstOff uint64, src *Buffer, srcOff, size uint64) (*Event, error) {
	if err := checkRange(dst, dstOff, size); err != nil {
		return nil, err
	}
	if err := checkRange(src, srcOff, size); err != nil {
		return nil, err
	}
	if size == 0 {
		return d.doneEvent("copy"), nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	s, so, t, to := src.blk.buf, src.off+srcOff, dst.blk.buf, dst.off+dstOff
	e := &Event{what: "copy", regions: []region{{s, so, size}, {t, to, size}}}
	if err := d.launchTransfer(e, func(cb vk.CommandBuffer) { d.copyBuffer(cb, s, t, so, to, size) }); err != nil {
		return nil, err
	}
	return e, nil
}

// checkRange reports a range outside a buffer, or a freed buffer.
func checkRange(b *Buffer, off, size uint64) error {
	if b == nil || b.freed {
		return fmt.Errorf("gpu: copy with a nil or freed buffer")
	}
	if off+size > b.size {
		return fmt.Errorf("gpu: copy of %d bytes at offset %d overruns a buffer of %d bytes", size, off, b.size)
	}
	return nil
}

// launchTransfer submits a transfer to the transfer queue after the deferred uploads,
// which may target the same memory. d.mu must be held.
func (d *Device) launchTransfer(e *Event, rec func(cb vk.CommandBuffer)) error {
	if d.closed {
		d.putStage(e.stage)
		return ErrClosed
	}
	if err := d.flushPending(); err != nil {
		d.putStage(e.stage)
		return err
	}
	return d.launch(d.xq, e, rec)
}

// Record returns an event that completes when every event in flight now has: the
// device's other work is synchronous and complete when its call returns.
func (d *Device) Record() (Events, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	return append(Events(nil), d.async.inflight...), nil
}

// Events is a set of events that completes when all of them have.
type Events []*Event

// Wait waits for every event and returns the first error.
func (s Events) Wait() error {
	var first error
	for _, e := range s {
		if err := e.Wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Done reports whether every event completed.
func (s Events) Done() bool {
	for _, e := range s {
		if !e.Done() {
			return false
		}
	}
	return true
}

// start submits the recording without waiting, after any deferred uploads (in the same
// batch, as Run does); the event completes when its results are visible to downloads.
func (rc *Recording) start() (*Event, error) {
	rc.settle()
	d := rc.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if rc.pool == vk.NullCommandPool {
		return nil, fmt.Errorf("gpu: start of a released recording")
	}
	e := &Event{what: "compute", checks: rc.checks}
	if err := d.launch(d.queue, e, func(cb vk.CommandBuffer) {
		if len(d.pending) > 0 {
			d.recordPending(cb)
		}
	}, rc.cb); err != nil {
		return nil, err
	}
	rc.last = e
	return e, nil
}

// settle waits for the recording's last start, which must finish before it is
// submitted again or released.
func (rc *Recording) settle() {
	rc.d.mu.Lock()
	e := rc.last
	rc.last = nil
	rc.d.mu.Unlock()
	if e != nil {
		e.Wait()
	}
}
