package gpu

import (
	"fmt"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// Arg is one buffer a dispatch binds, with the byte range it touches and whether it
// writes it. Binding i of the kernel gets Args[i]'s block; the shader finds the operand
// at the offset the caller passes in push constants (Buffer.Offset gives it).
type Arg struct {
	Buf   *Buffer
	Write bool
}

// In and Out build read and write arguments.
func In(b *Buffer) Arg  { return Arg{Buf: b} }
func Out(b *Buffer) Arg { return Arg{Buf: b, Write: true} }

// Offset is the buffer's byte offset inside the block its kernels bind; shaders add it
// (divided by the element size) to their indices.
func (b *Buffer) Offset() uint64 { return b.off }

type region struct {
	buf       vk.Buffer
	off, size uint64
}

func (r region) overlaps(o region) bool {
	return r.buf == o.buf && r.off < o.off+o.size && o.off < r.off+r.size
}

// Timing is the GPU time of one dispatch, from timestamp queries.
type Timing struct {
	Label string
	Ns    float64
}

// Recorder records many dispatches into one command buffer and submits them at once. It
// inserts a buffer memory barrier only before a dispatch that reads or writes what an
// earlier, unsynchronised dispatch wrote (or writes what one read): independent
// dispatches run back to back. A Recorder is used by one goroutine and once.
type Recorder struct {
	d       *Device
	pool    vk.CommandPool
	cb      vk.CommandBuffer
	dirty   []region // written since the last barrier that covered them
	read    []region // read since the last barrier
	queries vk.QueryPool
	nq      uint32
	labels  []string
	// Barriers counts the barriers inserted, for tests and profiles.
	Barriers int
	done     bool
	scratch  []*Buffer // temporaries the recorded work uses; freed with the recording
}

// scratchBuffer allocates a temporary that lives as long as the recording.
func (r *Recorder) scratchBuffer(size uint64) (*Buffer, error) {
	b, err := r.d.Alloc(size)
	if err != nil {
		return nil, err
	}
	r.scratch = append(r.scratch, b)
	return b, nil
}

// maxTimed bounds the dispatches timed per recording.
const maxTimed = 4096

// NewRecorder starts a recording. With profiling on (SetProfiling), each dispatch is
// bracketed by timestamps; off, no query is written.
func (d *Device) NewRecorder() (*Recorder, error) {
	d.mu.Lock()
	timed := d.timing
	d.mu.Unlock()
	return d.newRecorder(timed)
}

func (d *Device) newRecorder(timed bool) (*Recorder, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	r := &Recorder{d: d}
	var pool vk.CommandPool
	if err := check(vk.CreateCommandPool(d.dev, &vk.CommandPoolCreateInfo{SType: vk.StructureTypeCommandPoolCreateInfo, Flags: vk.CommandPoolCreateFlags(vk.CommandPoolCreateTransientBit), QueueFamilyIndex: d.qfam}, nil, &pool), "vkCreateCommandPool"); err != nil {
		return nil, err
	}
	r.pool = pool
	cb, err := d.allocCommandBuffer(r.pool)
	if err != nil {
		r.release()
		return nil, err
	}
	r.cb = cb
	if err := check(vk.BeginCommandBuffer(cb, &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo}), "vkBeginCommandBuffer"); err != nil {
		r.release()
		return nil, err
	}
	if timed && d.Info.TimestampPeriod > 0 {
		var qp vk.QueryPool
		if err := check(vk.CreateQueryPool(d.dev, &vk.QueryPoolCreateInfo{SType: vk.StructureTypeQueryPoolCreateInfo, QueryType: vk.QueryTypeTimestamp, QueryCount: 2 * maxTimed}, nil, &qp), "vkCreateQueryPool"); err != nil {
			r.release()
			return nil, err
		}
		r.queries = qp
		vk.CmdResetQueryPool(cb, qp, 0, 2*maxTimed)
	}
	fullBarrier(cb)
	return r, nil
}

// SetProfiling turns per-dispatch timestamps on or off for recorders created afterwards.
func (d *Device) SetProfiling(on bool) {
	d.mu.Lock()
	d.timing = on && d.Info.TimestampPeriod > 0
	d.mu.Unlock()
}

func (r *Recorder) release() {
	if r.queries != vk.NullQueryPool {
		vk.DestroyQueryPool(r.d.dev, r.queries, nil)
		r.queries = vk.NullQueryPool
	}
	if r.pool != vk.NullCommandPool {
		vk.DestroyCommandPool(r.d.dev, r.pool, nil)
		r.pool = vk.NullCommandPool
	}
}

