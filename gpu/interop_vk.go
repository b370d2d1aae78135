package gpu

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// The Vulkan structures of external memory, external semaphores and timeline
// semaphores, laid out as in vulkan_core.h (64-bit non-dispatchable handles).
typedef struct { int32_t sType; void *pNext; } gml_chain_link;
typedef struct { int32_t sType; void *pNext; uint32_t timeline; } gml_timeline_features;
typedef struct { int32_t sType; void *pNext; uint8_t deviceUUID[16], driverUUID[16], deviceLUID[8]; uint32_t nodeMask, luidValid; } gml_id_props;
typedef struct { int32_t sType; void *pNext; uint8_t props[1024]; } gml_props2_only;
typedef struct { int32_t sType; void *pNext; uint32_t features[55]; } gml_features2_only;
typedef struct { int32_t sType; const void *pNext; uint32_t flags, usage, handleType; } gml_ext_buffer_info;
typedef struct { int32_t sType; void *pNext; uint32_t features, exportFrom, compatible; } gml_ext_buffer_props;
typedef struct { int32_t sType; const void *pNext; uint32_t handleType; } gml_ext_sem_info;
typedef struct { int32_t sType; void *pNext; uint32_t exportFrom, compatible, features; } gml_ext_sem_props;
typedef struct { int32_t sType; const void *pNext; uint32_t type; uint64_t initial; } gml_sem_type_info;
typedef struct { int32_t sType; const void *pNext; uint32_t handleTypes; } gml_export_info;
typedef struct { int32_t sType; const void *pNext; uint64_t image, buffer; } gml_dedicated_info;
typedef struct { int32_t sType; const void *pNext; uint32_t flags; } gml_sem_create_info;
typedef struct { int32_t sType; const void *pNext; uint64_t object; uint32_t handleType; } gml_get_fd_info;
typedef struct { int32_t sType; const void *pNext; uint64_t sem, value; } gml_sem_signal_info;
typedef struct { int32_t sType; const void *pNext; uint32_t flags, count; const uint64_t *sems, *values; } gml_sem_wait_info;
typedef struct {
	int32_t sType; const void *pNext;
	uint32_t waitCount; const uint64_t *waits; uint32_t signalCount; const uint64_t *signals;
} gml_timeline_submit;
typedef struct {
	int32_t sType; const void *pNext;
	uint32_t waitCount; const uint64_t *waits; const uint32_t *waitStages;
	uint32_t cbCount; void *const *cbs;
	uint32_t signalCount; const uint64_t *signals;
} gml_submit_info2;

typedef void (*gml_get2_fn)(void *pd, void *out);
typedef void (*gml_ext_buf_fn)(void *pd, const gml_ext_buffer_info *info, gml_ext_buffer_props *out);
typedef void (*gml_ext_sem_fn)(void *pd, const gml_ext_sem_info *info, gml_ext_sem_props *out);
typedef int32_t (*gml_create_sem_fn)(void *dev, const gml_sem_create_info *info, const void *alloc, uint64_t *sem);
typedef void (*gml_destroy_sem_fn)(void *dev, uint64_t sem, const void *alloc);
typedef int32_t (*gml_get_fd_fn)(void *dev, const gml_get_fd_info *info, int *fd);
typedef int32_t (*gml_signal_fn)(void *dev, const gml_sem_signal_info *info);
typedef int32_t (*gml_wait_fn)(void *dev, const gml_sem_wait_info *info, uint64_t timeout);
typedef int32_t (*gml_counter_fn)(void *dev, uint64_t sem, uint64_t *value);
typedef int32_t (*gml_submit_fn)(void *queue, uint32_t n, const gml_submit_info2 *infos, uint64_t fence);

enum { GML_OPAQUE_FD = 1 };

