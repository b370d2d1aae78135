package gpu

/*
#include <stdint.h>
#include <stddef.h>

// Vulkan structs of command recording, laid out as in vulkan_core.h (64-bit
// non-dispatchable handles).
typedef struct { int32_t sType; const void *pNext; uint32_t flags, family; } gml_pool_info;
typedef struct { int32_t sType; const void *pNext; uint64_t pool; uint32_t level, count; } gml_cb_alloc_info;
typedef struct { int32_t sType; const void *pNext; uint32_t flags; const void *inheritance; } gml_begin_info;
typedef struct { int32_t sType; const void *pNext; uint32_t src, dst; } gml_memory_barrier;
typedef struct { int32_t sType; const void *pNext; uint32_t src, dst, srcQueue, dstQueue; uint64_t buf, off, size; } gml_buffer_barrier;
typedef struct { uint64_t buf, off, size; } gml_range;
typedef struct { uint64_t src, dst, size; } gml_copy;

typedef int32_t (*gml_create_pool_t)(void *device, const gml_pool_info *info, const void *alloc, uint64_t *pool);
typedef int32_t (*gml_alloc_cb_t)(void *device, const gml_cb_alloc_info *info, void **cb);
typedef int32_t (*gml_begin_t)(void *cb, const gml_begin_info *info);
typedef void (*gml_barrier_t)(void *cb, uint32_t srcStage, uint32_t dstStage, uint32_t deps,
	uint32_t nmem, const gml_memory_barrier *mem, uint32_t nbuf, const gml_buffer_barrier *bufs, uint32_t nimg, const void *imgs);
typedef void (*gml_copy_t)(void *cb, uint64_t src, uint64_t dst, uint32_t n, const gml_copy *regions);

static int32_t gml_create_command_pool(void *fn, void *device, uint32_t flags, uint32_t family, uint64_t *pool) {
	gml_pool_info pi = {39, NULL, flags, family}; // VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO
	return ((gml_create_pool_t)fn)(device, &pi, NULL, pool);
}

// gml_start_commands allocates one primary command buffer from pool, unless *cb already
// holds one (a recycled pool's, reset), and begins it.
static int32_t gml_start_commands(void *alloc, void *begin, void *device, uint64_t pool, uint32_t flags, void **cb) {
	if (*cb == NULL) {
		gml_cb_alloc_info ai = {40, NULL, pool, 0, 1}; // VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, primary
		int32_t res = ((gml_alloc_cb_t)alloc)(device, &ai, cb);
		if (res != 0) return res;
	}
	gml_begin_info bi = {42, NULL, flags, NULL}; // VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
	return ((gml_begin_t)begin)(*cb, &bi);
}

// gml_cmd_barrier records one pipeline barrier with the given stages and access masks:
// a global memory barrier when n is 0, else one buffer memory barrier per range.
static void gml_cmd_barrier(void *fn, void *cb, uint32_t srcStage, uint32_t dstStage, uint32_t srcAccess, uint32_t dstAccess, const gml_range *r, uint32_t n) {
	if (n == 0) {
		gml_memory_barrier m = {46, NULL, srcAccess, dstAccess}; // VK_STRUCTURE_TYPE_MEMORY_BARRIER
		((gml_barrier_t)fn)(cb, srcStage, dstStage, 0, 1, &m, 0, NULL, 0, NULL);
		return;
	}
	gml_buffer_barrier b[n];
	for (uint32_t i = 0; i < n; i++) {
		// VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER, VK_QUEUE_FAMILY_IGNORED on both sides.
		gml_buffer_barrier x = {44, NULL, srcAccess, dstAccess, ~0u, ~0u, r[i].buf, r[i].off, r[i].size};
		b[i] = x;
	}
	((gml_barrier_t)fn)(cb, srcStage, dstStage, 0, 0, NULL, n, b, 0, NULL);
}

static void gml_cmd_copy(void *fn, void *cb, uint64_t src, uint64_t dst, uint64_t srcOff, uint64_t dstOff, uint64_t size) {
	gml_copy c = {srcOff, dstOff, size};
	((gml_copy_t)fn)(cb, src, dst, 1, &c);
}
*/
import "C"

