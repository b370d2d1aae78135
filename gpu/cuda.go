package gpu

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"

// libcudart and libcublasLt are opened at run time, so gml builds and runs without CUDA:
// the entry points are looked up by name into the tables of cuda.h, and the few types
// and constants they take are declared by hand (values from cuda_runtime_api.h,
// driver_types.h and cublasLt.h, stable since CUDA 11.2). Calls go through small
// functions that cast each pointer to its prototype.
void *gml_cu[CU_COUNT];
void *gml_lt[LT_COUNT];

typedef int (*gml_i_pi)(int *);
typedef int (*gml_i_pv_i)(void *, int);
typedef int (*gml_i_i)(int);
typedef const char *(*gml_s_i)(int);
typedef int (*gml_i_v)(void);
typedef size_t (*gml_z_v)(void);

static void *gml_dlopen(const char *path, char *err, size_t n) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		strncpy(err, e ? e : "dlopen failed", n - 1);
		err[n - 1] = 0;
	}
	return h;
}

static void *gml_dlsym(void *h, const char *name) { return dlsym(h, name); }
static void gml_dlclose(void *h) { dlclose(h); }
static void gml_set_cu(int i, void *p) { gml_cu[i] = p; }
static void gml_set_lt(int i, void *p) { gml_lt[i] = p; }

static const char *gml_cu_error(int e) { return ((gml_s_i)gml_cu[CU_ERROR_STRING])(e); }

static int gml_cu_versions(int *runtime, int *driver) {
	int e = ((gml_i_pi)gml_cu[CU_RUNTIME_VERSION])(runtime);
	if (e) return e;
	return ((gml_i_pi)gml_cu[CU_DRIVER_VERSION])(driver);
}

static size_t gml_lt_version(void) { return ((gml_z_v)gml_lt[LT_VERSION])(); }

static int gml_cu_device_count(int *n) { return ((gml_i_pi)gml_cu[CU_DEVICE_COUNT])(n); }

// gml_cu_device_uuid reads cudaDeviceProp.name and .uuid (offsets 0 and 256 in every
// CUDA release); the struct's size varies, so it goes in a generous buffer.
static int gml_cu_device_uuid(int dev, uint8_t *uuid, char *name) {
	char *p = calloc(1, 1 << 14);
	int e = ((gml_i_pv_i)gml_cu[CU_DEVICE_PROPERTIES])(p, dev);
	if (e == 0) {
		memcpy(uuid, p + 256, 16);
		memcpy(name, p, 255);
		name[255] = 0;
	}
	free(p);
	return e;
}
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unsafe"
)

// cudaLib is the process's libcudart and libcublasLt, once opened.
type cudaLib struct {
	cudart, lt           string // the files opened
	runtime, driver, ltV int    // cudaRuntimeGetVersion, cudaDriverGetVersion, cublasLtGetVersion
}

var (
	cudaOnce   sync.Once
	cudaLoaded *cudaLib
	cudaErr    error
)