// gml_device_uuid reads VkPhysicalDeviceIDProperties.deviceUUID.
static void gml_device_uuid(void *get2, void *pd, uint8_t *uuid) {
	gml_props2_only p;
	gml_id_props id;
	memset(&p, 0, sizeof p);
	memset(&id, 0, sizeof id);
	p.sType = 1000059001; // PHYSICAL_DEVICE_PROPERTIES_2
	id.sType = 1000071004; // PHYSICAL_DEVICE_ID_PROPERTIES
	p.pNext = &id;
	((gml_get2_fn)get2)(pd, &p);
	memcpy(uuid, id.deviceUUID, 16);
}

// gml_timeline_supported asks whether the device has timeline semaphores.
static int gml_timeline_supported(void *feat2, void *pd) {
	gml_features2_only f;
	gml_timeline_features t;
	memset(&f, 0, sizeof f);
	memset(&t, 0, sizeof t);
	f.sType = 1000059000; // PHYSICAL_DEVICE_FEATURES_2
	t.sType = 1000207000; // PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES
	f.pNext = &t;
	((gml_get2_fn)feat2)(pd, &f);
	return t.timeline != 0;
}

// gml_append_timeline links a structure enabling timeline semaphores to the end of a
// feature chain handed to vkCreateDevice. The caller frees it after the call.
static void *gml_append_timeline(void *chain) {
	gml_timeline_features *t = calloc(1, sizeof *t);
	t->sType = 1000207000;
	t->timeline = 1;
	gml_chain_link *l = chain;
	while (l->pNext != NULL) l = l->pNext;
	l->pNext = t;
	return t;
}

// gml_buffer_export reports how storage buffers export as opaque file descriptors:
// bit 0 dedicated allocation only, bit 1 exportable (VkExternalMemoryFeatureFlagBits).
static uint32_t gml_buffer_export(void *fn, void *pd, uint32_t usage) {
	gml_ext_buffer_info in = {1000071002, NULL, 0, usage, GML_OPAQUE_FD};
	gml_ext_buffer_props out;
	memset(&out, 0, sizeof out);
	out.sType = 1000071003;
	((gml_ext_buf_fn)fn)(pd, &in, &out);
	return out.features;
}

// gml_timeline_export reports whether timeline semaphores export as opaque file
// descriptors (bit 0 of VkExternalSemaphoreFeatureFlags).
static uint32_t gml_timeline_export(void *fn, void *pd) {
	gml_sem_type_info ty = {1000207002, NULL, 1, 0};
	gml_ext_sem_info in = {1000076000, &ty, GML_OPAQUE_FD};
	gml_ext_sem_props out;
	memset(&out, 0, sizeof out);
	out.sType = 1000076001;
	((gml_ext_sem_fn)fn)(pd, &in, &out);
	return out.features;
}

// gml_create_timeline creates a timeline semaphore at value 0, exportable as an opaque
// file descriptor when exportable is set.
static int32_t gml_create_timeline(void *fn, void *dev, int exportable, uint64_t *sem) {
	gml_export_info ex = {1000077000, NULL, GML_OPAQUE_FD}; // EXPORT_SEMAPHORE_CREATE_INFO
	gml_sem_type_info ty = {1000207002, exportable ? &ex : NULL, 1, 0};
	gml_sem_create_info ci = {9, &ty, 0}; // SEMAPHORE_CREATE_INFO
	return ((gml_create_sem_fn)fn)(dev, &ci, NULL, sem);
}

static void gml_destroy_semaphore(void *fn, void *dev, uint64_t sem) {
	((gml_destroy_sem_fn)fn)(dev, sem, NULL);
}

// gml_export_fd exports device memory (memory != 0) or a semaphore as an opaque fd.
static int32_t gml_export_fd(void *fn, void *dev, uint64_t object, int memory, int *fd) {
	gml_get_fd_info in = {memory ? 1000074002 : 1000079001, NULL, object, GML_OPAQUE_FD};
	return ((gml_get_fd_fn)fn)(dev, &in, fd);
}

