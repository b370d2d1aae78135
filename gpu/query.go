package gpu

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vkchain.h"

typedef struct { int32_t sType; void *pNext; uint32_t subgroupSize, stages, ops, quad; } gml_subgroup_props;
typedef struct { int32_t sType; void *pNext; uint32_t maxPerSetDescriptors; uint64_t maxMemoryAllocationSize; } gml_maint3_props;
typedef struct { int32_t sType; void *pNext; uint32_t driverID; char name[256]; char info[256]; uint8_t conformance[4]; } gml_driver_props;
typedef struct { int32_t sType; void *pNext; uint8_t props[1024]; } gml_props2;
typedef struct { int32_t sType; void *pNext; uint32_t maxWorkgroup, maxFlexibleDimension, reservedShared; } gml_coopmat2_props;
typedef struct { int32_t sType; void *pNext; uint32_t m, n, k, a, b, c, d, scope; } gml_coopmat_nv;
typedef struct { int32_t sType; void *pNext; uint32_t m, n, k, a, b, c, result, saturating, scope; } gml_coopmat_khr;

// VkExtensionProperties, filled by vkEnumerateDeviceExtensionProperties.
typedef struct { char name[256]; uint32_t spec; } gml_ext_props;
typedef int32_t (*gml_enum_ext_t)(void *pd, const char *layer, uint32_t *n, gml_ext_props *out);
static int32_t gml_device_extensions(void *fn, void *pd, uint32_t *n, gml_ext_props *out) {
	return ((gml_enum_ext_t)fn)(pd, NULL, n, out);
}

typedef void (*gml_get2_t)(void *pd, void *out);
typedef int32_t (*gml_coop_t)(void *pd, uint32_t *count, void *props);
static void gml_call_get2(void *fn, void *pd, void *out) { ((gml_get2_t)fn)(pd, out); }
static int32_t gml_call_coop(void *fn, void *pd, uint32_t *count, void *props) {
	return ((gml_coop_t)fn)(pd, count, props);
}


typedef struct {
	gml_props2 p2;
	gml_subgroup_props sub;
	gml_maint3_props m3;
	gml_driver_props drv;
	gml_coopmat2_props cm2;
} gml_prop_chain;

static void gml_chain_props(gml_prop_chain *c, int driver, int cm2) {
	memset(c, 0, sizeof(*c));
	c->p2.sType = 1000059001;  // PHYSICAL_DEVICE_PROPERTIES_2
	c->sub.sType = 1000094000; // PHYSICAL_DEVICE_SUBGROUP_PROPERTIES
	c->m3.sType = 1000168000;  // PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES
	c->drv.sType = 1000196000; // PHYSICAL_DEVICE_DRIVER_PROPERTIES
	c->p2.pNext = &c->sub;
	c->sub.pNext = &c->m3;
	c->cm2.sType = 1000593002; // PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV
	void **next = &c->m3.pNext;
	if (driver) { *next = &c->drv; next = &c->drv.pNext; }
	if (cm2) { *next = &c->cm2; next = &c->cm2.pNext; }
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// componentName names a VkComponentTypeKHR value.
func componentName(t uint32) string {
	switch t {
	case 0:
		return "f16"
	case 1:
		return "f32"
	case 2:
		return "f64"
	case 3:
		return "s8"
	case 4:
		return "s16"
	case 5:
		return "s32"
	case 6:
		return "s64"
	case 7:
		return "u8"
	case 8:
		return "u16"
	case 9:
		return "u32"
	case 10:
		return "u64"
	case 1000141000:
		return "bf16"
	}
	return fmt.Sprintf("type%d", t)
}

const scopeSubgroup = 3

func deviceTypeName(t vk.PhysicalDeviceType) string {
	switch t {
	case vk.PhysicalDeviceTypeDiscreteGpu:
		return "discrete"
	case vk.PhysicalDeviceTypeIntegratedGpu:
		return "integrated"
	case vk.PhysicalDeviceTypeVirtualGpu:
		return "virtual"
	case vk.PhysicalDeviceTypeCpu:
		return "cpu"
	}
	return "other"
}

// typeRank orders device types for automatic selection: higher is preferred.
func typeRank(t string) int {
	switch t {
	case "discrete":
		return 4
	case "integrated":
		return 3
	case "virtual":
		return 2
	case "cpu":
		return 1
	}
	return 0
}

func versionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22, (v>>12)&0x3ff, v&0xfff)
}

