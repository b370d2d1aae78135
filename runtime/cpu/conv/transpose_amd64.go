package conv

import "github.com/gml-dev/gml/runtime/cpu/vec"

// transpose8AVX2 writes dst[j·ldd + i] = src[i·ld + j] for i < 8 and j < n, n a
// multiple of 8 (transpose_amd64.s); the caller guarantees the bounds.
//
//go:noescape
func transpose8AVX2(dst []float32, ldd int, src []float32, ld int, n int)

// transpose8Vec says whether transpose8 runs in assembly: wherever package vec runs
// AVX2 or wider (GML_SIMD=go turns it off). A variable, so tests run both codes.
var transpose8Vec = vec.Active() >= vec.AVX2

// transpose8 writes dst[j·ldd + i] = src[i·ld + j] for i < 8 and j < n, n ≥ 8, in
// assembly: a last group of fewer than eight columns is done again with the seven
// before it (a copy, so writing those twice is harmless).
func transpose8(dst []float32, ldd int, src []float32, ld, n int) {
	_, _ = src[7*ld+n-1], dst[(n-1)*ldd+7] // the assembly trusts its bounds
	transpose8AVX2(dst, ldd, src, ld, n&^7)
	if n%8 != 0 {
		transpose8AVX2(dst[(n-8)*ldd:], ldd, src[n-8:], ld, 8)
	}
}
