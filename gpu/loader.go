package gpu

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*gml_pfn)(void);
typedef gml_pfn (*gml_gipa_t)(void *instance, const char *name);

static void *gml_lib;
static gml_gipa_t gml_gipa;

// gml_load opens the Vulkan loader by its runtime name first (libvulkan1 ships only
// libvulkan.so.1), then by the development name. It returns 0 on success.
static int gml_load(char *err, size_t errlen) {
	const char *names[] = {"libvulkan.so.1", "libvulkan.so"};
	err[0] = 0;
	for (int i = 0; i < 2; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h == NULL) {
			const char *e = dlerror();
			if (e != NULL && err[0] == 0) strncpy(err, e, errlen - 1);
			continue;
		}
		void *sym = dlsym(h, "vkGetInstanceProcAddr");
		if (sym == NULL) {
			strncpy(err, "libvulkan has no vkGetInstanceProcAddr", errlen - 1);
			dlclose(h);
			continue;
		}
		gml_lib = h;
		gml_gipa = (gml_gipa_t)sym;
		return 0;
	}
	return -1;
}

static void *gml_gipa_ptr(void) { return (void *)gml_gipa; }

static void *gml_proc(void *instance, const char *name) {
	return (void *)gml_gipa(instance, name);
}

*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	vk "github.com/goki/vulkan"
)

// ErrNoVulkan is wrapped by every error that means "no usable Vulkan here": no loader, no
// device, or a driver too old. Callers fall back to the CPU when errors.Is(err, ErrNoVulkan).
var ErrNoVulkan = errors.New("gpu: no usable Vulkan device")

var (
	loadOnce sync.Once
	loadErr  error
)

// loadLoader opens the Vulkan loader once per process and hands its
// vkGetInstanceProcAddr to the binding.
func loadLoader() error {
	loadOnce.Do(func() {
		var buf [512]C.char
		if C.gml_load(&buf[0], C.size_t(len(buf))) != 0 {
			loadErr = fmt.Errorf("%w: cannot load the Vulkan loader (libvulkan.so.1): %s; install libvulkan1 and a Vulkan driver (mesa-vulkan-drivers for a CPU device)", ErrNoVulkan, C.GoString(&buf[0]))
			return
		}
		vk.SetGetInstanceProcAddr(C.gml_gipa_ptr())
		if err := vk.Init(); err != nil {
			loadErr = fmt.Errorf("%w: initialising the Vulkan loader: %v", ErrNoVulkan, err)
		}
	})
	return loadErr
}

// instanceProc returns an instance-level function pointer, or nil when the loader does
// not know the name.
func instanceProc(inst vk.Instance, name string) unsafe.Pointer {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.gml_proc(unsafe.Pointer(inst), cs)
}
