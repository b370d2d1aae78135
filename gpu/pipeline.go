package gpu

/*
#include <stdlib.h>
#include <stdint.h>
#include <stddef.h>

// The Vulkan structs of compute pipeline creation, laid out as in vulkan_core.h (64-bit
// non-dispatchable handles).
typedef struct { uint32_t constantID, offset; size_t size; } gml_spec_entry;
typedef struct { uint32_t count; const gml_spec_entry *entries; size_t dataSize; const void *data; } gml_spec_info;
typedef struct { int32_t sType; const void *pNext; uint32_t flags, stage; uint64_t module; const char *name; const gml_spec_info *spec; } gml_stage_info;
typedef struct { int32_t sType; const void *pNext; uint32_t flags; gml_stage_info stage; uint64_t layout, base; int32_t baseIndex; } gml_compute_info;
typedef int32_t (*gml_create_compute_t)(void *device, uint64_t cache, uint32_t n, const gml_compute_info *infos, const void *alloc, uint64_t *pipes);

// gml_create_compute builds one compute pipeline whose specialisation constant i is
// spec[i]. Every struct lives on this C stack for the whole call.
static int32_t gml_create_compute(void *fn, void *device, uint64_t cache, uint64_t module, uint64_t layout, const uint32_t *spec, uint32_t n, uint32_t flags, uint64_t *pipe) {
	gml_spec_entry entries[n];
	for (uint32_t i = 0; i < n; i++) {
		entries[i].constantID = i;
		entries[i].offset = 4 * i;
		entries[i].size = 4;
	}
	gml_spec_info si = {n, entries, 4 * (size_t)n, spec};
	gml_compute_info ci = {0};
	ci.sType = 29;       // VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO
	ci.flags = flags;
	ci.stage.sType = 18; // VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
	ci.stage.stage = 0x20; // VK_SHADER_STAGE_COMPUTE_BIT
	ci.stage.module = module;
	ci.stage.name = "main";
	ci.stage.spec = &si;
	ci.layout = layout;
	ci.baseIndex = -1;
	return ((gml_create_compute_t)fn)(device, cache, 1, &ci, NULL, pipe);
}

// Descriptor set allocation and writes, laid out as in vulkan_core.h.
typedef struct { int32_t sType; const void *pNext; uint64_t pool; uint32_t count; const uint64_t *layouts; } gml_set_alloc_info;
typedef struct { uint64_t buf, off, range; } gml_buffer_info;
typedef struct {
	int32_t sType; const void *pNext; uint64_t set;
	uint32_t binding, element, count, type;
	const void *images; const gml_buffer_info *buffers; const void *views;
} gml_write_set;
typedef int32_t (*gml_alloc_sets_t)(void *device, const gml_set_alloc_info *info, uint64_t *sets);
typedef void (*gml_update_sets_t)(void *device, uint32_t nwrite, const gml_write_set *writes, uint32_t ncopy, const void *copies);

static int32_t gml_alloc_set(void *fn, void *device, uint64_t pool, uint64_t layout, uint64_t *set) {
	gml_set_alloc_info ai = {34, NULL, pool, 1, &layout}; // VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO
	return ((gml_alloc_sets_t)fn)(device, &ai, set);
}

// gml_bind_buffers points binding i of set at the whole of storage buffer bufs[i].
static void gml_bind_buffers(void *fn, void *device, uint64_t set, const uint64_t *bufs, uint32_t n) {
	gml_buffer_info infos[n];
	gml_write_set writes[n];
	for (uint32_t i = 0; i < n; i++) {
		gml_buffer_info bi = {bufs[i], 0, ~(uint64_t)0}; // VK_WHOLE_SIZE
		infos[i] = bi;
		// VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
		gml_write_set w = {35, NULL, set, i, 0, 1, 7, NULL, &infos[i], NULL};
		writes[i] = w;
	}
	((gml_update_sets_t)fn)(device, n, writes, 0, NULL);
}
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	vk "github.com/goki/vulkan"

	"github.com/gml-dev/gml/shaders"
)

// maxBindings is the most storage buffers one kernel binds: 11 for the backward pass of
// the per-head recurrences (six token vectors, bonus, initial state, output gradient,
// gradients, scratch). Vulkan implementations for desktop GPUs allow far more per stage.
const maxBindings = 12

// pushSize is the push-constant range every pipeline layout declares (Vulkan's minimum).
const pushSize = 128

// Kernel is a compute pipeline: one shader variant with fixed specialisation constants.
// Constant 0 is always the workgroup size along x.
type Kernel struct {
	name   string
	spec   []uint32
	pipe   vk.Pipeline
	layout *layout
	Local  uint32 // workgroup size along x
}

type layout struct {
	nbind  int
	dsl    vk.DescriptorSetLayout
	layout vk.PipelineLayout
}

// kernelKey identifies a pipeline. The specialisation constants are a fixed array, not
// a formatted string: a recording looks up one kernel per dispatch, and a trace compiled
// every step (ag with its trace cache off) records every step.
type kernelKey struct {
	shader string
	nbind  int
	nspec  int
	spec   [maxSpec]uint32
}

// maxSpec bounds a kernel's specialisation constants.
const maxSpec = 16

type setKey struct {
	dsl  vk.DescriptorSetLayout
	bufs [maxBindings]vk.Buffer
}

type cachedSet struct {
	set  vk.DescriptorSet
	pool vk.DescriptorPool
}

// pipelineCache owns shader modules, pipelines, layouts and descriptor sets. Descriptor
// sets bind whole blocks (operand offsets travel in push constants), so a handful of
// sets serves every dispatch and each is written once.
type pipelineCache struct {
	d       *Device
	cache   vk.PipelineCache
	modules map[string]vk.ShaderModule
	layouts map[int]*layout
	kernels map[kernelKey]*Kernel
	failed  map[kernelKey]error // pipelines the driver rejected, not asked for again
	sets    map[setKey]cachedSet
	pools   []vk.DescriptorPool
}

func newPipelineCache(d *Device) *pipelineCache {
	return &pipelineCache{d: d, modules: map[string]vk.ShaderModule{}, layouts: map[int]*layout{}, kernels: map[kernelKey]*Kernel{}, failed: map[kernelKey]error{}, sets: map[setKey]cachedSet{}}
}

func (c *pipelineCache) destroy() {
	dev := c.d.dev
	for _, k := range c.kernels {
		vk.DestroyPipeline(dev, k.pipe, nil)
	}
	for _, l := range c.layouts {
		vk.DestroyPipelineLayout(dev, l.layout, nil)
		vk.DestroyDescriptorSetLayout(dev, l.dsl, nil)
	}
	for _, m := range c.modules {
		vk.DestroyShaderModule(dev, m, nil)
	}
	for _, p := range c.pools {
		vk.DestroyDescriptorPool(dev, p, nil)
	}
	c.kernels, c.layouts, c.modules, c.sets, c.pools = nil, nil, nil, nil, nil
}

func (c *pipelineCache) module(name string) (vk.ShaderModule, error) {
	if m, ok := c.modules[name]; ok {
		return m, nil
	}
	code, err := shaders.SPIRV(name)
	if err != nil {
		return nil, err
	}
	words := make([]uint32, len(code)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	var m vk.ShaderModule
	err = check(vk.CreateShaderModule(c.d.dev, &vk.ShaderModuleCreateInfo{SType: vk.StructureTypeShaderModuleCreateInfo, CodeSize: uint64(len(code)), PCode: words}, nil, &m), "vkCreateShaderModule "+name)
	// goki/vulkan hands the driver the address of words (Go memory) inside its C copy of
	// the info: keep it alive through the call.
	runtime.KeepAlive(words)
	if err != nil {
		return nil, err
	}
	c.modules[name] = m
	return m, nil
}

func (c *pipelineCache) layoutFor(nbind int) (*layout, error) {
	if l, ok := c.layouts[nbind]; ok {
		return l, nil
	}
	binds := make([]vk.DescriptorSetLayoutBinding, nbind)
	for i := range binds {
		binds[i] = vk.DescriptorSetLayoutBinding{Binding: uint32(i), DescriptorType: vk.DescriptorTypeStorageBuffer, DescriptorCount: 1, StageFlags: vk.ShaderStageFlags(vk.ShaderStageComputeBit)}
	}
	var dsl vk.DescriptorSetLayout
	if err := check(vk.CreateDescriptorSetLayout(c.d.dev, &vk.DescriptorSetLayoutCreateInfo{SType: vk.StructureTypeDescriptorSetLayoutCreateInfo, BindingCount: uint32(nbind), PBindings: binds}, nil, &dsl), "vkCreateDescriptorSetLayout"); err != nil {
		return nil, err
	}
	var pl vk.PipelineLayout
	dsls := []vk.DescriptorSetLayout{dsl}
	err := check(vk.CreatePipelineLayout(c.d.dev, &vk.PipelineLayoutCreateInfo{
		SType: vk.StructureTypePipelineLayoutCreateInfo, SetLayoutCount: 1, PSetLayouts: dsls,
		PushConstantRangeCount: 1, PPushConstantRanges: []vk.PushConstantRange{{StageFlags: vk.ShaderStageFlags(vk.ShaderStageComputeBit), Size: pushSize}},
	}, nil, &pl), "vkCreatePipelineLayout")
	runtime.KeepAlive(dsls) // its address is in goki/vulkan's C copy of the info
	if err != nil {
		vk.DestroyDescriptorSetLayout(c.d.dev, dsl, nil)
		return nil, err
	}
	l := &layout{nbind: nbind, dsl: dsl, layout: pl}
	c.layouts[nbind] = l
	return l, nil
}

// Kernel returns the cached pipeline for a shader variant with nbind storage buffers and
// the given specialisation constants (constant i gets spec[i]; spec[0] is the workgroup
// size along x), building it on first use. A pipeline the driver rejects gives the same
// error at once afterwards.
func (d *Device) Kernel(shader string, nbind int, spec ...uint32) (*Kernel, error) {
	if nbind < 1 || nbind > maxBindings || len(spec) == 0 || len(spec) > maxSpec {
		return nil, fmt.Errorf("gpu: kernel %s: need 1..%d bindings and a workgroup size plus at most %d constants", shader, maxBindings, maxSpec-1)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	c := d.pipes
	key := kernelKey{shader: shader, nbind: nbind, nspec: len(spec)}
	copy(key.spec[:], spec)
	if k, ok := c.kernels[key]; ok {
		return k, nil
	}
	if err, ok := c.failed[key]; ok {
		return nil, err
	}
	mod, err := c.module(shader)
	if err != nil {
		return nil, err
	}
	l, err := c.layoutFor(nbind)
	if err != nil {
		return nil, err
	}
	// goki/vulkan's CreateComputePipelines frees its C copy of the create info from a
	// finalizer that may run while the driver still reads it (lavapipe compiles for
	// seconds inside the call), so the pipeline is created through our own C call.
	data := (*C.uint32_t)(C.malloc(C.size_t(4 * len(spec))))
	defer C.free(unsafe.Pointer(data))
	copy(unsafe.Slice((*uint32)(unsafe.Pointer(data)), len(spec)), spec)
	var pipe C.uint64_t
	flags := C.uint32_t(0)
	if d.pipeStats {
		flags = captureStatistics | captureInternals
	}
	res := C.gml_create_compute(d.fn.createComputePipelines, unsafe.Pointer(d.dev), handle(c.cache), handle(mod), handle(l.layout), data, C.uint32_t(len(spec)), flags, &pipe)
	if err := check(vk.Result(res), fmt.Sprintf("vkCreateComputePipelines %s %v", shader, spec)); err != nil {
		c.failed[key] = err
		return nil, err
	}
	pipes := []vk.Pipeline{*(*vk.Pipeline)(unsafe.Pointer(&pipe))}
	k := &Kernel{name: shader, spec: spec, pipe: pipes[0], layout: l, Local: spec[0]}
	c.kernels[key] = k
	return k, nil
}

// handle converts a non-dispatchable Vulkan handle (a pointer type in goki/vulkan) to
// the 64-bit value the C API takes.
func handle[T any](h T) C.uint64_t { return *(*C.uint64_t)(unsafe.Pointer(&h)) }

// set returns a descriptor set binding bufs (whole blocks) to l, writing it on first use.
func (c *pipelineCache) set(l *layout, bufs []vk.Buffer) (vk.DescriptorSet, error) {
	key := setKey{dsl: l.dsl}
	copy(key.bufs[:], bufs)
	if s, ok := c.sets[key]; ok {
		return s.set, nil
	}
	var set C.uint64_t
	var pool vk.DescriptorPool
	for attempt := 0; ; attempt++ {
		if len(c.pools) > 0 {
			pool = c.pools[len(c.pools)-1]
			res := vk.Result(C.gml_alloc_set(c.d.fn.allocateDescriptorSets, unsafe.Pointer(c.d.dev), handle(pool), handle(l.dsl), &set))
			if res == vk.Success {
				break
			}
			if attempt > 0 || (res != vk.ErrorOutOfPoolMemory && res != vk.ErrorFragmentedPool) {
				return nil, check(res, "vkAllocateDescriptorSets")
			}
		}
		const sets = 256
		var np vk.DescriptorPool
		err := check(vk.CreateDescriptorPool(c.d.dev, &vk.DescriptorPoolCreateInfo{
			SType: vk.StructureTypeDescriptorPoolCreateInfo, Flags: vk.DescriptorPoolCreateFlags(vk.DescriptorPoolCreateFreeDescriptorSetBit),
			MaxSets: sets, PoolSizeCount: 1, PPoolSizes: []vk.DescriptorPoolSize{{Type: vk.DescriptorTypeStorageBuffer, DescriptorCount: sets * maxBindings}},
		}, nil, &np), "vkCreateDescriptorPool")
		if err != nil {
			return nil, err
		}
		c.pools = append(c.pools, np)
	}
	handles := make([]C.uint64_t, len(bufs))
	for i, b := range bufs {
		handles[i] = handle(b)
	}
	C.gml_bind_buffers(c.d.fn.updateDescriptorSets, unsafe.Pointer(c.d.dev), set, &handles[0], C.uint32_t(len(handles)))
	ds := *(*vk.DescriptorSet)(unsafe.Pointer(&set))
	c.sets[key] = cachedSet{ds, pool}
	return ds, nil
}

// forgetBuffer frees the descriptor sets that bind buf, before buf is destroyed.
func (c *pipelineCache) forgetBuffer(buf vk.Buffer) {
	for k, s := range c.sets {
		for _, b := range k.bufs {
			if b == buf {
				vk.FreeDescriptorSets(c.d.dev, s.pool, 1, &s.set)
				delete(c.sets, k)
				break
			}
		}
	}
}
