//go:build amd64

package cpu

import "github.com/gml-dev/gml/runtime/cpu/vec"

// The assembly of pool_amd64.s. Each handles the first len(dst) (len(g)) windows rounded
// down to a multiple of 8, reading 2 inputs per window from each of top and bot (which
// must hold them), and returns that count; the caller does the rest in Go.

//go:noescape
func max2x2AVX2(dst, top, bot []float32) int

//go:noescape
func maxGrad2x2AVX2(dtop, dbot, top, bot, g []float32) int

// poolAVX2 says whether the halving pools use the assembly: wherever package vec runs
// AVX2 or wider (GML_SIMD=go turns it off). A variable, so tests run both codes.
var poolAVX2 = vec.Active() >= vec.AVX2
