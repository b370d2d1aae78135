//go:build amd64

package vec

//go:noescape
func dropoutAVX2(d, x []float32, base, seedHash, threshold uint32, scale float32) int

//go:noescape
func dropoutAVX512(d, x []float32, base, seedHash, threshold uint32, scale float32) int

// dropoutAsm runs the dropout assembly of level l (which the CPU runs: active's level or
// a lower one) over x, or over d for the mask when x is nil.
func dropoutAsm(l Level, d, x []float32, base, seedHash, threshold uint32, scale float32) int {
	switch l {
	case AVX512:
		return dropoutAVX512(d, x, base, seedHash, threshold, scale)
	case AVX2:
		return dropoutAVX2(d, x, base, seedHash, threshold, scale)
	}
	return 0
}