import (
	"encoding/binary"
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
	// atomic marks the error word: written only by atomics and read by the host after
	// the submission, so it orders nothing and gets no barrier.
	atomic bool
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

// errWordSize is the size of the device's error word: the reporting check's tag, then
// the offending value's low and high 32 bits.
const errWordSize = 16

// dataCheck turns the value a shader reports as bad data (an index outside its axis)
// into the error of the run that met it.
type dataCheck func(value int64) error

// addCheck registers check for a dispatch about to be recorded and returns the tag its
// shader writes into the device's error word, and the argument binding the word. A
// shader that meets bad data swaps its tag into the word with atomicCompSwap (so the
// first report wins) and writes the value; the host reads the word after the
// submission it already waits for, so checking costs no readback. A nil check returns
// tag 0, for dispatches that bind the word but never report.
func (r *Recorder) addCheck(check dataCheck) (uint32, Arg) {
	arg := Arg{Buf: r.d.errs, Write: true, atomic: true}
	if check == nil {
		return 0, arg
	}
	r.checks = append(r.checks, check)
	return uint32(len(r.checks)), arg
}

// takeDataError reads and clears the error word after a submission of a recording with
// the given checks and returns the error of the check that reported, if any. d.mu
// must be held and the submission finished.
func (d *Device) takeDataError(checks []dataCheck) error {
	w := unsafe.Slice((*uint32)(d.errs.blk.mapped), 3)
	tag := w[0]
	if tag == 0 {
		return nil
	}
	v := int64(uint64(w[2])<<32 | uint64(w[1]))
	w[0], w[1], w[2] = 0, 0, 0
	if int(tag) > len(checks) {
		return fmt.Errorf("gpu: a shader reported bad data (value %d) under unknown check %d", v, tag)
	}
	return checks[tag-1](v)
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
	scratch  []*Buffer   // temporaries the recorded work uses; freed with the recording
	checks   []dataCheck // data checks of the recorded dispatches, by tag - 1
	// dispatches counts the recorded dispatches; split holds the products recorded
	// for an outside engine (interop.go), nil when there are none.
	dispatches int
	split      *splitRecorder
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
	if n := len(d.spares); n > 0 {
		r.pool, r.cb = d.spares[n-1].pool, d.spares[n-1].cb
		d.spares = d.spares[:n-1]
	} else {
		pool, err := d.createCommandPool(vk.CommandPoolCreateTransientBit)
		if err != nil {
			return nil, err
		}
		r.pool = pool
	}
	cb, err := d.beginCommands(r.pool, r.cb, false)
	if err != nil {
		r.release()
		return nil, err
	}
	r.cb = cb
	if timed && d.Info.TimestampPeriod > 0 {
		var qp vk.QueryPool
		if err := check(vk.CreateQueryPool(d.dev, &vk.QueryPoolCreateInfo{SType: vk.StructureTypeQueryPoolCreateInfo, QueryType: vk.QueryTypeTimestamp, QueryCount: 2 * maxTimed}, nil, &qp), "vkCreateQueryPool"); err != nil {
			r.release()
			return nil, err
		}
		r.queries = qp
		vk.CmdResetQueryPool(cb, qp, 0, 2*maxTimed)
	}
	d.fullBarrier(cb)
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
		r.d.recyclePool(r.pool, r.cb)
		r.pool = vk.NullCommandPool
	}
}

// sparePool is a released recording's command pool, reset, with its command buffer.
type sparePool struct {
	pool vk.CommandPool
	cb   vk.CommandBuffer
}

// maxSparePools bounds the command pools kept for reuse.
const maxSparePools = 8

// recyclePool takes back a released recording's pool (and its command buffer, nil when
// none was allocated): reset and kept for the next recorder, since a new pool per
// recording — a recording per step when ag compiles every step — makes the driver set up
// command memory anew each time. d.mu must be held and the pool's work finished.
func (d *Device) recyclePool(pool vk.CommandPool, cb vk.CommandBuffer) {
	if cb != nil && len(d.spares) < maxSparePools && vk.ResetCommandPool(d.dev, pool, 0) == vk.Success {
		d.spares = append(d.spares, sparePool{pool, cb})
		return
	}
	vk.DestroyCommandPool(d.dev, pool, nil)
}

// The calls below record commands through our own C shims, not goki/vulkan: its wrappers
// copy struct arrays into C memory that a finalizer may free while the driver still
// reads it, and leak the create infos they copy. The structs live on the C stack for the
// whole call.

