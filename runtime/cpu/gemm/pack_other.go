//go:build !amd64

package gemm

// nativeCopyStrips reports that there is no assembly strip copy for this architecture.
func nativeCopyStrips() func(dst []float32, kb int, src []float32, ld, rows, width, strips int) {
	return nil
}

// nativeTranspose16 reports that there is no sixteen-row transpose for this architecture.
func nativeTranspose16() func(dst []float32, ldd int, src []float32, ld, rows, k int) { return nil }
