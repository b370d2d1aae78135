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

// nativeKernel returns the assembly micro-kernel when the CPU can run it, or the reason
// it cannot.
func nativeKernel() (microKernel, error) {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		return nil, errors.New("gemm: the CPU lacks AVX2 and FMA, which the native kernel needs")
	}
	return kernelAVX2, nil
}
