// The libcudart and libcublasLt entry points gml calls, by index into tables that
// cuda.go fills from dlsym at run time (gml builds without CUDA's headers or
// libraries). Shared by cuda.go, which loads them, and cuda_engine.go, which calls them.
#include <stddef.h>
#include <stdint.h>

enum {
	CU_DEVICE_COUNT, CU_DEVICE_PROPERTIES, CU_SET_DEVICE, CU_RUNTIME_VERSION, CU_DRIVER_VERSION,
	CU_ERROR_STRING, CU_STREAM_CREATE, CU_STREAM_SYNC, CU_STREAM_QUERY, CU_STREAM_DESTROY,
	CU_MALLOC, CU_FREE, CU_IMPORT_MEMORY, CU_MAPPED_BUFFER, CU_DESTROY_MEMORY,
	CU_IMPORT_SEMAPHORE, CU_SIGNAL_SEMAPHORES, CU_WAIT_SEMAPHORES, CU_DESTROY_SEMAPHORE,
	CU_EVENT_CREATE, CU_EVENT_RECORD, CU_EVENT_ELAPSED, CU_EVENT_DESTROY, CU_GET_LAST_ERROR,
	CU_COUNT
};
enum {
	LT_VERSION, LT_CREATE, LT_DESTROY, LT_DESC_CREATE, LT_DESC_DESTROY, LT_DESC_SET,
	LT_LAYOUT_CREATE, LT_LAYOUT_DESTROY, LT_LAYOUT_SET, LT_PREF_CREATE, LT_PREF_DESTROY,
	LT_PREF_SET, LT_HEURISTIC, LT_MATMUL, LT_COUNT
};

// Defined in cuda.go's preamble.
extern void *gml_cu[CU_COUNT];
extern void *gml_lt[LT_COUNT];
