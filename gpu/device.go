package gpu

/*
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "vkchain.h"

// VkQueueFamilyProperties as in vulkan_core.h.
typedef struct { uint32_t flags, count, timestampBits, granularity[3]; } gml_queue_family;
typedef void (*gml_queue_families_t)(void *pd, uint32_t *n, gml_queue_family *out);

static void gml_queue_families(void *fn, void *pd, uint32_t *n, gml_queue_family *out) {
	((gml_queue_families_t)fn)(pd, n, out);
}

// gml_keep_wanted clears every feature gml does not use, so that vkCreateDevice enables
// only what shaders need (robust buffer access, for one, costs speed).
// gml_plain_features cuts the chain after the float16 features.
static void gml_plain_features(gml_feature_chain *c) {
	c->f16.pNext = NULL;
	c->f16.shaderInt8 = 0;
}

static void gml_keep_wanted(gml_feature_chain *c, int robust) {
	uint32_t rba = c->f2.features[0];    // robustBufferAccess
	uint32_t int64 = c->f2.features[39]; // shaderInt64
	uint32_t int16 = c->f2.features[40]; // shaderInt16
	memset(c->f2.features, 0, sizeof(c->f2.features));
	c->f2.features[0] = robust ? rba : 0;
	c->f2.features[39] = int64;
	c->f2.features[40] = int16;
	c->f16.shaderInt8 = 0;
	c->s16.uniformAndStorage16 = 0;
	c->s16.pushConstant16 = 0;
	c->s16.inputOutput16 = 0;
	c->mm.chains = 0;
	c->khr.robust = 0;
	c->nv.robust = 0;
	c->bf16.dot = 0;
	c->cm2.reductions = 0;
	c->cm2.conversions = 0;
	c->cm2.perElement = 0;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// Device is an opened Vulkan device with its queue, memory allocator, pipeline cache and
// command pool. All methods are safe for concurrent use; work is serialised on one queue.
type Device struct {
	Info Info

	inst  vk.Instance
	pd    vk.PhysicalDevice
	dev   vk.Device
	queue vk.Queue
	qfam  uint32
	// xq runs asynchronous transfers (async.go): a second queue of the compute family
	// when the family has one, so copies overlap compute; else queue itself.
	xq        vk.Queue
	qcount    uint32 // queues in the compute family
	qtimeBits uint32 // timestampValidBits of the compute family
	async     asyncState

	mu     sync.Mutex
	closed bool
	mem    *allocator
	pipes  *pipelineCache
	pool   vk.CommandPool
	spares []sparePool // released recordings' pools, for the next recorders (recorder.go)
	fence  vk.Fence
	stage  *staging
	timing bool
	errs   *Buffer // the shaders' error word, in host-visible memory (recorder.go)
	// pipeStats: pipelines capture the driver's statistics (GML_VK_PIPELINE_STATS=1
	// on a device with VK_KHR_pipeline_executable_properties; pipestats.go).
	pipeStats bool

	fn vkFuncs // the functions called through our own C shims

	// queuePriority says which global priority GML_VK_QUEUE_PRIORITY got the queue
	// (priority.go): "" for the driver's default.
	queuePriority string

	// fast is the outside product engine (interop.go), nil when there is none;
	// fastReason then says why.
	fast       *fastPath
	fastReason string

	// Deferred uploads (transfer.go).
	pend     *staging
	pending  []pendingCopy
	pendUsed uint64
}

// vkFuncs holds the Vulkan functions gml calls through its own C shims instead of
// goki/vulkan, whose wrappers copy struct arrays into C memory that a finalizer may free
// during the call (and leak the create infos they copy): everything on the recording,
// submission and transfer paths, and the few init calls with that hazard. They are
// looked up once per device.
type vkFuncs struct {
	queueSubmit, createComputePipelines, allocateDescriptorSets, updateDescriptorSets,
	createCommandPool, allocateCommandBuffers, beginCommandBuffer, cmdPipelineBarrier,
	cmdCopyBuffer, queueFamilies unsafe.Pointer
}

// load looks every function up through the loader.
func (f *vkFuncs) load(inst vk.Instance) error {
	for _, e := range []struct {
		p    *unsafe.Pointer
		name string
	}{
		{&f.queueSubmit, "vkQueueSubmit"}, {&f.createComputePipelines, "vkCreateComputePipelines"},
		{&f.allocateDescriptorSets, "vkAllocateDescriptorSets"}, {&f.updateDescriptorSets, "vkUpdateDescriptorSets"},
		{&f.createCommandPool, "vkCreateCommandPool"}, {&f.allocateCommandBuffers, "vkAllocateCommandBuffers"},
		{&f.beginCommandBuffer, "vkBeginCommandBuffer"}, {&f.cmdPipelineBarrier, "vkCmdPipelineBarrier"},
		{&f.cmdCopyBuffer, "vkCmdCopyBuffer"}, {&f.queueFamilies, "vkGetPhysicalDeviceQueueFamilyProperties"},
	} {
		if *e.p = instanceProc(inst, e.name); *e.p == nil {
			return fmt.Errorf("%w: the Vulkan loader has no %s", ErrNoVulkan, e.name)
		}
	}
	return nil
}

func check(res vk.Result, what string) error {
	if res == vk.Success {
		return nil
	}
	if res == vk.ErrorOutOfDeviceMemory || res == vk.ErrorOutOfHostMemory {
		return fmt.Errorf("gpu: %s: out of memory (%v)", what, vk.Error(res))
	}
	return fmt.Errorf("gpu: %s: %v", what, vk.Error(res))
}

// newInstance creates a Vulkan 1.3 instance (the loader clamps to what it supports).
func newInstance() (vk.Instance, error) {
	if err := loadLoader(); err != nil {
		return nil, err
	}
	app := &vk.ApplicationInfo{
		SType:            vk.StructureTypeApplicationInfo,
		PApplicationName: "gml\x00",
		PEngineName:      "gml\x00",
		ApiVersion:       vk.MakeVersion(1, 3, 0),
	}
	var inst vk.Instance
	res := vk.CreateInstance(&vk.InstanceCreateInfo{SType: vk.StructureTypeInstanceCreateInfo, PApplicationInfo: app}, nil, &inst)
	if res == vk.ErrorIncompatibleDriver {
		return nil, fmt.Errorf("%w: the Vulkan loader is older than 1.1 (vkCreateInstance: %v); update libvulkan1", ErrNoVulkan, vk.Error(res))
	}
	if res != vk.Success {
		return nil, fmt.Errorf("%w: vkCreateInstance: %v", ErrNoVulkan, vk.Error(res))
	}
	if err := vk.InitInstance(inst); err != nil {
		vk.DestroyInstance(inst, nil)
		return nil, fmt.Errorf("%w: %v", ErrNoVulkan, err)
	}
	return inst, nil
}

func physicalDevices(inst vk.Instance) ([]vk.PhysicalDevice, []Info, error) {
	var n uint32
	if err := check(vk.EnumeratePhysicalDevices(inst, &n, nil), "vkEnumeratePhysicalDevices"); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNoVulkan, err)
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("%w: the Vulkan loader found no device (install a driver; mesa-vulkan-drivers provides a CPU device)", ErrNoVulkan)
	}
	pds := make([]vk.PhysicalDevice, n)
	if err := check(vk.EnumeratePhysicalDevices(inst, &n, pds), "vkEnumeratePhysicalDevices"); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNoVulkan, err)
	}
	infos := make([]Info, 0, n)
	for i, pd := range pds[:n] {
		in, err := queryInfo(inst, pd, i)
		if err != nil {
			return nil, nil, err
		}
		infos = append(infos, in)
	}
	return pds[:n], infos, nil
}

// Devices lists every Vulkan device the loader reports, in enumeration order. It
// returns an error wrapping ErrNoVulkan when there is no loader or no device.
func Devices() (Infos, error) {
	inst, err := newInstance()
	if err != nil {
		return nil, err
	}
	defer vk.DestroyInstance(inst, nil)
	_, infos, err := physicalDevices(inst)
	return infos, err
}

// choose picks a device: the one GML_VK_DEVICE names (an index or a case-insensitive
// name substring), else the best by type (discrete > integrated > virtual > cpu), then by
// device-local memory. Devices below Vulkan 1.1 are never picked automatically.
func choose(infos []Info, want string) (int, error) {
	if want != "" {
		if i, err := strconv.Atoi(want); err == nil {
			if i < 0 || i >= len(infos) {
				return 0, fmt.Errorf("gpu: GML_VK_DEVICE=%d but there are %d devices (0..%d)", i, len(infos), len(infos)-1)
			}
			return i, nil
		}
		for i, in := range infos {
			if strings.Contains(strings.ToLower(in.Name), strings.ToLower(want)) {
				return i, nil
			}
		}
		names := make([]string, len(infos))
		for i, in := range infos {
			names[i] = strconv.Itoa(i) + ": " + in.Name
		}
		return 0, fmt.Errorf("gpu: GML_VK_DEVICE=%q matches no device (have %s)", want, strings.Join(names, "; "))
	}
	order := make([]int, 0, len(infos))
	for i, in := range infos {
		if in.apiVersion >= vk.MakeVersion(1, 1, 0) {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return 0, fmt.Errorf("%w: every device is older than Vulkan 1.1 (%s is %s); update the driver", ErrNoVulkan, infos[0].Name, infos[0].APIVersion)
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := infos[order[a]], infos[order[b]]
		if typeRank(x.Type) != typeRank(y.Type) {
			return typeRank(x.Type) > typeRank(y.Type)
		}
		return x.DeviceLocalBytes() > y.DeviceLocalBytes()
	})
	return order[0], nil
}

// Open opens the device GML_VK_DEVICE names, or the best one. Its error wraps
// ErrNoVulkan when Vulkan is unusable here, so callers can fall back to the CPU.
func Open() (*Device, error) {
	inst, err := newInstance()
	if err != nil {
		return nil, err
	}
	d, err := openOn(inst, os.Getenv("GML_VK_DEVICE"))
	if err != nil {
		vk.DestroyInstance(inst, nil)
		return nil, err
	}
	return d, nil
}

func openOn(inst vk.Instance, want string) (*Device, error) {
	pds, infos, err := physicalDevices(inst)
	if err != nil {
		return nil, err
	}
	idx, err := choose(infos, want)
	if err != nil {
		return nil, err
	}
	d := &Device{Info: infos[idx], inst: inst, pd: pds[idx]}
	if d.Info.apiVersion < vk.MakeVersion(1, 1, 0) {
		return nil, fmt.Errorf("%w: %s supports only Vulkan %s; gml needs 1.1", ErrNoVulkan, d.Info.Name, d.Info.APIVersion)
	}
	// Before the device exists: an engine needs extensions and exportable memory.
	d.fast, d.fastReason = probeFastPath(inst, d.pd, d.Info)
	if err := d.fn.load(inst); err != nil {
		return nil, err
	}
	if err := d.createDevice(); err != nil {
		return nil, err
	}
	if err := d.init(); err != nil {
		// Open destroys the instance on error; Close must not do it too.
		d.inst = nil
		d.Close()
		return nil, err
	}
	d.initFast()
	return d, nil
}

// computeQueueFamily returns the first queue family with compute and timestamps,
// preferring a compute-only one, and records its queue count and timestamp bits.
func (d *Device) computeQueueFamily() (uint32, error) {
	var n C.uint32_t
	C.gml_queue_families(d.fn.queueFamilies, unsafe.Pointer(d.pd), &n, nil)
	qs := make([]C.gml_queue_family, max(n, 1))
	C.gml_queue_families(d.fn.queueFamilies, unsafe.Pointer(d.pd), &n, &qs[0])
	best, found := uint32(0), false
	for i, q := range qs[:n] {
		flags := vk.QueueFlags(q.flags)
		if flags&vk.QueueFlags(vk.QueueComputeBit) == 0 || q.timestampBits == 0 && found {
			continue
		}
		if !found || flags&vk.QueueFlags(vk.QueueGraphicsBit) != 0 {
			if !found {
				best, found = uint32(i), true
			}
			continue
		}
		best = uint32(i)
	}
	if !found {
		return 0, fmt.Errorf("%w: the device has no compute queue", ErrNoVulkan)
	}
	d.qcount, d.qtimeBits = uint32(qs[best].count), uint32(qs[best].timestampBits)
	return best, nil
}

func (d *Device) createDevice() error {
	qfam, err := d.computeQueueFamily()
	if err != nil {
		return err
	}
	d.qfam = qfam
	in := d.Info
	fc := queryFeatures(instanceProc(d.inst, "vkGetPhysicalDeviceFeatures2"), d.pd, in)
	defer C.free(unsafe.Pointer(fc))
	// On a CPU implementation (lavapipe) device memory is this process's heap, so a
	// shader that indexes past a buffer would corrupt Go's memory and crash far from
	// the cause: bound every access there. GML_VK_ROBUST=1 asks for it on any device.
	robust := C.int(0)
	if in.Type == "cpu" || os.Getenv("GML_VK_ROBUST") == "1" {
		robust = 1
	}
	C.gml_keep_wanted(fc, robust)
	var exts []string
	for _, e := range []string{"VK_KHR_shader_float16_int8", "VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix", "VK_KHR_shader_bfloat16", "VK_NV_cooperative_matrix2"} {
		if in.extensions[e] {
			exts = append(exts, e+"\x00")
		}
	}
	if fc.pexec.info != 0 {
		exts = append(exts, pipelineStatsExt+"\x00")
		d.pipeStats = true
	}
	exts = append(exts, d.fastExtensions()...)
	tl := appendTimelineFeature(unsafe.Pointer(fc), d.inst, d.pd, in)
	defer freeChain(tl)
	// The Vulkan memory model is core from 1.2 (16-bit storage from 1.1, which Open
	// requires).
	if in.apiVersion < vk.MakeVersion(1, 2, 0) && in.extensions["VK_KHR_vulkan_memory_model"] {
		exts = append(exts, "VK_KHR_vulkan_memory_model\x00")
	}
	// Two queues where the family has them: the second carries asynchronous transfers.
	prio := []float32{1, 1}[:min(d.qcount, 2)]
	gp, gpExt, gpWhat := globalPriority(in)
	d.queuePriority = gpWhat
	qinfo := []vk.DeviceQueueCreateInfo{{SType: vk.StructureTypeDeviceQueueCreateInfo, PNext: gp, QueueFamilyIndex: qfam, QueueCount: uint32(len(prio)), PQueuePriorities: prio}}
	if gp != nil {
		defer freeChain(gp)
		exts = append(exts, gpExt)
	}
	info := &vk.DeviceCreateInfo{
		SType:                   vk.StructureTypeDeviceCreateInfo,
		PNext:                   unsafe.Pointer(fc),
		QueueCreateInfoCount:    1,
		PQueueCreateInfos:       qinfo,
		EnabledExtensionCount:   uint32(len(exts)),
		PpEnabledExtensionNames: exts,
	}
	var dev vk.Device
	// goki/vulkan stores the address of prio (Go memory) in its C copy of the info.
	defer runtime.KeepAlive(prio)
	res := vk.CreateDevice(d.pd, info, nil, &dev)
	if res != vk.Success && gp != nil {
		// A priority above the default may be refused (VK_ERROR_NOT_PERMITTED) to a
		// process without the privilege: the queue then keeps the default.
		d.queuePriority = fmt.Sprintf("default (%s refused: %v)", gpWhat, vk.Error(res))
		qinfo[0].PNext = nil
		info.PQueueCreateInfos = qinfo
		info.EnabledExtensionCount, info.PpEnabledExtensionNames = uint32(len(exts)-1), exts[:len(exts)-1]
		res = vk.CreateDevice(d.pd, info, nil, &dev)
	}
	if res != vk.Success {
		// Retry with the plain feature set: a driver that rejects the cooperative-matrix
		// or bfloat16 features still runs the f32 shaders.
		C.gml_plain_features(fc)
		info.PNext = unsafe.Pointer(fc)
		info.EnabledExtensionCount, info.PpEnabledExtensionNames = 0, nil
		if in.extensions["VK_KHR_shader_float16_int8"] {
			info.EnabledExtensionCount, info.PpEnabledExtensionNames = 1, []string{"VK_KHR_shader_float16_int8\x00"}
		}
		if err := check(vk.CreateDevice(d.pd, info, nil, &dev), "vkCreateDevice on "+in.Name); err != nil {
			return fmt.Errorf("%w: %v", ErrNoVulkan, err)
		}
		d.Info.CoopMatKHR, d.Info.CoopMatNV, d.Info.BF16, d.Info.CoopMat2MaxWorkgroup = nil, nil, false, 0
		d.pipeStats = false
		d.fastUnavailable("the Vulkan device was created without its optional features")
	}
	d.dev = dev
	var q vk.Queue
	vk.GetDeviceQueue(dev, qfam, 0, &q)
	d.queue, d.xq = q, q
	if len(prio) > 1 {
		var xq vk.Queue
		vk.GetDeviceQueue(dev, qfam, 1, &xq)
		d.xq = xq
	}
	return nil
}

func (d *Device) init() error {
	pool, err := d.createCommandPool(vk.CommandPoolCreateResetCommandBufferBit)
	if err != nil {
		return err
	}
	d.pool = pool
	var fence vk.Fence
	if err := check(vk.CreateFence(d.dev, &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo}, nil, &fence), "vkCreateFence"); err != nil {
		return err
	}
	d.fence = fence
	d.mem = newAllocator(d)
	d.pipes = newPipelineCache(d)
	d.stage = &staging{d: d}
	d.pend = &staging{d: d}
	buf, mem, p, err := d.hostBuffer(errWordSize, vk.BufferUsageStorageBufferBit, "error word")
	if err != nil {
		return err
	}
	clear(unsafe.Slice((*byte)(p), errWordSize))
	d.errs = &Buffer{d: d, blk: &block{id: -1, mem: mem, buf: buf, size: errWordSize, mapped: p, own: true}, size: errWordSize}
	return nil
}

// ErrClosed is returned by every method of a Device after Close.
var ErrClosed = errors.New("gpu: device is closed")

// Close waits for the device to go idle and frees every object it created. Buffers still
// held by callers become invalid. Close is idempotent.
func (d *Device) Close() error {
	if !d.lockForClose() {
		return fmt.Errorf("gpu: Close: the device is held by a stuck start of %s; left open", d.fast.engine.describe())
	}
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	if d.dev != nil {
		vk.DeviceWaitIdle(d.dev)
		d.closeFast()
		d.closeAsync()
		d.stage.free()
		d.pend.free()
		if d.pipes != nil {
			d.pipes.destroy()
		}
		if d.errs != nil {
			d.freeHostBuffer(d.errs.blk.buf, d.errs.blk.mem)
		}
		if d.mem != nil {
			d.mem.destroy()
		}
		if d.fence != vk.NullFence {
			vk.DestroyFence(d.dev, d.fence, nil)
		}
		for _, s := range d.spares {
			vk.DestroyCommandPool(d.dev, s.pool, nil)
		}
		d.spares = nil
		if d.pool != vk.NullCommandPool {
			vk.DestroyCommandPool(d.dev, d.pool, nil)
		}
		vk.DestroyDevice(d.dev, nil)
	}
	vk.DestroyInstance(d.inst, nil)
	return nil
}