static int32_t gml_signal_semaphore(void *fn, void *dev, uint64_t sem, uint64_t value) {
	gml_sem_signal_info in = {1000207005, NULL, sem, value};
	return ((gml_signal_fn)fn)(dev, &in);
}

static int32_t gml_wait_semaphore(void *fn, void *dev, uint64_t sem, uint64_t value, uint64_t timeout) {
	gml_sem_wait_info in = {1000207004, NULL, 0, 1, &sem, &value};
	return ((gml_wait_fn)fn)(dev, &in, timeout);
}

static int32_t gml_semaphore_value(void *fn, void *dev, uint64_t sem, uint64_t *value) {
	return ((gml_counter_fn)fn)(dev, sem, value);
}

// gml_buffer_export_chain allocates the pNext structure that makes a buffer exportable
// as an opaque fd, for vkCreateBuffer.
static void *gml_buffer_export_chain(void) {
	gml_export_info *b = calloc(1, sizeof *b);
	b->sType = 1000072000; // EXTERNAL_MEMORY_BUFFER_CREATE_INFO
	b->handleTypes = GML_OPAQUE_FD;
	return b;
}

// gml_memory_export_chain allocates the pNext structures that make memory exportable,
// for vkAllocateMemory: a dedicated allocation of buffer when dedicated is set.
static void *gml_memory_export_chain(int dedicated, uint64_t buffer) {
	gml_export_info *m = calloc(1, sizeof *m);
	m->sType = 1000072002; // EXPORT_MEMORY_ALLOCATE_INFO
	m->handleTypes = GML_OPAQUE_FD;
	if (dedicated) {
		gml_dedicated_info *d = calloc(1, sizeof *d);
		d->sType = 1000127001; // MEMORY_DEDICATED_ALLOCATE_INFO
		d->buffer = buffer;
		m->pNext = d;
	}
	return m;
}

// gml_free_chain frees a chain from the functions above.
static void gml_free_chain(void *p) {
	while (p != NULL) {
		gml_chain_link *l = p;
		p = l->pNext;
		free(l);
	}
}

// gml_submit_split submits n command buffers as n batches ordered through the timeline
// semaphore sem: batch i (i > 0) waits for base+2i, and batch i (i < n-1) signals
// base+2i+1, the value an outside engine waits for before it runs and then signals
// base+2i+2. pre (may be NULL) runs first in batch 0 (the deferred uploads). fence is
// signalled when every batch has finished.
static int32_t gml_submit_split(void *fn, void *queue, void *const *cbs, uint32_t n, void *pre, uint64_t sem, uint64_t base, uint64_t fence) {
	gml_submit_info2 *si = calloc(n, sizeof *si);
	gml_timeline_submit *ts = calloc(n, sizeof *ts);
	uint64_t *vals = calloc(2 * n, sizeof *vals);
	void **first = calloc(2, sizeof *first);
	uint32_t stage = 0x00010000; // VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
	first[0] = pre;
	first[1] = cbs[0];
	for (uint32_t i = 0; i < n; i++) {
		ts[i].sType = 1000207003; // TIMELINE_SEMAPHORE_SUBMIT_INFO
		si[i].sType = 4;          // SUBMIT_INFO
		si[i].pNext = &ts[i];
		si[i].cbCount = 1;
		si[i].cbs = &cbs[i];
		if (i == 0 && pre != NULL) {
			si[i].cbCount = 2;
			si[i].cbs = first;
		}
		if (i > 0) {
			vals[2 * i] = base + 2 * i;
			si[i].waitCount = 1;
			si[i].waits = &sem;
			si[i].waitStages = &stage;
			ts[i].waitCount = 1;
			ts[i].waits = &vals[2 * i];
		}
		if (i + 1 < n) {
			vals[2 * i + 1] = base + 2 * i + 1;
			si[i].signalCount = 1;
			si[i].signals = &sem;
			ts[i].signalCount = 1;
			ts[i].signals = &vals[2 * i + 1];
		}
	}
	int32_t res = ((gml_submit_fn)fn)(queue, n, si, fence);
	free(si);
	free(ts);
	free(vals);
	free(first);
	return res;
}