// The entry points, by table index; a second name is tried when the first is absent
// (CUDA 12 exports the current ABI of a few functions under a _v2 name).
var cudartSymbols = [C.CU_COUNT][2]string{
	C.CU_DEVICE_COUNT: {"cudaGetDeviceCount"}, C.CU_DEVICE_PROPERTIES: {"cudaGetDeviceProperties_v2", "cudaGetDeviceProperties"},
	C.CU_SET_DEVICE: {"cudaSetDevice"}, C.CU_RUNTIME_VERSION: {"cudaRuntimeGetVersion"}, C.CU_DRIVER_VERSION: {"cudaDriverGetVersion"},
	C.CU_ERROR_STRING: {"cudaGetErrorString"},
	C.CU_STREAM_SYNC:  {"cudaStreamSynchronize"}, C.CU_STREAM_QUERY: {"cudaStreamQuery"}, C.CU_STREAM_DESTROY: {"cudaStreamDestroy"},
	C.CU_MALLOC: {"cudaMalloc"}, C.CU_FREE: {"cudaFree"}, C.CU_IMPORT_MEMORY: {"cudaImportExternalMemory"},
	C.CU_MAPPED_BUFFER: {"cudaExternalMemoryGetMappedBuffer"}, C.CU_DESTROY_MEMORY: {"cudaDestroyExternalMemory"},
	C.CU_IMPORT_SEMAPHORE:  {"cudaImportExternalSemaphore"},
	C.CU_SIGNAL_SEMAPHORES: {"cudaSignalExternalSemaphoresAsync_v2", "cudaSignalExternalSemaphoresAsync"},
	C.CU_WAIT_SEMAPHORES:   {"cudaWaitExternalSemaphoresAsync_v2", "cudaWaitExternalSemaphoresAsync"},
	C.CU_DESTROY_SEMAPHORE: {"cudaDestroyExternalSemaphore"}, C.CU_EVENT_CREATE: {"cudaEventCreate"},
	C.CU_EVENT_RECORD: {"cudaEventRecord"}, C.CU_EVENT_ELAPSED: {"cudaEventElapsedTime"}, C.CU_EVENT_DESTROY: {"cudaEventDestroy"},
	C.CU_GET_LAST_ERROR: {"cudaGetLastError"}, C.CU_SET_DEVICE_FLAGS: {"cudaSetDeviceFlags"},
	C.CU_STREAM_PRIORITY_RANGE: {"cudaDeviceGetStreamPriorityRange"}, C.CU_STREAM_CREATE_PRIORITY: {"cudaStreamCreateWithPriority"},
}

var cublasLtSymbols = [C.LT_COUNT]string{
	C.LT_VERSION: "cublasLtGetVersion", C.LT_CREATE: "cublasLtCreate", C.LT_DESTROY: "cublasLtDestroy",
	C.LT_DESC_CREATE: "cublasLtMatmulDescCreate", C.LT_DESC_DESTROY: "cublasLtMatmulDescDestroy",
	C.LT_DESC_SET: "cublasLtMatmulDescSetAttribute", C.LT_LAYOUT_CREATE: "cublasLtMatrixLayoutCreate",
	C.LT_LAYOUT_DESTROY: "cublasLtMatrixLayoutDestroy", C.LT_LAYOUT_SET: "cublasLtMatrixLayoutSetAttribute",
	C.LT_PREF_CREATE: "cublasLtMatmulPreferenceCreate", C.LT_PREF_DESTROY: "cublasLtMatmulPreferenceDestroy",
	C.LT_PREF_SET: "cublasLtMatmulPreferenceSetAttribute", C.LT_HEURISTIC: "cublasLtMatmulAlgoGetHeuristic",
	C.LT_MATMUL: "cublasLtMatmul",
}

// Library names, newest first: CUDA 13, 12 and 11 (which installs libcudart.so.11.0).
var (
	cudartNames   = []string{"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"}
	cublasLtNames = []string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"}
)

// Minimum versions: timeline semaphores are imported from CUDA 11.2 on.
const (
	minCUDARuntime = 11020
	minCublasLt    = 110000
)