// createCommandPool creates a command pool on the device's queue family.
func (d *Device) createCommandPool(flags vk.CommandPoolCreateFlagBits) (vk.CommandPool, error) {
	var pool C.uint64_t
	res := C.gml_create_command_pool(d.fn.createCommandPool, unsafe.Pointer(d.dev), C.uint32_t(flags), C.uint32_t(d.qfam), &pool)
	if err := check(vk.Result(res), "vkCreateCommandPool"); err != nil {
		return vk.NullCommandPool, err
	}
	return *(*vk.CommandPool)(unsafe.Pointer(&pool)), nil
}

// startCommands allocates a primary command buffer from pool and begins it, for one
// submission (oneTime) or many. The buffer is freed with its pool.
func (d *Device) startCommands(pool vk.CommandPool, oneTime bool) (vk.CommandBuffer, error) {
	return d.beginCommands(pool, nil, oneTime)
}

// beginCommands begins reuse, a reset command buffer of pool, or when nil a new one.
func (d *Device) beginCommands(pool vk.CommandPool, reuse vk.CommandBuffer, oneTime bool) (vk.CommandBuffer, error) {
	flags := C.uint32_t(0)
	if oneTime {
		flags = C.uint32_t(vk.CommandBufferUsageOneTimeSubmitBit)
	}
	cb := unsafe.Pointer(reuse)
	res := C.gml_start_commands(d.fn.allocateCommandBuffers, d.fn.beginCommandBuffer, unsafe.Pointer(d.dev), handle(pool), flags, &cb)
	return vk.CommandBuffer(cb), check(vk.Result(res), "vkAllocateCommandBuffers/vkBeginCommandBuffer")
}

// barrier records a pipeline barrier: over the given buffer ranges, or over all memory
// when there are none.
func (d *Device) barrier(cb vk.CommandBuffer, src, dst vk.PipelineStageFlagBits, srcAccess, dstAccess vk.AccessFlagBits, ranges []C.gml_range) {
	var first *C.gml_range
	if len(ranges) > 0 {
		first = &ranges[0]
	}
	C.gml_cmd_barrier(d.fn.cmdPipelineBarrier, unsafe.Pointer(cb), C.uint32_t(src), C.uint32_t(dst), C.uint32_t(srcAccess), C.uint32_t(dstAccess), first, C.uint32_t(len(ranges)))
}

// fullBarrier makes all earlier memory writes visible to all later commands and the host.
func (d *Device) fullBarrier(cb vk.CommandBuffer) {
	d.barrier(cb, vk.PipelineStageAllCommandsBit, vk.PipelineStageAllCommandsBit|vk.PipelineStageHostBit,
		vk.AccessMemoryWriteBit, vk.AccessMemoryReadBit|vk.AccessMemoryWriteBit|vk.AccessHostReadBit, nil)
}

// copyBuffer records a copy of size bytes from src at srcOff to dst at dstOff.
func (d *Device) copyBuffer(cb vk.CommandBuffer, src, dst vk.Buffer, srcOff, dstOff, size uint64) {
	C.gml_cmd_copy(d.fn.cmdCopyBuffer, unsafe.Pointer(cb), handle(src), handle(dst), C.uint64_t(srcOff), C.uint64_t(dstOff), C.uint64_t(size))
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
	r.dispatches++
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
		if a.atomic {
			continue
		}
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
		// With no earlier write to make visible (write after read), the barrier is a
		// global one over the same stages and access.
		ranges := make([]C.gml_range, len(need))
		for i, w := range need {
			ranges[i] = C.gml_range{buf: handle(w.buf), off: C.uint64_t(w.off), size: C.uint64_t(w.size)}
		}
		stage := vk.PipelineStageComputeShaderBit
		r.d.barrier(r.cb, stage, stage, vk.AccessShaderWriteBit, vk.AccessShaderReadBit|vk.AccessShaderWriteBit, ranges)
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
		if a.atomic {
			continue
		}
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
	checks  []dataCheck
	split   *splitRecording // the outside products and the command buffers around them
	last    *Event          // the last start (async.go), which must finish before the next submission
}