// gml_submit_signal submits command buffers as one batch that signals sem at value
// (when value != 0) and fence.
static int32_t gml_submit_signal(void *fn, void *queue, void *const *cbs, uint32_t n, uint64_t sem, uint64_t value, uint64_t fence) {
	gml_timeline_submit ts = {1000207003, NULL, 0, NULL, value != 0, &value};
	gml_submit_info2 si;
	memset(&si, 0, sizeof si);
	si.sType = 4;
	si.pNext = &ts;
	si.cbCount = n;
	si.cbs = cbs;
	if (value != 0) {
		si.signalCount = 1;
		si.signals = &sem;
	}
	return ((gml_submit_fn)fn)(queue, 1, &si, fence);
}
*/
import "C"

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// The Vulkan half of the interop with an outside product engine (interop.go): device
// UUIDs, exportable memory, and one timeline semaphore per device that orders the
// Vulkan queue and the engine's stream.

// DeviceUUID returns the device's VkPhysicalDeviceIDProperties.deviceUUID, which CUDA
// (and HIP) report for the same GPU; zero when the driver predates Vulkan 1.1.
func deviceUUID(inst vk.Instance, pd vk.PhysicalDevice) [16]byte {
	var u [16]byte
	if fn := instanceProc(inst, "vkGetPhysicalDeviceProperties2"); fn != nil {
		C.gml_device_uuid(fn, unsafe.Pointer(pd), (*C.uint8_t)(unsafe.Pointer(&u[0])))
	}
	return u
}

// closeFD closes a file descriptor that an importer refused (on success it owns it).
func closeFD(fd int) { syscall.Close(fd) }

// exportCaps describes what the device can share with another API.
type exportCaps struct {
	timeline          bool // timeline semaphores (Vulkan 1.2 feature)
	memoryFD          bool // storage buffers export as opaque fds
	dedicated         bool // ... only as dedicated allocations
	timelineFD        bool // timeline semaphores export as opaque fds
	memoryExt, semExt bool // VK_KHR_external_memory_fd and VK_KHR_external_semaphore_fd
}

// deviceUsage is the usage of every device-local block (memory.go).
const deviceUsage = vk.BufferUsageStorageBufferBit | vk.BufferUsageTransferSrcBit | vk.BufferUsageTransferDstBit

// queryExportCaps asks the driver what interop it offers.
func queryExportCaps(inst vk.Instance, pd vk.PhysicalDevice, in Info) exportCaps {
	var c exportCaps
	if in.apiVersion < vk.MakeVersion(1, 2, 0) {
		return c
	}
	if fn := instanceProc(inst, "vkGetPhysicalDeviceFeatures2"); fn != nil {
		c.timeline = C.gml_timeline_supported(fn, unsafe.Pointer(pd)) != 0
	}
	c.memoryExt, c.semExt = in.extensions["VK_KHR_external_memory_fd"], in.extensions["VK_KHR_external_semaphore_fd"]
	if fn := instanceProc(inst, "vkGetPhysicalDeviceExternalBufferProperties"); fn != nil && c.memoryExt {
		f := C.gml_buffer_export(fn, unsafe.Pointer(pd), C.uint32_t(deviceUsage))
		c.memoryFD, c.dedicated = f&2 != 0, f&1 != 0
	}
	if fn := instanceProc(inst, "vkGetPhysicalDeviceExternalSemaphoreProperties"); fn != nil && c.semExt && c.timeline {
		c.timelineFD = C.gml_timeline_export(fn, unsafe.Pointer(pd))&1 != 0
	}
	return c
}