// queryInfo gathers everything Info reports about one physical device.
func queryInfo(inst vk.Instance, pd vk.PhysicalDevice, index int) (Info, error) {
	var props vk.PhysicalDeviceProperties
	vk.GetPhysicalDeviceProperties(pd, &props)
	props.Deref()
	props.Limits.Deref()
	in := Info{
		Index:                 index,
		Name:                  vk.ToString(props.DeviceName[:]),
		Type:                  deviceTypeName(props.DeviceType),
		APIVersion:            versionString(props.ApiVersion),
		apiVersion:            props.ApiVersion,
		VendorID:              props.VendorID,
		DeviceID:              props.DeviceID,
		MaxStorageBufferRange: uint64(props.Limits.MaxStorageBufferRange),
		SharedMemory:          props.Limits.MaxComputeSharedMemorySize,
		MaxInvocations:        props.Limits.MaxComputeWorkGroupInvocations,
		MaxGroups:             props.Limits.MaxComputeWorkGroupCount,
		TimestampPeriod:       props.Limits.TimestampPeriod,
		extensions:            map[string]bool{},
	}
	// Through our own C call: goki/vulkan's wrapper copies the output array into C memory
	// that a finalizer may free while the driver writes it.
	if fn := instanceProc(inst, "vkEnumerateDeviceExtensionProperties"); fn != nil {
		var n C.uint32_t
		if C.gml_device_extensions(fn, unsafe.Pointer(pd), &n, nil) == 0 && n > 0 {
			exts := (*C.gml_ext_props)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.gml_ext_props{}))))
			defer C.free(unsafe.Pointer(exts))
			if C.gml_device_extensions(fn, unsafe.Pointer(pd), &n, exts) >= 0 {
				for _, e := range unsafe.Slice(exts, n) {
					in.extensions[C.GoString(&e.name[0])] = true
				}
			}
		}
	}
	var mp vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(pd, &mp)
	mp.Deref()
	for i := uint32(0); i < mp.MemoryHeapCount; i++ {
		mp.MemoryHeaps[i].Deref()
		h := mp.MemoryHeaps[i]
		in.Heaps = append(in.Heaps, Heap{Size: uint64(h.Size), DeviceLocal: h.Flags&vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit) != 0})
	}
	if props.ApiVersion < vk.MakeVersion(1, 1, 0) {
		in.Driver = fmt.Sprintf("version %#x", props.DriverVersion)
		return in, nil
	}
	get2 := instanceProc(inst, "vkGetPhysicalDeviceProperties2")
	feat2 := instanceProc(inst, "vkGetPhysicalDeviceFeatures2")
	if get2 == nil || feat2 == nil {
		return in, fmt.Errorf("%w: %s lacks vkGetPhysicalDeviceProperties2", ErrNoVulkan, in.Name)
	}
	pc := (*C.gml_prop_chain)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gml_prop_chain{}))))
	defer C.free(unsafe.Pointer(pc))
	C.gml_chain_props(pc, boolInt(props.ApiVersion >= vk.MakeVersion(1, 2, 0) || in.extensions["VK_KHR_driver_properties"]), boolInt(in.extensions["VK_NV_cooperative_matrix2"]))
	C.gml_call_get2(get2, unsafe.Pointer(pd), unsafe.Pointer(pc))
	in.SubgroupSize = uint32(pc.sub.subgroupSize)
	in.MaxAllocation = uint64(pc.m3.maxMemoryAllocationSize)
	if name := C.GoString(&pc.drv.name[0]); name != "" {
		in.Driver = name + " " + C.GoString(&pc.drv.info[0])
	} else {
		in.Driver = fmt.Sprintf("version %#x", props.DriverVersion)
	}

	fc := queryFeatures(feat2, pd, in)
	defer C.free(unsafe.Pointer(fc))
	in.FP16 = fc.f16.shaderFloat16 != 0
	if in.extensions["VK_KHR_cooperative_matrix"] && fc.khr.coopmat != 0 {
		in.CoopMatKHR = coopShapes(inst, pd, true)
	}
	if in.extensions["VK_NV_cooperative_matrix"] && fc.nv.coopmat != 0 {
		in.CoopMatNV = coopShapes(inst, pd, false)
	}
	in.BF16 = in.extensions["VK_KHR_shader_bfloat16"] && fc.bf16._type != 0 && fc.bf16.coopmat != 0
	// Workgroup-scope matrices loaded through tensor layouts, from 16-bit buffers.
	if in.extensions["VK_NV_cooperative_matrix2"] && fc.cm2.workgroupScope != 0 && fc.cm2.flexibleDimensions != 0 &&
		fc.cm2.tensorAddressing != 0 && fc.khr.coopmat != 0 && fc.s16.storageBuffer16 != 0 && in.FP16 {
		in.CoopMat2MaxWorkgroup, in.CoopMat2MaxDimension = uint32(pc.cm2.maxWorkgroup), uint32(pc.cm2.maxFlexibleDimension)
	}
	return in, nil
}

