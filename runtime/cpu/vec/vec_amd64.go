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

//go:noescape
func sgdAVX2(c *SGDConsts, nesterov bool, p, g, vel []float32) int

// asm runs c's assembly at the active level on the slices t and returns how many
// elements it did: whole vectors from the start, up to one holding a lane it leaves to
// the Go code. The calls are direct, so the vectors call.padded keeps on the stack stay
// there (a call through a function value would move them to the heap).
func (c *call) asm(t *[4][]float32) int {
	wide := active.level == AVX512
	switch c.op {
	case opExp:
		if wide {
			return expAVX512(t[0], t[1])
		}
		return expAVX2(t[0], t[1])
	case opExpShiftSum:
		var n int
		var s float64
		if wide {
			n, s = expShiftSumAVX512(t[0], t[1], c.shift)
		} else {
			n, s = expShiftSumAVX2(t[0], t[1], c.shift)
		}
		c.sum += s
		return n
	case opErf:
		if wide {
			return erfAVX512(t[0], t[1])
		}
		return erfAVX2(t[0], t[1])
	case opGelu:
		if wide {
			return geluAVX512(t[0], t[1])
		}
		return geluAVX2(t[0], t[1])
	case opGeluGrad:
		if wide {
			return geluGradAVX512(c.gelu, t[0], t[1], t[2])
		}
		return geluGradAVX2(c.gelu, t[0], t[1], t[2])
	case opAdam:
		return adamAVX2(c.adam, t[0], t[1], t[2], t[3]) // AVX2 at both levels: bound by memory
	case opSGD:
		return sgdAVX2(c.sgd, c.nesterov, t[0], t[1], t[2])
	}
	return 0
}

// asmImpl returns the assembly of level l when the CPU (and the operating system, which
// must save the wider registers) runs it.
func asmImpl(l Level) (impl, bool) {
	switch {
	case l == AVX512 && cpu.X86.HasAVX512F:
		return impl{AVX512, 16, maxAVX512, binaryAVX2, arithRowsAVX2, compareAVX2, where32AVX2, spreadAVX2, reluAVX2, sumAVX2, sumIntoAVX2, addRowsAVX2, sumEachAVX2}, true
	case l == AVX2 && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return impl{AVX2, 8, maxAVX2, binaryAVX2, arithRowsAVX2, compareAVX2, where32AVX2, spreadAVX2, reluAVX2, sumAVX2, sumIntoAVX2, addRowsAVX2, sumEachAVX2}, true
	}
	return impl{}, false
}