// cudaLibDirs lists where gml looks for libcudart and libcublasLt, in order:
//   - GML_CUDA_LIB_DIRS (a path list), an override;
//   - the dynamic linker's own search (""): LD_LIBRARY_PATH, the ldconfig cache
//     (a CUDA toolkit or distribution package), /lib and /usr/lib;
//   - $CUDA_HOME, $CUDA_PATH and /usr/local/cuda, each in lib64 and
//     targets/x86_64-linux/lib;
//   - the NVIDIA Python wheels' nvidia/*/lib folders (nvidia-cublas, nvidia-cuda-runtime,
//     as PyTorch installs them) under the site-packages of $VIRTUAL_ENV, of virtual
//     environments in /opt/*/ (.venv or venv), ~/.local, /usr/local/lib and /usr/lib.
func cudaLibDirs() []string {
	var dirs []string
	if v := os.Getenv("GML_CUDA_LIB_DIRS"); v != "" {
		dirs = append(dirs, filepath.SplitList(v)...)
	}
	dirs = append(dirs, "")
	for _, h := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		if h != "" {
			dirs = append(dirs, filepath.Join(h, "lib64"), filepath.Join(h, "targets/x86_64-linux/lib"))
		}
	}
	var sites []string
	if v := os.Getenv("VIRTUAL_ENV"); v != "" {
		sites = append(sites, v+"/lib/python3*/site-packages")
	}
	sites = append(sites, "/opt/*/.venv/lib/python3*/site-packages", "/opt/*/venv/lib/python3*/site-packages")
	if home, err := os.UserHomeDir(); err == nil {
		sites = append(sites, home+"/.local/lib/python3*/site-packages")
	}
	sites = append(sites, "/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages", "/usr/lib/python3/dist-packages")
	for _, s := range sites {
		found, _ := filepath.Glob(s + "/nvidia/*/lib")
		sort.Strings(found)
		dirs = append(dirs, found...)
	}
	return dirs
}

// openLib opens the first of names found in dirs (a name in dir "" is left to the
// dynamic linker), preferring dir first when it is set. It returns the handle and the
// path, or a nil handle when none opened, with the first error dlopen gave for a file
// that exists.
func openLib(dirs, names []string, prefer string) (unsafe.Pointer, string, string) {
	if prefer != "" {
		dirs = append([]string{prefer}, dirs...)
	}
	var firstErr string
	var buf [512]C.char
	for _, dir := range dirs {
		for _, name := range names {
			path := name
			if dir != "" {
				path = filepath.Join(dir, name)
				if _, err := os.Stat(path); err != nil {
					continue
				}
			}
			cs := C.CString(path)
			h := C.gml_dlopen(cs, &buf[0], C.size_t(len(buf)))
			C.free(unsafe.Pointer(cs))
			if h != nil {
				return h, path, ""
			}
			if msg := C.GoString(&buf[0]); dir != "" && firstErr == "" {
				firstErr = msg
			}
		}
	}
	return nil, "", firstErr
}

// lookup fills a table entry from a handle, trying each name.
func lookup(h unsafe.Pointer, names ...string) unsafe.Pointer {
	for _, n := range names {
		if n == "" {
			continue
		}
		cs := C.CString(n)
		p := C.gml_dlsym(h, cs)
		C.free(unsafe.Pointer(cs))
		if p != nil {
			return p
		}
	}
	return nil
}

// searchedText describes the search for error messages.
const searchedText = "searched GML_CUDA_LIB_DIRS, LD_LIBRARY_PATH and the system's library paths, $CUDA_HOME/lib64, /usr/local/cuda/lib64 and the nvidia/*/lib folders of Python packages"

// loadCUDA opens libcudart and libcublasLt once per process.
func loadCUDA() (*cudaLib, error) {
	cudaOnce.Do(func() { cudaLoaded, cudaErr = openCUDA(cudaLibDirs()) })
	return cudaLoaded, cudaErr
}

