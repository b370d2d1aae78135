//go:build !amd64

package gemm

// nativeCopyStrips reports that there is no assembly strip copy for this architecture.
func nativeCopyStrips() func(dst []float32, kb int, src []float32, ld, rows, width, strips int) {
	return nil
}
