//go:build !amd64

package cpu

// Without assembly the halving pools run their Go code only.

var poolAVX2, poolAVX512 = false, false

func max2x2Vec(dst, top, bot []float32) int { return 0 }

func maxGrad2x2Vec(dtop, dbot, top, bot, g []float32) int { return 0 }

func maxGrad2x2RunVec(dz, z, g []float32, rows, ow, w int, relu bool) {}

func max2x2RunVec(y, z []float32, rows, ow, w int, relu bool) {}
