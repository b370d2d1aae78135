//go:build !amd64

package cpu

// Without assembly the halving pools run their Go code only.

func max2x2AVX2(dst, top, bot []float32) int { return 0 }

func maxGrad2x2AVX2(dtop, dbot, top, bot, g []float32) int { return 0 }

var poolAVX2 = false
