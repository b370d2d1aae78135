//go:build amd64

package vec

import "golang.org/x/sys/cpu"

// The assembly of vec_amd64.s, with impl's contracts.

//go:noescape
func expAVX2(d, x []float32) int

//go:noescape
func expShiftSumAVX2(d, x []float32, shift float32) (int, float64)

//go:noescape
func erfAVX2(d, x []float32) int

//go:noescape
func geluAVX2(d, x []float32) int

//go:noescape
func geluAVX512(d, x []float32) int

//go:noescape
func geluGradAVX2(c *GeluGradConsts, dx, x, gy []float32) int

//go:noescape
func geluGradAVX512(c *GeluGradConsts, dx, x, gy []float32) int

//go:noescape
func maxAVX2(x []float32) (int, float32, bool)

//go:noescape
func expAVX512(d, x []float32) int

//go:noescape
func expShiftSumAVX512(d, x []float32, shift float32) (int, float64)

//go:noescape
func erfAVX512(d, x []float32) int

//go:noescape
func maxAVX512(x []float32) (int, float32, bool)

//go:noescape
func binaryAVX2(op int, d, a, b []float32, sa, sb int) int

//go:noescape
func compareAVX2(op int, d []byte, a, b []float32, sa, sb int) int

//go:noescape
func where32AVX2(d []uint32, c []byte, a, b []uint32, sa, sb int) int

//go:noescape
func adamAVX2(c *AdamConsts, p, g, m, v []float32) int

//go:noescape
func arithRowsAVX2(op int, d, a, r []float32, rows int, rfirst bool)

//go:noescape
func spreadAVX2(d, v []uint32, row int)

//go:noescape
func reluAVX2(d, x []float32) int

// sumAVX2 is Sum's whole groups, summed by sumEachAVX2 as one row.
func sumAVX2(x []float32) (int, float64) {
	n := len(x) &^ 15
	var d [1]float64
	if n > 0 {
		sumEachAVX2(d[:], x[:n], n)
	}
	return n, d[0]
}

//go:noescape
func sumIntoAVX2(a []float64, x []float32) int

//go:noescape
func sumEachAVX2(d []float64, x []float32, row int)

//go:noescape
func addRowsAVX2(p, x []float32, rows, stride int) int

// asmImpl returns the assembly of level l when the CPU (and the operating system, which
// must save the wider registers) runs it.
func asmImpl(l Level) (impl, bool) {
	switch {
	case l == AVX512 && cpu.X86.HasAVX512F:
		return impl{AVX512, 16, expAVX512, expShiftSumAVX512, erfAVX512, geluAVX512, geluGradAVX512, maxAVX512, binaryAVX2, arithRowsAVX2, compareAVX2, where32AVX2, spreadAVX2, reluAVX2, adamAVX2, sumAVX2, sumIntoAVX2, addRowsAVX2, sumEachAVX2}, true
	case l == AVX2 && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return impl{AVX2, 8, expAVX2, expShiftSumAVX2, erfAVX2, geluAVX2, geluGradAVX2, maxAVX2, binaryAVX2, arithRowsAVX2, compareAVX2, where32AVX2, spreadAVX2, reluAVX2, adamAVX2, sumAVX2, sumIntoAVX2, addRowsAVX2, sumEachAVX2}, true
	}
	return impl{}, false
}
