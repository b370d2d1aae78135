//go:build !cgo

package openblas

import "errors"

var errNoCgo = errors.New("openblas: not available: gml was built without cgo (CGO_ENABLED=0), which loading OpenBLAS needs")

// Load reports that OpenBLAS cannot be loaded in a build without cgo.
func Load() error { return errNoCgo }

// Available reports false: a build without cgo cannot load OpenBLAS.
func Available() bool { return false }

// Path returns "": nothing is loaded.
func Path() string { return "" }

// Config returns "": nothing is loaded.
func Config() string { return "" }

// Threads returns 0: nothing is loaded.
func Threads() int { return 0 }

// SetNumThreads does nothing.
func SetNumThreads(int) {}

// Sgemm must not be called: Load fails, and package gemm checks it first.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) {
	panic(errNoCgo)
}

// Dgemm must not be called: Load fails, and package gemm checks it first.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int,
	b []float64, ldb int, beta float64, c []float64, ldc int) {
	panic(errNoCgo)
}