// fullBarrier makes all earlier memory writes visible to all later commands and the host.
func fullBarrier(cb vk.CommandBuffer) {
	vk.CmdPipelineBarrier(cb, vk.PipelineStageFlags(vk.PipelineStageAllCommandsBit), vk.PipelineStageFlags(vk.PipelineStageAllCommandsBit|vk.PipelineStageHostBit), 0,
		1, []vk.MemoryBarrier{{SType: vk.StructureTypeMemoryBarrier, SrcAccessMask: vk.AccessFlags(vk.AccessMemoryWriteBit), DstAccessMask: vk.AccessFlags(vk.AccessMemoryReadBit | vk.AccessMemoryWriteBit | vk.AccessHostReadBit)}}, 0, nil, 0, nil)
}

// Dispatch records kernel k over groups workgroups with push constants push (at most
// 128 bytes) and args bound in order.
func (r *Recorder) Dispatch(k *Kernel, groups [3]uint32, push []byte, label string, args ...Arg) error {
	if r.done {
		return fmt.Errorf("gpu: dispatch %s on a submitted recorder", label)
	}
	if len(args) != k.layout.nbind {
		return fmt.Errorf("gpu: dispatch %s: kernel %s binds %d buffers, got %d", label, k.name, k.layout.nbind, len(args))
	}
	if len(push) > pushSize {
		return fmt.Errorf("gpu: dispatch %s: %d bytes of push constants exceed %d", label, len(push), pushSize)
	}
	if groups[0] == 0 || groups[1] == 0 || groups[2] == 0 {
		return nil
	}
	for i, g := range groups {
		if lim := r.d.Info.MaxGroups[i]; lim > 0 && g > lim {
			return fmt.Errorf("gpu: dispatch %s: %d workgroups along axis %d exceed the device's %d", label, g, i, lim)
		}
	}
	bufs := make([]vk.Buffer, len(args))
	var regs [maxBindings]region
	for i, a := range args {
		if a.Buf == nil || a.Buf.freed {
			return fmt.Errorf("gpu: dispatch %s: argument %d is a nil or freed buffer", label, i)
		}
		bufs[i] = a.Buf.blk.buf
		regs[i] = region{a.Buf.blk.buf, a.Buf.off, a.Buf.size}
	}
	r.d.mu.Lock()
	set, err := r.d.pipes.set(k.layout, bufs)
	r.d.mu.Unlock()
	if err != nil {
		return err
	}
	r.syncFor(args, regs[:len(args)])
	cb := r.cb
	timed := r.queries != vk.NullQueryPool && r.nq < 2*maxTimed
	if timed {
		vk.CmdWriteTimestamp(cb, vk.PipelineStageTopOfPipeBit, r.queries, r.nq)
	}
	vk.CmdBindPipeline(cb, vk.PipelineBindPointCompute, k.pipe)
	vk.CmdBindDescriptorSets(cb, vk.PipelineBindPointCompute, k.layout.layout, 0, 1, []vk.DescriptorSet{set}, 0, nil)
	if len(push) > 0 {
		vk.CmdPushConstants(cb, k.layout.layout, vk.ShaderStageFlags(vk.ShaderStageComputeBit), 0, uint32(len(push)), unsafe.Pointer(&push[0]))
	}
	vk.CmdDispatch(cb, groups[0], groups[1], groups[2])
	if timed {
		vk.CmdWriteTimestamp(cb, vk.PipelineStageBottomOfPipeBit, r.queries, r.nq+1)
		r.nq += 2
		r.labels = append(r.labels, label)
	}
	return nil
}

// syncFor inserts the barrier a dispatch with these arguments needs, then records its
// reads and writes.
func (r *Recorder) syncFor(args []Arg, regs []region) {
	var need []region
	war := false
	for i, a := range args {
		for _, w := range r.dirty {
			if w.overlaps(regs[i]) {
				need = append(need, w)
			}
		}
		if a.Write {
			for _, rd := range r.read {
				if rd.overlaps(regs[i]) {
					war = true
				}
			}
		}
	}
	if len(need) > 0 || war {
		bars := make([]vk.BufferMemoryBarrier, 0, len(need))
		for _, w := range need {
			bars = append(bars, vk.BufferMemoryBarrier{SType: vk.StructureTypeBufferMemoryBarrier, SrcAccessMask: vk.AccessFlags(vk.AccessShaderWriteBit), DstAccessMask: vk.AccessFlags(vk.AccessShaderReadBit | vk.AccessShaderWriteBit),
				SrcQueueFamilyIndex: vk.QueueFamilyIgnored, DstQueueFamilyIndex: vk.QueueFamilyIgnored, Buffer: w.buf, Offset: vk.DeviceSize(w.off), Size: vk.DeviceSize(w.size)})
		}
		stage := vk.PipelineStageFlags(vk.PipelineStageComputeShaderBit)
		vk.CmdPipelineBarrier(r.cb, stage, stage, 0, 0, nil, uint32(len(bars)), bars, 0, nil)
		r.Barriers++
		// The execution dependency orders every earlier dispatch, so earlier reads are
		// settled; only the writes made visible leave the dirty list.
		r.read = r.read[:0]
		kept := r.dirty[:0]
		for _, w := range r.dirty {
			covered := false
			for _, n := range need {
				if n == w {
					covered = true
				}
			}
			if !covered {
				kept = append(kept, w)
			}
		}
		r.dirty = kept
	}
	for i, a := range args {
		if a.Write {
			r.dirty = append(r.dirty, regs[i])
		} else {
			r.read = append(r.read, regs[i])
		}
	}
}

