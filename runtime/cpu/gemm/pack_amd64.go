package gemm

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