// missing names what an engine needs that the device lacks, or "" when it has it all.
func (c exportCaps) missing() string {
	switch {
	case !c.timeline:
		return "the Vulkan device has no timeline semaphores (Vulkan 1.2)"
	case !c.memoryExt || !c.semExt:
		return "the Vulkan driver lacks VK_KHR_external_memory_fd or VK_KHR_external_semaphore_fd"
	case !c.memoryFD:
		return "the Vulkan driver cannot export storage-buffer memory as a file descriptor"
	case !c.timelineFD:
		return "the Vulkan driver cannot export timeline semaphores as file descriptors"
	}
	return ""
}

// semFuncs are the semaphore and export entry points, looked up once per device.
type semFuncs struct {
	create, destroy, signal, wait, value, memoryFD, semaphoreFD unsafe.Pointer
}

func (f *semFuncs) load(inst vk.Instance) error {
	for _, e := range []struct {
		p    *unsafe.Pointer
		name string
		need bool
	}{
		{&f.create, "vkCreateSemaphore", true}, {&f.destroy, "vkDestroySemaphore", true},
		{&f.signal, "vkSignalSemaphore", true}, {&f.wait, "vkWaitSemaphores", true},
		{&f.value, "vkGetSemaphoreCounterValue", true},
		{&f.memoryFD, "vkGetMemoryFdKHR", false}, {&f.semaphoreFD, "vkGetSemaphoreFdKHR", false},
	} {
		if *e.p = instanceProc(inst, e.name); *e.p == nil && e.need {
			return fmt.Errorf("gpu: the Vulkan loader has no %s", e.name)
		}
	}
	return nil
}

// timeline is a device's timeline semaphore shared with an outside engine.
type timeline struct {
	d   *Device
	fn  semFuncs
	sem C.uint64_t
	// next is the base value of the next split run: every run uses values above it.
	next uint64
}

// newTimeline creates the device's timeline semaphore, exportable when asked.
func newTimeline(d *Device, exportable bool) (*timeline, error) {
	t := &timeline{d: d}
	if err := t.fn.load(d.inst); err != nil {
		return nil, err
	}
	ex := C.int(0)
	if exportable {
		ex = 1
	}
	if err := check(vk.Result(C.gml_create_timeline(t.fn.create, unsafe.Pointer(d.dev), ex, &t.sem)), "vkCreateSemaphore (timeline)"); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *timeline) destroy() {
	C.gml_destroy_semaphore(t.fn.destroy, unsafe.Pointer(t.d.dev), t.sem)
}

// exportFD returns a file descriptor for the semaphore; the importer owns it.
func (t *timeline) exportFD() (int, error) {
	if t.fn.semaphoreFD == nil {
		return -1, fmt.Errorf("gpu: the Vulkan loader has no vkGetSemaphoreFdKHR")
	}
	var fd C.int
	if err := check(vk.Result(C.gml_export_fd(t.fn.semaphoreFD, unsafe.Pointer(t.d.dev), t.sem, 0, &fd)), "vkGetSemaphoreFdKHR"); err != nil {
		return -1, err
	}
	return int(fd), nil
}

// signal sets the semaphore's value from the host.
func (t *timeline) signal(v uint64) error {
	return check(vk.Result(C.gml_signal_semaphore(t.fn.signal, unsafe.Pointer(t.d.dev), t.sem, C.uint64_t(v))), "vkSignalSemaphore")
}

// value reads the semaphore's current value.
func (t *timeline) value() (uint64, error) {
	var v C.uint64_t
	err := check(vk.Result(C.gml_semaphore_value(t.fn.value, unsafe.Pointer(t.d.dev), t.sem, &v)), "vkGetSemaphoreCounterValue")
	return uint64(v), err
}

// wait blocks until the semaphore reaches v or timeout passes; it reports whether it did.
func (t *timeline) wait(v uint64, timeout time.Duration) (bool, error) {
	res := vk.Result(C.gml_wait_semaphore(t.fn.wait, unsafe.Pointer(t.d.dev), t.sem, C.uint64_t(v), C.uint64_t(timeout.Nanoseconds())))
	if res == vk.Timeout {
		return false, nil
	}
	return res == vk.Success, check(res, "vkWaitSemaphores")
}