func openCUDA(dirs []string) (*cudaLib, error) {
	h, path, why := openLib(dirs, cudartNames, "")
	if h == nil {
		if why != "" {
			return nil, fmt.Errorf("libcudart could not be opened (%s)", why)
		}
		return nil, fmt.Errorf("libcudart not found (%s)", searchedText)
	}
	lib := &cudaLib{cudart: path}
	for i, names := range cudartSymbols {
		p := lookup(h, names[0], names[1])
		if p == nil {
			C.gml_dlclose(h)
			return nil, fmt.Errorf("%s lacks %s (CUDA 11.2 or newer is needed)", path, names[0])
		}
		C.gml_set_cu(C.int(i), p)
	}
	var rt, drv C.int
	if e := C.gml_cu_versions(&rt, &drv); e != 0 {
		return nil, fmt.Errorf("%s: cudaRuntimeGetVersion: %s", path, cudaErrorText(e))
	}
	lib.runtime, lib.driver = int(rt), int(drv)
	switch {
	case lib.runtime < minCUDARuntime:
		return nil, fmt.Errorf("%s is CUDA %s; importing Vulkan semaphores needs 11.2 or newer", path, cudaVersion(lib.runtime))
	case lib.driver == 0:
		return nil, fmt.Errorf("no NVIDIA driver for CUDA (cudaDriverGetVersion reports none)")
	case lib.driver < lib.runtime:
		return nil, fmt.Errorf("the NVIDIA driver supports CUDA %s but %s is CUDA %s; update the driver or put an older CUDA runtime first in GML_CUDA_LIB_DIRS", cudaVersion(lib.driver), path, cudaVersion(lib.runtime))
	}
	// libcublasLt of the runtime's major version first, from the runtime's folder first.
	major := fmt.Sprintf(".so.%d", lib.runtime/1000)
	names := append([]string(nil), cublasLtNames...)
	sort.SliceStable(names, func(i, j int) bool { return strings.HasSuffix(names[i], major) && !strings.HasSuffix(names[j], major) })
	prefer := ""
	if strings.Contains(path, "/") {
		prefer = filepath.Dir(path)
	}
	lh, lpath, why := openLib(dirs, names, prefer)
	if lh == nil {
		if why != "" {
			return nil, fmt.Errorf("libcublasLt could not be opened (%s)", why)
		}
		return nil, fmt.Errorf("libcublasLt not found (libcudart is %s; %s)", path, searchedText)
	}
	lib.lt = lpath
	for i, name := range cublasLtSymbols {
		p := lookup(lh, name)
		if p == nil {
			C.gml_dlclose(lh)
			return nil, fmt.Errorf("%s lacks %s", lpath, name)
		}
		C.gml_set_lt(C.int(i), p)
	}
	lib.ltV = int(C.gml_lt_version())
	if lib.ltV < minCublasLt {
		return nil, fmt.Errorf("%s is version %s; gml needs cuBLASLt 11 or newer", lpath, ltVersion(lib.ltV))
	}
	return lib, nil
}

// cudaVersion renders 12040 as "12.4".
func cudaVersion(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// ltVersion renders cublasLtGetVersion's 130001 as "13.0.1".
func ltVersion(v int) string { return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100) }

func cudaErrorText(e C.int) string {
	if s := C.gml_cu_error(e); s != nil {
		return fmt.Sprintf("%s (cudaError %d)", C.GoString(s), int(e))
	}
	return fmt.Sprintf("cudaError %d", int(e))
}

// describe names the libraries for diagnostics.
func (l *cudaLib) describe() string {
	return fmt.Sprintf("cuBLASLt %s (CUDA runtime %s, driver %s)", ltVersion(l.ltV), cudaVersion(l.runtime), cudaVersion(l.driver))
}

// deviceByUUID returns the CUDA ordinal of the GPU whose UUID is uuid.
func (l *cudaLib) deviceByUUID(uuid [16]byte) (int, error) {
	var n C.int
	if e := C.gml_cu_device_count(&n); e != 0 {
		return -1, fmt.Errorf("cudaGetDeviceCount: %s", cudaErrorText(e))
	}
	var names []string
	for i := 0; i < int(n); i++ {
		var u [16]byte
		var name [256]C.char
		if e := C.gml_cu_device_uuid(C.int(i), (*C.uint8_t)(unsafe.Pointer(&u[0])), &name[0]); e != 0 {
			return -1, fmt.Errorf("cudaGetDeviceProperties(%d): %s", i, cudaErrorText(e))
		}
		if u == uuid {
			return i, nil
		}
		names = append(names, fmt.Sprintf("%d: %s %x", i, C.GoString(&name[0]), u))
	}
	if n == 0 {
		return -1, fmt.Errorf("CUDA sees no device (CUDA_VISIBLE_DEVICES?)")
	}
	return -1, fmt.Errorf("no CUDA device has the Vulkan device's UUID %x (CUDA sees %s)", uuid, strings.Join(names, "; "))
}