// Recording is a finished command buffer that can be submitted any number of times:
// a prepared graph records once and resubmits on every run.
type Recording struct {
	d       *Device
	pool    vk.CommandPool
	cb      vk.CommandBuffer
	queries vk.QueryPool
	nq      uint32
	labels  []string
	scratch []*Buffer
}

// End finishes the recording. The Recorder is spent; the Recording runs it.
func (r *Recorder) End() (*Recording, error) {
	if r.done {
		return nil, fmt.Errorf("gpu: recorder ended twice")
	}
	r.done = true
	fullBarrier(r.cb)
	if err := check(vk.EndCommandBuffer(r.cb), "vkEndCommandBuffer"); err != nil {
		for _, b := range r.scratch {
			b.Free()
		}
		r.d.mu.Lock()
		r.release()
		r.d.mu.Unlock()
		return nil, err
	}
	rc := &Recording{d: r.d, pool: r.pool, cb: r.cb, queries: r.queries, nq: r.nq, labels: r.labels, scratch: r.scratch}
	r.pool, r.queries = vk.NullCommandPool, vk.NullQueryPool
	return rc, nil
}

// Submit ends the recording, runs it once and frees it. With profiling on, it returns
// each dispatch's GPU time.
func (r *Recorder) Submit() ([]Timing, error) {
	rc, err := r.End()
	if err != nil {
		return nil, err
	}
	defer rc.Release()
	return rc.Run()
}

// Run submits the recording as one batch and waits for it. With timestamps recorded,
// it returns each dispatch's GPU time, in recording order.
func (rc *Recording) Run() ([]Timing, error) {
	d := rc.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if rc.pool == vk.NullCommandPool {
		return nil, fmt.Errorf("gpu: run of a released recording")
	}
	if err := d.submitWithPending(rc.cb); err != nil {
		return nil, err
	}
	if rc.nq == 0 {
		return nil, nil
	}
	ts := make([]uint64, rc.nq)
	if err := check(vk.GetQueryPoolResults(d.dev, rc.queries, 0, rc.nq, uint64(8*rc.nq), unsafe.Pointer(&ts[0]), 8, vk.QueryResultFlags(vk.QueryResult64Bit|vk.QueryResultWaitBit)), "vkGetQueryPoolResults"); err != nil {
		return nil, err
	}
	out := make([]Timing, len(rc.labels))
	for i, l := range rc.labels {
		out[i] = Timing{Label: l, Ns: float64(ts[2*i+1]-ts[2*i]) * float64(d.Info.TimestampPeriod)}
	}
	return out, nil
}

// submitWithPending submits cb, preceded in the same batch by a command buffer holding
// the deferred uploads (the recording's leading barrier orders them before its
// dispatches). d.mu must be held.
func (d *Device) submitWithPending(cb vk.CommandBuffer) error {
	if len(d.pending) == 0 {
		return d.submitWait(cb)
	}
	up, err := d.allocCommandBuffer(d.pool)
	if err != nil {
		return err
	}
	defer vk.FreeCommandBuffers(d.dev, d.pool, 1, []vk.CommandBuffer{up})
	if err := check(vk.BeginCommandBuffer(up, &vk.CommandBufferBeginInfo{SType: vk.StructureTypeCommandBufferBeginInfo, Flags: vk.CommandBufferUsageFlags(vk.CommandBufferUsageOneTimeSubmitBit)}), "vkBeginCommandBuffer"); err != nil {
		return err
	}
	fullBarrier(up)
	d.recordPending(up)
	fullBarrier(up)
	if err := check(vk.EndCommandBuffer(up), "vkEndCommandBuffer"); err != nil {
		return err
	}
	return d.submitWait(up, cb)
}

// Release frees the recording's command buffer, queries and scratch buffers; it is safe
// to call twice.
func (rc *Recording) Release() {
	for _, b := range rc.scratch {
		b.Free()
	}
	rc.scratch = nil
	d := rc.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if rc.queries != vk.NullQueryPool {
		vk.DestroyQueryPool(d.dev, rc.queries, nil)
		rc.queries = vk.NullQueryPool
	}
	if rc.pool != vk.NullCommandPool {
		vk.DestroyCommandPool(d.dev, rc.pool, nil)
		rc.pool = vk.NullCommandPool
	}
}

// Discard abandons an unsubmitted recording and frees it.
func (r *Recorder) Discard() {
	if r.done {
		return
	}
	r.done = true
	for _, b := range r.scratch {
		b.Free()
	}
	r.scratch = nil
	r.d.mu.Lock()
	defer r.d.mu.Unlock()
	r.release()
}
