//go:build !amd64

package cpu

// Without assembly the halving pools run their Go code only.

var poolAVX2 = false

func max2x2Vec(dst, top, bot []float32) int { return 0 }

func maxGrad2x2Vec(dtop, dbot, top, bot, g []float32) int { return 0 }
