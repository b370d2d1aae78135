// The Vulkan feature structures gml queries and enables, laid out as in vulkan_core.h
// (the bundled goki/vulkan headers predate several of them). Shared by device.go, which
// creates the device, and query.go, which describes it.
#include <stdint.h>
#include <string.h>

typedef struct { int32_t sType; void *pNext; uint32_t features[55]; } gml_features2;
typedef struct { int32_t sType; void *pNext; uint32_t shaderFloat16, shaderInt8; } gml_f16i8_features;
typedef struct { int32_t sType; void *pNext; uint32_t storageBuffer16, uniformAndStorage16, pushConstant16, inputOutput16; } gml_16bit_features;
typedef struct { int32_t sType; void *pNext; uint32_t model, deviceScope, chains; } gml_memory_model_features;
typedef struct { int32_t sType; void *pNext; uint32_t coopmat, robust; } gml_coopmat_features;
typedef struct { int32_t sType; void *pNext; uint32_t type, dot, coopmat; } gml_bf16_features;
typedef struct {
	int32_t sType; void *pNext;
	uint32_t workgroupScope, flexibleDimensions, reductions, conversions, perElement, tensorAddressing, blockLoads;
} gml_coopmat2_features;
typedef struct { int32_t sType; void *pNext; uint32_t info; } gml_pipeline_exec_features;

// The device features gml enables, queried and then chained into vkCreateDevice.
typedef struct {
	gml_features2 f2;
	gml_f16i8_features f16;
	gml_16bit_features s16;
	gml_memory_model_features mm;
	gml_coopmat_features khr;
	gml_coopmat_features nv;
	gml_bf16_features bf16;
	gml_coopmat2_features cm2;
	gml_pipeline_exec_features pexec;
} gml_feature_chain;

// gml_chain_features links the structures the device knows (core in its API version,
// or by extension) into one chain for vkGetPhysicalDeviceFeatures2.
static void gml_chain_features(gml_feature_chain *c, int s16, int mm, int khr, int nv, int bf16, int cm2, int pexec) {
	memset(c, 0, sizeof(*c));
	c->f2.sType = 1000059000;   // PHYSICAL_DEVICE_FEATURES_2
	c->f16.sType = 1000082000;  // PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES
	c->s16.sType = 1000083000;  // PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES
	c->mm.sType = 1000211000;   // PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES
	c->khr.sType = 1000506000;  // PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR
	c->nv.sType = 1000249000;   // PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV
	c->bf16.sType = 1000141000; // PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR
	c->cm2.sType = 1000593000;  // PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV
	c->pexec.sType = 1000269000; // PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR
	void **next = &c->f2.pNext;
	*next = &c->f16; next = &c->f16.pNext;
	if (s16) { *next = &c->s16; next = &c->s16.pNext; }
	if (mm) { *next = &c->mm; next = &c->mm.pNext; }
	if (khr) { *next = &c->khr; next = &c->khr.pNext; }
	if (nv) { *next = &c->nv; next = &c->nv.pNext; }
	if (bf16) { *next = &c->bf16; next = &c->bf16.pNext; }
	if (cm2) { *next = &c->cm2; next = &c->cm2.pNext; }
	if (pexec) { *next = &c->pexec; next = &c->pexec.pNext; }
}
