//go:build arm64

package gemm

import "errors"

// kernelNEON is the neon shape's micro-kernel (6×16, kernel_arm64.s), with the contract
// of kernelFunc. NEON (ASIMD) is part of every arm64 CPU, so it always runs.
//
//go:noescape
func kernelNEON(k int, a []float32, rsA, csA int, b []float32, rsB, offB int, c []float32, ldc int, alpha float32, add bool)

// axpyNEON adds alpha*x[i] to y[i] for every i < len(y) (kernel_arm64.s); x must hold at
// least len(y) elements, which the caller guarantees.
//
//go:noescape
func axpyNEON(alpha float32, x, y []float32)

// dotNEON returns the sum of x[i]*y[i] over i < len(x) (kernel_arm64.s); y must hold at
// least len(x) elements, which the caller guarantees.
//
//go:noescape
func dotNEON(x, y []float32) float32

// errNoNative would say why Native is unavailable; on arm64 the neon kernel always runs,
// so chooseKernel never returns it.
var errNoNative = errors.New("gemm: no arm64 kernel")

// asmKernel returns the assembly kernel of a shape when the CPU runs it: neon, always.
func asmKernel(name string) *kernel {
	if name == shapeNEON {
		k := &kernel{name: name, full: kernelNEON, asm: true}
		k.mr, k.strips, k.tuning = shapeOf(name)
		return k
	}
	return nil
}

// transpose4NEON writes dst[p·ldd + i] = src[i·ld + p] for i < 4 and p < k, k a
// multiple of 8 (pack_arm64.s); the caller guarantees the bounds.
//
//go:noescape
func transpose4NEON(dst []float32, ldd int, src []float32, ld int, k int)

// nativeTranspose4 returns the assembly transpose of four rows.
func nativeTranspose4() func(dst []float32, ldd int, src []float32, ld int, k int) {
	return transpose4NEON
}

// nativeCopyPanels reports that there is no assembly panel copy for this architecture
// (the Go loop of PackB runs).
func nativeCopyPanels() func(dst []float32, kb int, src []float32, ld, rows, panels int) { return nil }

// nativeVector returns the assembly AXPY and dot product of the one-row products.
func nativeVector() (axpy func(alpha float32, x, y []float32), dot func(x, y []float32) float32) {
	return axpyNEON, dotNEON
}
