//go:build amd64

package cpu

import (
	"golang.org/x/sys/cpu"

	"github.com/gml-dev/gml/runtime/cpu/vec"
)

// The assembly of pool_amd64.s. Each handles the first len(dst) (len(g)) windows rounded
// down to a multiple of 8 (of 4 for the x4 forms), reading 2 inputs per window from each
// of top and bot (which must hold them), and returns that count.

//go:noescape
func max2x2AVX2(dst, top, bot []float32) int

//go:noescape
func maxGrad2x2AVX2(dtop, dbot, top, bot, g []float32) int

//go:noescape
func maxGrad2x2RowsAVX512(dz, z, g []float32, rows, ow, w int, relu bool)

//go:noescape
func max2x2RowsAVX512(y, z []float32, rows, ow, w int, relu bool)

//go:noescape
func max2x2x4AVX2(dst, top, bot []float32) int

//go:noescape
func maxGrad2x2x4AVX2(dtop, dbot, top, bot, g []float32) int

// max2x2Vec computes the windows of one output row of a halving max pool in assembly
// and returns how many (all, or 0 when the row has fewer than 4 or poolAVX2 is off).
// A row that is no multiple of the vector's windows takes its last vector again: the
// overlap is computed twice, to the same values.
func max2x2Vec(dst, top, bot []float32) int {
	ow := len(dst)
	switch {
	case !poolAVX2 || ow < 4:
		return 0
	case ow >= 8:
		if max2x2AVX2(dst, top, bot) < ow {
			max2x2AVX2(dst[ow-8:], top[2*(ow-8):], bot[2*(ow-8):])
		}
	default:
		if max2x2x4AVX2(dst, top, bot) < ow {
			max2x2x4AVX2(dst[ow-4:], top[2*(ow-4):], bot[2*(ow-4):])
		}
	}
	return ow
}

// maxGrad2x2Vec is max2x2Vec for the gradient: it writes the two input rows of dtop and
// dbot under the windows of g, and returns how many windows it did (the others are left
// to Go). Unlike max2x2Vec it never redoes windows to cover a ragged end: every window is
// read before it is written and never read again, so dtop and dbot may be top's and bot's
// memory (the fused ReLU gradient of convpool.go writes over the ReLU's input).
func maxGrad2x2Vec(dtop, dbot, top, bot, g []float32) int {
	if !poolAVX2 {
		return 0
	}
	done := maxGrad2x2AVX2(dtop, dbot, top, bot, g)
	if o := done; len(g)-o >= 4 {
		done += maxGrad2x2x4AVX2(dtop[2*o:], dbot[2*o:], top[2*o:], bot[2*o:], g[o:o+4])
	}
	return done
}

// poolAVX2 says whether the halving pools use the assembly: wherever package vec runs
// AVX2 or wider (GML_SIMD=go turns it off). A variable, so tests run both codes.
var poolAVX2 = vec.Active() >= vec.AVX2

// maxGrad2x2RunVec writes the gradient under rows output rows of ow windows whose input
// rows (w elements each, w = 2·ow or 2·ow+1) follow each other in z, into the same
// place in dz, zero where z is not positive when relu is set, in one assembly call.
// Only where poolAVX512 is on.
func maxGrad2x2RunVec(dz, z, g []float32, rows, ow, w int, relu bool) {
	n := 2 * rows * w
	maxGrad2x2RowsAVX512(dz[:n], z[:n], g[:rows*ow], rows, ow, w, relu)
}

// max2x2RunVec is maxGrad2x2RunVec for the forward pass: y gets the windows' maxima
// (with relu, the ReLU of them).
func max2x2RunVec(y, z []float32, rows, ow, w int, relu bool) {
	max2x2RowsAVX512(y[:rows*ow], z[:2*rows*w], rows, ow, w, relu)
}

// poolAVX512 says whether the halving max pool and its gradient run in runs of rows
// (max2x2RowsAVX512, maxGrad2x2RowsAVX512): where package vec runs AVX-512 and the CPU has its 256-bit forms (VL) too.
var poolAVX512 = vec.Active() >= vec.AVX512 && cpu.X86.HasAVX512VL
