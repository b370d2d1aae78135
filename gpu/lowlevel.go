package gpu

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// VkPhysicalDeviceMemoryProperties2 with VkPhysicalDeviceMemoryBudgetPropertiesEXT
// chained, laid out as in vulkan_core.h.
typedef struct { uint32_t flags, heap; } gml_mem_type;
typedef struct { uint64_t size; uint32_t flags; } gml_mem_heap;
typedef struct { int32_t sType; void *pNext; uint64_t budget[16], usage[16]; } gml_budget;
typedef struct {
	int32_t sType; void *pNext;
	uint32_t typeCount; gml_mem_type types[32];
	uint32_t heapCount; gml_mem_heap heaps[16];
} gml_mem_props2;
typedef void (*gml_mem_props2_t)(void *pd, gml_mem_props2 *out);

// gml_budget_query fills the heaps and their budgets.
static void gml_budget_query(void *fn, void *pd, gml_mem_props2 *p, gml_budget *b) {
	memset(p, 0, sizeof(*p));
	memset(b, 0, sizeof(*b));
	p->sType = 1000059004; // PHYSICAL_DEVICE_MEMORY_PROPERTIES_2
	b->sType = 1000237000; // PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT
	p->pNext = b;
	((gml_mem_props2_t)fn)(pd, p);
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	vk "github.com/goki/vulkan"

	"github.com/gml-dev/gml/runtime"
)

// The Backend's optional abilities (runtime/abilities.go): memory figures, transfers at
// offsets, fills and copies on the device, asynchronous transfers with events, and
// prepared segments started without waiting.

// MemoryInfo returns the free and total device-local memory: the driver's budget less
// this process's usage where the device has VK_EXT_memory_budget (which counts other
// processes), else the heap less what gml reserved.
func (b *Backend) MemoryInfo() (free, total int64) {
	d := b.d
	total = int64(d.Info.DeviceLocalBytes())
	m := d.Memory()
	free = int64(m.Heap) - int64(m.Reserved)
	if d.Info.HasExtension("VK_EXT_memory_budget") {
		if fn := instanceProc(d.inst, "vkGetPhysicalDeviceMemoryProperties2"); fn != nil {
			p := (*C.gml_mem_props2)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gml_mem_props2{}))))
			bud := (*C.gml_budget)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gml_budget{}))))
			defer C.free(unsafe.Pointer(p))
			defer C.free(unsafe.Pointer(bud))
			C.gml_budget_query(fn, unsafe.Pointer(d.pd), p, bud)
			best := -1
			for i := 0; i < int(p.heapCount) && i < 16; i++ {
				h := p.heaps[i]
				if h.flags&C.uint32_t(vk.MemoryHeapDeviceLocalBit) != 0 && (best < 0 || h.size > p.heaps[best].size) {
					best = i
				}
			}
			if best >= 0 && bud.budget[best] > 0 {
				free = int64(bud.budget[best]) - int64(bud.usage[best])
			}
		}
	}
	return max(free, 0), total
}

// UploadAt copies src into the buffer at byte offset.
func (b *Backend) UploadAt(rb runtime.Buffer, offset int64, src []byte) error {
	buf, err := devBuffer(rb)
	if err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("gpu: upload at a negative offset (%d)", offset)
	}
	return b.d.Upload(Copy{Buf: buf, Offset: uint64(offset), Data: src})
}

// DownloadAt copies the buffer's bytes from offset into dst.
func (b *Backend) DownloadAt(rb runtime.Buffer, offset int64, dst []byte) error {
	buf, err := devBuffer(rb)
	if err != nil {
		return err
	}
	if offset < 0 {
		return fmt.Errorf("gpu: download at a negative offset (%d)", offset)
	}
	return b.d.Download(Copy{Buf: buf, Offset: uint64(offset), Data: dst})
}