// queryFeatures returns a C-allocated feature chain filled by the driver, with only the
// structures whose extensions the device has linked in. The caller frees it.
func queryFeatures(feat2 unsafe.Pointer, pd vk.PhysicalDevice, in Info) *C.gml_feature_chain {
	fc := (*C.gml_feature_chain)(C.calloc(1, C.size_t(unsafe.Sizeof(C.gml_feature_chain{}))))
	C.gml_chain_features(fc, boolInt(in.apiVersion >= vk.MakeVersion(1, 1, 0) || in.extensions["VK_KHR_16bit_storage"]),
		boolInt(in.apiVersion >= vk.MakeVersion(1, 2, 0) || in.extensions["VK_KHR_vulkan_memory_model"]),
		boolInt(in.extensions["VK_KHR_cooperative_matrix"]), boolInt(in.extensions["VK_NV_cooperative_matrix"]),
		boolInt(in.extensions["VK_KHR_shader_bfloat16"]), boolInt(in.extensions["VK_NV_cooperative_matrix2"]),
		boolInt(in.extensions[pipelineStatsExt] && pipelineStatsWanted()))
	C.gml_call_get2(feat2, unsafe.Pointer(pd), unsafe.Pointer(fc))
	return fc
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// coopShapes lists the subgroup-scope cooperative-matrix shapes of the KHR or NV extension.
func coopShapes(inst vk.Instance, pd vk.PhysicalDevice, khr bool) []CoopMatShape {
	name, sType, size := "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV", C.int32_t(1000249001), unsafe.Sizeof(C.gml_coopmat_nv{})
	if khr {
		name, sType, size = "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR", 1000506001, unsafe.Sizeof(C.gml_coopmat_khr{})
	}
	fn := instanceProc(inst, name)
	if fn == nil {
		return nil
	}
	var n C.uint32_t
	if C.gml_call_coop(fn, unsafe.Pointer(pd), &n, nil) != 0 || n == 0 {
		return nil
	}
	buf := C.calloc(C.size_t(n), C.size_t(size))
	defer C.free(buf)
	for i := 0; i < int(n); i++ {
		(*C.gml_coopmat_nv)(unsafe.Add(buf, uintptr(i)*size)).sType = sType
	}
	if C.gml_call_coop(fn, unsafe.Pointer(pd), &n, buf) != 0 {
		return nil
	}
	var out []CoopMatShape
	for i := 0; i < int(n); i++ {
		p := unsafe.Add(buf, uintptr(i)*size)
		var s CoopMatShape
		if khr {
			c := (*C.gml_coopmat_khr)(p)
			s = CoopMatShape{M: uint32(c.m), N: uint32(c.n), K: uint32(c.k), A: componentName(uint32(c.a)), B: componentName(uint32(c.b)),
				C: componentName(uint32(c.c)), Result: componentName(uint32(c.result)), SubgroupScope: c.scope == scopeSubgroup, SaturatingAccumul: c.saturating != 0}
		} else {
			c := (*C.gml_coopmat_nv)(p)
			s = CoopMatShape{M: uint32(c.m), N: uint32(c.n), K: uint32(c.k), A: componentName(uint32(c.a)), B: componentName(uint32(c.b)),
				C: componentName(uint32(c.c)), Result: componentName(uint32(c.d)), SubgroupScope: c.scope == scopeSubgroup}
		}
		if s.SubgroupScope {
			out = append(out, s)
		}
	}
	return out
}

// HasCoopMat reports whether the device has a subgroup cooperative matrix of the given
// shape and component types through the NV (khr=false) or KHR extension.
func (in Info) HasCoopMat(khr bool, m, n, k uint32, a, c string) bool {
	list := in.CoopMatNV
	if khr {
		list = in.CoopMatKHR
	}
	for _, s := range list {
		if s.M == m && s.N == n && s.K == k && s.A == a && s.B == a && s.C == c && s.Result == c {
			return true
		}
	}
	return false
}
