//go:build amd64

package gemm

import (
	"errors"

	"golang.org/x/sys/cpu"
)

// kernelAVX2 is the avx2 shape's micro-kernel (6×16, kernel_amd64.s), with the
// contract of kernelFunc.
//
//go:noescape
func kernelAVX2(k int, a []float32, rsA, csA int, b []float32, rsB, offB int, c []float32, ldc int, alpha float32, add bool)

// kernelAVX512 is the avx512 shape's micro-kernel (12×32 over two B panels,
// kernel_avx512_amd64.s), with the contract of kernelFunc.
//
//go:noescape
func kernelAVX512(k int, a []float32, rsA, csA int, b []float32, rsB, offB int, c []float32, ldc int, alpha float32, add bool)

// kernelAVX512Narrow is kernelAVX512 over one B panel (12×16): the shape's narrow form.
//
//go:noescape
func kernelAVX512Narrow(k int, a []float32, rsA, csA int, b []float32, rsB, offB int, c []float32, ldc int, alpha float32, add bool)

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

// transpose4AVX2 writes dst[p·ldd + i] = src[i·ld + p] for i < 4 and p < k, k a
// multiple of 8 (pack_amd64.s); the caller guarantees the bounds.
//
//go:noescape
func transpose4AVX2(dst []float32, ldd int, src []float32, ld int, k int)

// copyPanelsAVX2 copies rows of a B as stored into adjacent packed panels (pack_amd64.s,
// copyPanels); the caller guarantees the bounds.
//
//go:noescape
func copyPanelsAVX2(dst []float32, kb int, src []float32, ld, rows, panels int)

// nativeCopyPanels returns the assembly panel copy when the CPU runs it, else nil.
func nativeCopyPanels() func(dst []float32, kb int, src []float32, ld, rows, panels int) {
	if !hasAVX2 {
		return nil
	}
	return copyPanelsAVX2
}

// nativeTranspose4 returns the assembly transpose of four rows when the CPU runs it, else
// nil.
func nativeTranspose4() func(dst []float32, ldd int, src []float32, ld int, k int) {
	if !hasAVX2 {
		return nil
	}
	return transpose4AVX2
}

// hasAVX2 reports whether the CPU runs the AVX2+FMA code.
var hasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// errNoNative is why Native is unavailable on a CPU without AVX2 and FMA.
var errNoNative = errors.New("gemm: the CPU lacks AVX2 and FMA, which the native kernel needs")

// nativeVector returns the assembly AXPY and dot product when the CPU can run them,
// else nils.
func nativeVector() (axpy func(alpha float32, x, y []float32), dot func(x, y []float32) float32) {
	if !hasAVX2 {
		return nil, nil
	}
	return axpyAVX2, dotAVX2
}

// asmKernel returns the assembly kernel of a shape when the CPU (and the operating
// system, which must save the wider registers) can run it, else nil.
func asmKernel(name string) *kernel {
	var k *kernel
	switch {
	case name == shapeAVX2 && hasAVX2:
		k = &kernel{name: name, full: kernelAVX2, asm: true}
	case name == shapeAVX512 && cpu.X86.HasAVX512F:
		k = &kernel{name: name, full: kernelAVX512, narrow: kernelAVX512Narrow, asm: true}
	default:
		return nil
	}
	k.mr, k.strips, k.tuning = shapeOf(name)
	return k
}