// Fill repeats the 4-byte pattern over size bytes at offset (both multiples of 4) on the
// device.
func (b *Backend) Fill(rb runtime.Buffer, offset, size int64, pattern uint32) error {
	buf, err := devBuffer(rb)
	if err != nil {
		return err
	}
	if offset < 0 || size < 0 || offset%4 != 0 || size%4 != 0 {
		return fmt.Errorf("gpu: fill of %d bytes at offset %d: both must be non-negative multiples of 4", size, offset)
	}
	if err := checkRange(buf, uint64(offset), uint64(size)); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	return b.d.Fill(buf, uint64(offset), uint64(size), pattern)
}

// Fill repeats the 4-byte pattern over size bytes of buf at offset, on the device.
func (d *Device) Fill(buf *Buffer, offset, size uint64, pattern uint32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return d.oneShot(func(cb vk.CommandBuffer) {
		vk.CmdFillBuffer(cb, buf.blk.buf, vk.DeviceSize(buf.off+offset), vk.DeviceSize(size), pattern)
	})
}

// Copy copies size bytes of src at srcOffset into dst at dstOffset on the device.
func (b *Backend) Copy(rdst runtime.Buffer, dstOffset int64, rsrc runtime.Buffer, srcOffset, size int64) error {
	dst, err := devBuffer(rdst)
	if err != nil {
		return err
	}
	src, err := devBuffer(rsrc)
	if err != nil {
		return err
	}
	if dstOffset < 0 || srcOffset < 0 || size < 0 {
		return fmt.Errorf("gpu: copy of %d bytes from offset %d to %d: negative", size, srcOffset, dstOffset)
	}
	if err := checkRange(dst, uint64(dstOffset), uint64(size)); err != nil {
		return err
	}
	if err := checkRange(src, uint64(srcOffset), uint64(size)); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	d := b.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return d.oneShot(func(cb vk.CommandBuffer) {
		d.copyBuffer(cb, src.blk.buf, dst.blk.buf, src.off+uint64(srcOffset), dst.off+uint64(dstOffset), uint64(size))
	})
}

// HostVisible reports whether the host addresses the buffer's memory directly: on
// devices whose memory is the host's (integrated GPUs, lavapipe).
func (b *Backend) HostVisible(rb runtime.Buffer) bool {
	buf, err := devBuffer(rb)
	return err == nil && buf.blk.mapped != nil
}

// UploadAsync copies src into the buffer at offset without waiting (Device.UploadAsync).
func (b *Backend) UploadAsync(rb runtime.Buffer, offset int64, src []byte) (runtime.Completion, error) {
	buf, err := devBuffer(rb)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("gpu: upload at a negative offset (%d)", offset)
	}
	return b.d.UploadAsync(Copy{Buf: buf, Offset: uint64(offset), Data: src})
}

// DownloadAsync fills dst from the buffer at offset when the event completes.
func (b *Backend) DownloadAsync(rb runtime.Buffer, offset int64, dst []byte) (runtime.Completion, error) {
	buf, err := devBuffer(rb)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, fmt.Errorf("gpu: download at a negative offset (%d)", offset)
	}
	return b.d.DownloadAsync(Copy{Buf: buf, Offset: uint64(offset), Data: dst})
}

// CopyAsync copies between two buffers of the device without waiting.
func (b *Backend) CopyAsync(rdst runtime.Buffer, dstOffset int64, rsrc runtime.Buffer, srcOffset, size int64) (runtime.Completion, error) {
	dst, err := devBuffer(rdst)
	if err != nil {
		return nil, err
	}
	src, err := devBuffer(rsrc)
	if err != nil {
		return nil, err
	}
	if dstOffset < 0 || srcOffset < 0 || size < 0 {
		return nil, fmt.Errorf("gpu: copy of %d bytes from offset %d to %d: negative", size, srcOffset, dstOffset)
	}
	return b.d.CopyAsync(dst, uint64(dstOffset), src, uint64(srcOffset), uint64(size))
}

// Record returns a completion of everything in flight on the device now.
func (b *Backend) Record() (runtime.Completion, error) { return b.d.Record() }

// Start submits the prepared segment without waiting (runtime.AsyncProgram).
func (p *program) Start() (runtime.Completion, error) { return p.plain.start() }
