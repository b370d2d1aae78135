package gemm

import "golang.org/x/sys/cpu"

// copyStripsAVX2 copies rows of an operand as stored into adjacent strips of width
// floats, 4 <= width <= 16 (pack_amd64.s, copyStrips); the caller guarantees the bounds.
//
//go:noescape
func copyStripsAVX2(dst []float32, kb int, src []float32, ld, rows, width, strips int)

// nativeCopyStrips returns the assembly strip copy when the CPU runs it, else nil.
func nativeCopyStrips() func(dst []float32, kb int, src []float32, ld, rows, width, strips int) {
	if !hasAVX2 {
		return nil
	}
	return copyStripsAVX2
}

// transpose16AVX512 writes dst[p·ldd + i] = src[i·ld + p] for i < rows and p < k, 1 <=
// rows <= 16 and k a multiple of 16 (pack_amd64.s); the caller guarantees the bounds.
//
//go:noescape
func transpose16AVX512(dst []float32, ldd int, src []float32, ld, rows, k int)

// nativeTranspose16 returns the AVX-512 transpose of up to sixteen rows when the CPU
// runs it, else nil.
func nativeTranspose16() func(dst []float32, ldd int, src []float32, ld, rows, k int) {
	if !cpu.X86.HasAVX512F {
		return nil
	}
	return transpose16AVX512
}
