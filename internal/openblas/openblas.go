//go:build cgo

package openblas

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

typedef void (*gml_sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
	const float *, int, float, float *, int);
typedef void (*gml_dgemm_fn)(int, int, int, int, int, int, double, const double *, int,
	const double *, int, double, double *, int);
typedef void (*gml_threads_fn)(int);
typedef int (*gml_get_threads_fn)(void);
typedef char *(*gml_config_fn)(void);

static void gml_call_sgemm(void *f, int ta, int tb, int m, int n, int k, float alpha,
	const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc) {
	((gml_sgemm_fn)f)(101, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static void gml_call_dgemm(void *f, int ta, int tb, int m, int n, int k, double alpha,
	const double *a, int lda, const double *b, int ldb, double beta, double *c, int ldc) {
	((gml_dgemm_fn)f)(101, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static void gml_call_threads(void *f, int n) { ((gml_threads_fn)f)(n); }

static int gml_call_get_threads(void *f) { return ((gml_get_threads_fn)f)(); }

static const char *gml_call_config(void *f) { return ((gml_config_fn)f)(); }
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// candidates are the shared objects tried in order. The Debian alternatives path for the
// reference BLAS interface comes last and is accepted only when it turns out to be
// OpenBLAS (it exports openblas_get_config).
var candidates = []string{
	"libopenblas.so.0",
	"libopenblas.so",
	"/usr/lib/x86_64-linux-gnu/libblas.so.3",
}

// cblasNoTrans and cblasTrans are the CBLAS_TRANSPOSE values of cblas.h.
const (
	cblasNoTrans = 111
	cblasTrans   = 112
)

// library holds the resolved entry points of a loaded OpenBLAS.
type library struct {
	path       string
	config     string
	sgemm      unsafe.Pointer
	dgemm      unsafe.Pointer
	setThreads unsafe.Pointer
	getThreads unsafe.Pointer
}

var (
	loadOnce sync.Once
	lib      *library
	loadErr  error
)

// Load opens OpenBLAS once and returns nil when it is usable, or an error naming every
// library that was tried and why each was rejected. Later calls return the same result.
// On success the thread count is set to runtime.NumCPU().
func Load() error {
	loadOnce.Do(func() {
		var reasons []string
		for _, path := range candidates {
			l, err := open(path)
			if err == nil {
				lib = l
				SetNumThreads(runtime.NumCPU())
				return
			}
			reasons = append(reasons, err.Error())
		}
		loadErr = errors.New("openblas: not available (install Debian's libopenblas0): " +
			strings.Join(reasons, "; "))
	})
	return loadErr
}

// Available reports whether OpenBLAS could be loaded.
func Available() bool { return Load() == nil }

// Path returns the file name OpenBLAS was loaded from, or "" when it is not loaded.
func Path() string {
	if Load() != nil {
		return ""
	}
	return lib.path
}

// Config returns OpenBLAS's build description (version, target core, threading), or ""
// when it is not loaded.
func Config() string {
	if Load() != nil {
		return ""
	}
	return lib.config
}

// open dlopens one candidate and resolves the entry points gml uses.
func open(path string) (*library, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	handle := C.dlopen(cpath, C.RTLD_NOW|C.RTLD_LOCAL)
	if handle == nil {
		return nil, fmt.Errorf("%s: %s", path, C.GoString(C.dlerror()))
	}
	l := &library{path: path}
	syms := []struct {
		name string
		dst  *unsafe.Pointer
	}{
		{"openblas_get_config", nil},
		{"cblas_sgemm", &l.sgemm},
		{"cblas_dgemm", &l.dgemm},
		{"openblas_set_num_threads", &l.setThreads},
		{"openblas_get_num_threads", &l.getThreads},
	}
	var configFn unsafe.Pointer
	for i, s := range syms {
		cname := C.CString(s.name)
		p := C.dlsym(handle, cname)
		C.free(unsafe.Pointer(cname))
		if p == nil {
			C.dlclose(handle)
			if i == 0 {
				return nil, fmt.Errorf("%s: not OpenBLAS (no openblas_get_config)", path)
			}
			return nil, fmt.Errorf("%s: symbol %s missing", path, s.name)
		}
		if s.dst == nil {
			configFn = p
		} else {
			*s.dst = p
		}
	}
	l.config = C.GoString(C.gml_call_config(configFn))
	return l, nil
}

// SetNumThreads sets the number of threads OpenBLAS uses; it does nothing when OpenBLAS
// is not loaded.
func SetNumThreads(n int) {
	if lib == nil || n < 1 {
		return
	}
	C.gml_call_threads(lib.setThreads, C.int(n))
}

// Threads returns the number of threads OpenBLAS uses, or 0 when it is not loaded.
func Threads() int {
	if Load() != nil {
		return 0
	}
	return int(C.gml_call_get_threads(lib.getThreads))
}

func trans(t bool) C.int {
	if t {
		return cblasTrans
	}
	return cblasNoTrans
}

// Sgemm computes C = alpha*op(A)*op(B) + beta*C in row-major order with cblas_sgemm.
// The caller must have checked the dimensions and slice lengths (package gemm does) and
// that OpenBLAS is loaded; a is read m×k (k×m when transA), b k×n (n×k when transB).
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	C.gml_call_sgemm(lib.sgemm, trans(transA), trans(transB), C.int(m), C.int(n), C.int(k),
		C.float(alpha), (*C.float)(first(a)), C.int(lda), (*C.float)(first(b)), C.int(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.int(ldc))
}

// Dgemm is Sgemm for float64 with cblas_dgemm, under the same preconditions.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int,
	b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	C.gml_call_dgemm(lib.dgemm, trans(transA), trans(transB), C.int(m), C.int(n), C.int(k),
		C.double(alpha), (*C.double)(first(a)), C.int(lda), (*C.double)(first(b)), C.int(ldb),
		C.double(beta), (*C.double)(unsafe.Pointer(&c[0])), C.int(ldc))
}

// first returns a pointer to the first element of s, or nil for an empty slice (k == 0,
// where BLAS reads nothing).
func first[T float32 | float64](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}