// exportMemoryFD returns a file descriptor for a block's memory; the importer owns it.
func (d *Device) exportMemoryFD(b *block) (int, error) {
	if d.fast == nil || d.fast.tl == nil || d.fast.tl.fn.memoryFD == nil {
		return -1, fmt.Errorf("gpu: the Vulkan loader has no vkGetMemoryFdKHR")
	}
	if !b.exported {
		return -1, fmt.Errorf("gpu: block %d was not allocated exportable", b.id)
	}
	var fd C.int
	if err := check(vk.Result(C.gml_export_fd(d.fast.tl.fn.memoryFD, unsafe.Pointer(d.dev), handle(b.mem), 1, &fd)), "vkGetMemoryFdKHR"); err != nil {
		return -1, err
	}
	return int(fd), nil
}

// bufferExportChain returns the pNext structure that makes a new block's buffer
// exportable, or nil when device memory is not shared. Free it with freeChain.
func (d *Device) bufferExportChain() unsafe.Pointer {
	if d.fast == nil || !d.fast.exportMemory {
		return nil
	}
	return C.gml_buffer_export_chain()
}

// memoryExportChain is bufferExportChain's counterpart for vkAllocateMemory of the
// memory bound to buf.
func (d *Device) memoryExportChain(buf vk.Buffer) unsafe.Pointer {
	if d.fast == nil || !d.fast.exportMemory {
		return nil
	}
	return C.gml_memory_export_chain(boolInt(d.fast.caps.dedicated), handle(buf))
}

// freeChain frees a chain from bufferExportChain or memoryExportChain (nil is a no-op).
func freeChain(p unsafe.Pointer) { C.gml_free_chain(p) }

// appendTimelineFeature enables timeline semaphores in a feature chain about to be
// handed to vkCreateDevice, where the device has them; free the result after the call.
func appendTimelineFeature(chain unsafe.Pointer, inst vk.Instance, pd vk.PhysicalDevice, in Info) unsafe.Pointer {
	if in.apiVersion < vk.MakeVersion(1, 2, 0) {
		return nil
	}
	fn := instanceProc(inst, "vkGetPhysicalDeviceFeatures2")
	if fn == nil || C.gml_timeline_supported(fn, unsafe.Pointer(pd)) == 0 {
		return nil
	}
	return C.gml_append_timeline(chain)
}

// submitSplit submits a split recording's command buffers as batches ordered through
// the timeline from base (see gml_submit_split), with pre (the deferred uploads, or
// nil) ahead of the first. d.mu must be held.
func (d *Device) submitSplit(cbs []vk.CommandBuffer, pre vk.CommandBuffer, base uint64) error {
	arr := commandBufferArray(cbs)
	defer C.free(unsafe.Pointer(arr))
	res := C.gml_submit_split(d.fn.queueSubmit, unsafe.Pointer(d.queue), arr, C.uint32_t(len(cbs)), unsafe.Pointer(pre), d.fast.tl.sem, C.uint64_t(base), handle(d.fence))
	return check(vk.Result(res), "vkQueueSubmit (split)")
}

// submitSignal submits command buffers as one batch that signals the timeline at value
// (none when 0) and the device's fence. d.mu must be held.
func (d *Device) submitSignal(cbs []vk.CommandBuffer, value uint64) error {
	arr := commandBufferArray(cbs)
	defer C.free(unsafe.Pointer(arr))
	res := C.gml_submit_signal(d.fn.queueSubmit, unsafe.Pointer(d.queue), arr, C.uint32_t(len(cbs)), d.fast.tl.sem, C.uint64_t(value), handle(d.fence))
	return check(vk.Result(res), "vkQueueSubmit")
}
