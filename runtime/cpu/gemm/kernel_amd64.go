//go:build amd64

package gemm

import (
	"errors"

	"golang.org/x/sys/cpu"
)

// kernelAVX2 is the AVX2+FMA micro-kernel (kernel_amd64.s): it adds the product of a
// packed 6×k A panel and a packed k×16 B panel to the 6×16 tile of c whose rows are ldc
// floats apart. It reads 6k floats of a and 16k of b and touches c[0:5*ldc+16]; the
// caller guarantees those bounds.
//
//go:noescape
func kernelAVX2(k int, a, b, c []float32, ldc int)

// axpyAVX2 adds alpha*x[i] to y[i] for every i < len(y) (kernel_amd64.s); x must hold at
// least len(y) elements, which the caller guarantees.
//
//go:noescape
func axpyAVX2(alpha float32, x, y []float32)

// dotAVX2 returns the sum of x[i]*y[i] over i < len(x) (kernel_amd64.s); y must hold at
// least len(x) elements, which the caller guarantees.
//
//go:noescape
func dotAVX2(x, y []float32) float32

// nativeVector returns the assembly AXPY and dot product when the CPU can run them,
// else nils.
func nativeVector() (axpy func(alpha float32, x, y []float32), dot func(x, y []float32) float32) {
	if _, err := nativeKernel(); err != nil {
		return nil, nil
	}
	return axpyAVX2, dotAVX2
}

// nativeKernel returns the assembly micro-kernel when the CPU can run it, or the reason
// it cannot.
func nativeKernel() (microKernel, error) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return nil, errors.New("gemm: the CPU lacks AVX2 and FMA, which the native kernel needs")
	}
	return kernelAVX2, nil
}
