package gpu

/*
#include <stdint.h>
#include <stdlib.h>

// VkSubmitInfo as in vulkan_core.h.
typedef struct {
	int32_t sType; const void *pNext;
	uint32_t waitCount; const void *waits; const void *waitStages;
	uint32_t cbCount; void *const *cbs;
	uint32_t signalCount; const void *signals;
} gml_submit_info;
typedef int32_t (*gml_queue_submit_t)(void *queue, uint32_t n, const gml_submit_info *infos, uint64_t fence);

// gml_queue_submit submits n command buffers as one batch signalling fence.
static int32_t gml_queue_submit(void *fn, void *queue, void *const *cbs, uint32_t n, uint64_t fence) {
	gml_submit_info si = {0};
	si.sType = 4; // VK_STRUCTURE_TYPE_SUBMIT_INFO
	si.cbCount = n;
	si.cbs = cbs;
	return ((gml_queue_submit_t)fn)(queue, 1, &si, fence);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	vk "github.com/goki/vulkan"

	"github.com/gml-dev/gml/internal/sysmem"
)

// staging is a host-visible buffer reused for uploads and downloads on devices whose
// device-local memory is not mappable. It grows to the largest transfer, up to
// maxStaging bytes; larger transfers go in several rounds.
type staging struct {
	d    *Device
	buf  vk.Buffer
	mem  vk.DeviceMemory
	size uint64
	ptr  unsafe.Pointer
}

const maxStaging = 256 << 20

func (s *staging) free() {
	if s == nil || s.size == 0 {
		return
	}
	s.d.freeHostBuffer(s.buf, s.mem)
	s.size = 0
}

// ensure makes the staging buffer at least n bytes (n ≤ maxStaging).
func (s *staging) ensure(n uint64) error {
	if n <= s.size {
		return nil
	}
	s.free()
	size := uint64(1 << 20)
	for size < n {
		size *= 2
	}
	buf, mem, p, err := s.d.hostBuffer(size, vk.BufferUsageTransferSrcBit|vk.BufferUsageTransferDstBit, "staging")
	if err != nil {
		return err
	}
	s.buf, s.mem, s.size, s.ptr = buf, mem, size, p
	return nil
}

// hostBuffer creates a buffer of size bytes in host-visible coherent memory and maps it,
// for staging or the shaders' error word (what names the use in errors).
func (d *Device) hostBuffer(size uint64, usage vk.BufferUsageFlagBits, what string) (vk.Buffer, vk.DeviceMemory, unsafe.Pointer, error) {
	var buf vk.Buffer
	if err := check(vk.CreateBuffer(d.dev, &vk.BufferCreateInfo{SType: vk.StructureTypeBufferCreateInfo, Size: vk.DeviceSize(size), Usage: vk.BufferUsageFlags(usage)}, nil, &buf), "vkCreateBuffer ("+what+")"); err != nil {
		return nil, nil, nil, err
	}
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.dev, buf, &req)
	req.Deref()
	idx, ok := hostMemoryType(d.pd, req.MemoryTypeBits)
	if !ok {
		vk.DestroyBuffer(d.dev, buf, nil)
		return nil, nil, nil, fmt.Errorf("gpu: the device has no host-visible coherent memory for %s", what)
	}
	var mem vk.DeviceMemory
	if err := check(vk.AllocateMemory(d.dev, &vk.MemoryAllocateInfo{SType: vk.StructureTypeMemoryAllocateInfo, AllocationSize: req.Size, MemoryTypeIndex: idx}, nil, &mem), "vkAllocateMemory ("+what+", "+sysmem.FormatBytes(size)+")"); err != nil {
		vk.DestroyBuffer(d.dev, buf, nil)
		return nil, nil, nil, err
	}
	var p unsafe.Pointer
	vk.BindBufferMemory(d.dev, buf, mem, 0)
	if err := check(vk.MapMemory(d.dev, mem, 0, vk.DeviceSize(vk.WholeSize), 0, &p), "vkMapMemory ("+what+")"); err != nil {
		vk.DestroyBuffer(d.dev, buf, nil)
		vk.FreeMemory(d.dev, mem, nil)
		return nil, nil, nil, err
	}
	return buf, mem, p, nil
}

// freeHostBuffer unmaps and frees a buffer from hostBuffer.
func (d *Device) freeHostBuffer(buf vk.Buffer, mem vk.DeviceMemory) {
	vk.UnmapMemory(d.dev, mem)
	vk.DestroyBuffer(d.dev, buf, nil)
	vk.FreeMemory(d.dev, mem, nil)
}

// hostMemoryType picks host-visible coherent memory, preferring cached (fast reads back).
func hostMemoryType(pd vk.PhysicalDevice, bits uint32) (uint32, bool) {
	var mp vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(pd, &mp)
	mp.Deref()
	want := vk.MemoryPropertyFlags(vk.MemoryPropertyHostVisibleBit | vk.MemoryPropertyHostCoherentBit)
	best, found := uint32(0), false
	for i := uint32(0); i < mp.MemoryTypeCount; i++ {
		mp.MemoryTypes[i].Deref()
		f := mp.MemoryTypes[i].PropertyFlags
		if bits&(1<<i) == 0 || f&want != want {
			continue
		}
		if !found || f&vk.MemoryPropertyFlags(vk.MemoryPropertyHostCachedBit) != 0 {
			best, found = i, true
		}
	}
	return best, found
}

// Copy is one host<->device transfer: Data to Buf at Offset (upload) or back (download).
type Copy struct {
	Buf    *Buffer
	Offset uint64
	Data   []byte
}

func (c Copy) check() error {
	if c.Buf == nil || c.Buf.freed {
		return fmt.Errorf("gpu: transfer to a nil or freed buffer")
	}
	if c.Offset+uint64(len(c.Data)) > c.Buf.size {
		return fmt.Errorf("gpu: transfer of %d bytes at offset %d overruns a buffer of %d bytes", len(c.Data), c.Offset, c.Buf.size)
	}
	return nil
}

// Upload copies every Data into its buffer, batching them into as few submissions as
// the staging buffer allows.
func (d *Device) Upload(copies ...Copy) error { return d.transfer(copies, true) }

// Download copies every buffer range back into its Data slice.
func (d *Device) Download(copies ...Copy) error { return d.transfer(copies, false) }

func (d *Device) transfer(copies []Copy, up bool) error {
	for _, c := range copies {
		if err := c.check(); err != nil {
			return err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if d.mem.mappable {
		for _, c := range copies {
			dev := unsafe.Slice((*byte)(unsafe.Add(c.Buf.blk.mapped, c.Buf.off+c.Offset)), len(c.Data))
			if up {
				parallelCopy(dev, c.Data)
			} else {
				parallelCopy(c.Data, dev)
			}
		}
		return nil
	}
	if up && d.deferUpload(copies) {
		return nil
	}
	if err := d.flushPending(); err != nil {
		return err
	}
	// Split into rounds that fit the staging buffer; a single copy larger than it is cut.
	type piece struct {
		c        Copy
		from, to int
	}
	var round []piece
	var used uint64
	flush := func() error {
		if len(round) == 0 {
			return nil
		}
		if err := d.stage.ensure(used); err != nil {
			return err
		}
		var off uint64
		if up {
			for _, p := range round {
				parallelCopy(unsafe.Slice((*byte)(unsafe.Add(d.stage.ptr, off)), p.to-p.from), p.c.Data[p.from:p.to])
				off = alignUp(off+uint64(p.to-p.from), 16)
			}
		}
		err := d.oneShot(func(cb vk.CommandBuffer) {
			var off uint64
			for _, p := range round {
				n := uint64(p.to - p.from)
				devOff := p.c.Buf.off + p.c.Offset + uint64(p.from)
				if up {
					d.copyBuffer(cb, d.stage.buf, p.c.Buf.blk.buf, off, devOff, n)
				} else {
					d.copyBuffer(cb, p.c.Buf.blk.buf, d.stage.buf, devOff, off, n)
				}
				off = alignUp(off+n, 16)
			}
		})
		if err != nil {
			return err
		}
		if !up {
			off = 0
			for _, p := range round {
				parallelCopy(p.c.Data[p.from:p.to], unsafe.Slice((*byte)(unsafe.Add(d.stage.ptr, off)), p.to-p.from))
				off = alignUp(off+uint64(p.to-p.from), 16)
			}
		}
		round, used = round[:0], 0
		return nil
	}
	for _, c := range copies {
		for from := 0; from < len(c.Data); {
			room := maxStaging - int(used)
			if room <= 0 {
				if err := flush(); err != nil {
					return err
				}
				room = maxStaging
			}
			to := min(len(c.Data), from+room)
			round = append(round, piece{c, from, to})
			used = alignUp(used+uint64(to-from), 16)
			from = to
		}
	}
	return flush()
}

// maxDeferred bounds the bytes of uploads held back for the next submission: enough for
// a large training batch (1024 samples of 4096 floats are 16 MiB), whose upload then
// costs no submit and wait of its own.
const maxDeferred = 64 << 20

// pendingCopy is a deferred upload: bytes at off in the deferral buffer, bound for dst.
type pendingCopy struct {
	dst          vk.Buffer
	dstOff, size uint64
	off          uint64
}

// deferUpload holds uploads (feeds, training batches, learning rates, step counters) in
// a host buffer and records their copies at the head of the next submission, so a training
// step's inputs and its compute go to the GPU in one submit. It reports false when the
// copies are too big to defer. d.mu must be held.
func (d *Device) deferUpload(copies []Copy) bool {
	var total uint64
	for _, c := range copies {
		total += alignUp(uint64(len(c.Data)), 16)
	}
	if total > maxDeferred {
		return false
	}
	// Growing the buffer replaces it, so what it holds is submitted first.
	if d.pendUsed+total > d.pend.size && d.pendUsed > 0 {
		if err := d.flushPending(); err != nil {
			return false
		}
	}
	if err := d.pend.ensure(total); err != nil {
		return false
	}
	for _, c := range copies {
		n := uint64(len(c.Data))
		parallelCopy(unsafe.Slice((*byte)(unsafe.Add(d.pend.ptr, d.pendUsed)), n), c.Data)
		d.pending = append(d.pending, pendingCopy{dst: c.Buf.blk.buf, dstOff: c.Buf.off + c.Offset, size: n, off: d.pendUsed})
		d.pendUsed += alignUp(n, 16)
	}
	return true
}

// parallelCopy copies src into dst (of equal length), in chunks over the host's cores
// when it is large: one core copies about 10 GB/s, so a 16 MiB batch would take longer
// to stage than the GPU takes to train on it.
func parallelCopy(dst, src []byte) {
	const chunk = 2 << 20
	workers := min(runtime.NumCPU(), len(src)/chunk)
	if workers < 2 {
		copy(dst, src)
		return
	}
	var wg sync.WaitGroup
	per := (len(src) + workers - 1) / workers
	for from := 0; from < len(src); from += per {
		to := min(len(src), from+per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[from:to], src[from:to])
		}()
	}
	wg.Wait()
}

// recordPending records the deferred copies into cb and forgets them. d.mu must be held.
func (d *Device) recordPending(cb vk.CommandBuffer) {
	for _, p := range d.pending {
		if p.size > 0 {
			d.copyBuffer(cb, d.pend.buf, p.dst, p.off, p.dstOff, p.size)
		}
	}
	d.pending, d.pendUsed = d.pending[:0], 0
}

// flushPending submits the deferred uploads now. d.mu must be held.
func (d *Device) flushPending() error {
	if len(d.pending) == 0 {
		return nil
	}
	return d.oneShot(d.recordPending)
}

// oneShot records a command buffer with rec, submits it (after any deferred uploads, in
// the same command buffer) and waits. d.mu must be held.
func (d *Device) oneShot(rec func(cb vk.CommandBuffer)) error {
	cb, err := d.startCommands(d.pool, true)
	if cb != nil {
		defer vk.FreeCommandBuffers(d.dev, d.pool, 1, []vk.CommandBuffer{cb})
	}
	if err != nil {
		return err
	}
	d.fullBarrier(cb)
	if len(d.pending) > 0 {
		d.recordPending(cb)
		d.fullBarrier(cb)
	}
	rec(cb)
	d.fullBarrier(cb)
	if err := check(vk.EndCommandBuffer(cb), "vkEndCommandBuffer"); err != nil {
		return err
	}
	return d.submitWait(cb)
}

// submitWait submits command buffers in order as one batch and waits for them. d.mu
// must be held.
func (d *Device) submitWait(cbs ...vk.CommandBuffer) error {
	if err := d.submit(d.queue, d.fence, cbs...); err != nil {
		return err
	}
	return d.waitFence()
}

// waitFence waits for the device's fence without a time limit and resets it for the
// next submission. d.mu must be held.
func (d *Device) waitFence() error {
	err := check(vk.WaitForFences(d.dev, 1, []vk.Fence{d.fence}, vk.True, ^uint64(0)), "vkWaitForFences")
	vk.ResetFences(d.dev, 1, []vk.Fence{d.fence})
	return err
}

// submit submits command buffers in order to queue as one batch signalling fence,
// without waiting. d.mu must be held (it serialises the queues).
func (d *Device) submit(queue vk.Queue, fence vk.Fence, cbs ...vk.CommandBuffer) error {
	// goki/vulkan's QueueSubmit frees its C copy of the submit info from a finalizer that
	// can run during the call; this path runs every graph run, so it calls the driver
	// directly with the info on the C stack.
	arr := commandBufferArray(cbs)
	defer C.free(unsafe.Pointer(arr))
	res := C.gml_queue_submit(d.fn.queueSubmit, unsafe.Pointer(queue), arr, C.uint32_t(len(cbs)), handle(fence))
	return check(vk.Result(res), "vkQueueSubmit")
}

// commandBufferArray copies cbs into C memory for the submit calls, whose submit info
// on the C stack points to it while the driver reads it. The caller frees it with
// C.free.
func commandBufferArray(cbs []vk.CommandBuffer) *unsafe.Pointer {
	arr := (*unsafe.Pointer)(C.malloc(C.size_t(len(cbs)) * C.size_t(unsafe.Sizeof(unsafe.Pointer(nil)))))
	for i, cb := range cbs {
		unsafe.Slice(arr, len(cbs))[i] = unsafe.Pointer(cb)
	}
	return arr
}

// Zero fills the buffer with zero bytes.
func (d *Device) Zero(b *Buffer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	n := alignUp(max(b.size, 4), 4)
	if d.mem.mappable {
		clear(unsafe.Slice((*byte)(unsafe.Add(b.blk.mapped, b.off)), n))
		return nil
	}
	return d.oneShot(func(cb vk.CommandBuffer) {
		vk.CmdFillBuffer(cb, b.blk.buf, vk.DeviceSize(b.off), vk.DeviceSize(n), 0)
	})
}