// End finishes the recording. The Recorder is spent; the Recording runs it.
func (r *Recorder) End() (*Recording, error) {
	if r.done {
		return nil, fmt.Errorf("gpu: recorder ended twice")
	}
	r.done = true
	r.d.fullBarrier(r.cb)
	if err := check(vk.EndCommandBuffer(r.cb), "vkEndCommandBuffer"); err != nil {
		for _, b := range r.scratch {
			b.Free()
		}
		r.d.mu.Lock()
		r.release()
		r.d.mu.Unlock()
		return nil, err
	}
	rc := &Recording{d: r.d, pool: r.pool, cb: r.cb, queries: r.queries, nq: r.nq, labels: r.labels, scratch: r.scratch, checks: r.checks, split: r.endSplit(r.cb)}
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
// it returns each dispatch's GPU time, in recording order. A shader that met bad data
// (see addCheck) fails the run with its check's error; the whole batch still ran, and
// the device and the recording stay usable.
func (rc *Recording) Run() ([]Timing, error) {
	rc.settle()
	d := rc.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if rc.pool == vk.NullCommandPool {
		return nil, fmt.Errorf("gpu: run of a released recording")
	}
	var ext []float64
	var err error
	if rc.split != nil {
		ext, err = rc.runSplit()
	} else {
		err = d.submitWithPending(rc.cb)
	}
	if err != nil {
		// Whatever a failed submission's shaders reported is not the next run's error.
		d.takeDataError(nil)
		return nil, err
	}
	if err := d.takeDataError(rc.checks); err != nil {
		return nil, err
	}
	if rc.queries == vk.NullQueryPool {
		return nil, nil
	}
	var out []Timing
	if rc.nq > 0 {
		ts := make([]uint64, rc.nq)
		if err := check(vk.GetQueryPoolResults(d.dev, rc.queries, 0, rc.nq, uint64(8*rc.nq), unsafe.Pointer(&ts[0]), 8, vk.QueryResultFlags(vk.QueryResult64Bit|vk.QueryResultWaitBit)), "vkGetQueryPoolResults"); err != nil {
			return nil, err
		}
		out = make([]Timing, len(rc.labels))
		for i, l := range rc.labels {
			out[i] = Timing{Label: l, Ns: float64(ts[2*i+1]-ts[2*i]) * float64(d.Info.TimestampPeriod)}
		}
	}
	return rc.mergeTimings(out, ext), nil
}

// submitWithPending submits cb, preceded in the same batch by a command buffer holding
// the deferred uploads (the recording's leading barrier orders them before its
// dispatches). d.mu must be held.
func (d *Device) submitWithPending(cb vk.CommandBuffer) error {
	up, free, err := d.pendingCommands()
	defer free()
	if err != nil || up == nil {
		if err != nil {
			return err
		}
		return d.submitWait(cb)
	}
	return d.submitWait(up, cb)
}

// pendingCommands records the deferred uploads into a command buffer to submit ahead
// of a recording (nil when there are none) and returns the function that frees it
// after the submission. d.mu must be held.
func (d *Device) pendingCommands() (vk.CommandBuffer, func(), error) {
	if len(d.pending) == 0 {
		return nil, func() {}, nil
	}
	up, err := d.startCommands(d.pool, true)
	free := func() {}
	if up != nil {
		free = func() { vk.FreeCommandBuffers(d.dev, d.pool, 1, []vk.CommandBuffer{up}) }
	}
	if err != nil {
		return nil, free, err
	}
	d.fullBarrier(up)
	d.recordPending(up)
	d.fullBarrier(up)
	if err := check(vk.EndCommandBuffer(up), "vkEndCommandBuffer"); err != nil {
		return nil, free, err
	}
	return up, free, nil
}

// Release frees the recording's command buffer, queries and scratch buffers; it is safe
// to call twice.
func (rc *Recording) Release() {
	rc.settle()
	for _, b := range rc.scratch {
		b.Free()
	}
	rc.scratch = nil
	if rc.split != nil {
		rc.split.release()
	}
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
		d.recyclePool(rc.pool, rc.cb)
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

// rowGrid spreads one workgroup per row over x and y (each at most 65535).
func rowGrid(rows int) [3]uint32 {
	if rows <= 0 {
		return [3]uint32{} // no rows: Dispatch records nothing
	}
	x := min(rows, maxGroups)
	return [3]uint32{uint32(x), uint32((rows + x - 1) / x), 1}
}

// words packs push-constant words, little-endian.
func words(w []uint32) []byte {
	b := make([]byte, 4*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func f32Off(b *Buffer) uint32 { return uint32(b.off / 4) }

// gridFor returns the workgroup count of a grid-stride loop over n elements.
func gridFor(n int) [3]uint32 {
	g := (n + groupSize - 1) / groupSize
	return [3]uint32{uint32(max(1, min(g, maxGroups))), 1, 1}
}
