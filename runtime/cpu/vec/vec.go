package vec

import (
	"fmt"
	"math"
	"os"
)

// Level is a code path of the slice functions.
type Level uint8

// The levels, narrowest first.
const (
	Go Level = iota
	AVX2
	AVX512
)

var levelNames = [...]string{Go: "go", AVX2: "avx2", AVX512: "avx512"}

// String returns the level's GML_SIMD name.
func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// impl is one level's assembly (but for the kernels call.asm calls directly): each
// function handles whole vectors of width lanes from the start of x and returns how many
// elements it did, stopping early before a vector with a lane it leaves to the Go code.
type impl struct {
	level Level
	width int
	max   func(x []float32) (n int, m float32, nan bool)
	// Elementwise loops, AVX2 at both assembly levels (they are bound by memory).
	arith     func(op int, d, a, b []float32, sa, sb int) int
	arithRows func(op int, d, a, r []float32, rows int, rfirst bool)
	compare   func(op int, d []byte, a, b []float32, sa, sb int) int
	where32   func(d []uint32, c []byte, a, b []uint32, sa, sb int) int
	spread    func(d, v []uint32, row int)
	relu      func(d, x []float32) int
	// Sums (sum.go), AVX2 at both levels.
	sum     func(x []float32) (int, float64)
	sumInto func(a []float64, x []float32) int
	addRows func(p, x []float32, rows, stride int) int
	sumEach func(d []float64, x []float32, row int)
}

// active is the level in use; tests swap it.
var active = choose(os.Getenv("GML_SIMD"))

// choose returns the widest level the CPU runs, capped by a GML_SIMD value.
func choose(env string) impl {
	top := AVX512
	for l, name := range levelNames {
		if env == name {
			top = Level(l)
		}
	}
	for l := top; l > Go; l-- {
		if im, ok := asmImpl(l); ok {
			return im
		}
	}
	return impl{level: Go}
}

// Active returns the level the slice functions run at.
func Active() Level { return active.level }

// Exp sets d[i] = eˣ⁽ⁱ⁾ for every i < len(x); d must be at least as long as x.
func Exp(d, x []float32) {
	var c call
	c.op, c.s[0], c.s[1], c.in, c.out = opExp, d[:len(x)], x, 1<<1, 1
	c.redo = !overlap(c.s[0], x)
	c.run()
}

// ExpShiftSum sets d[i] = e^(x[i]-shift) for every i < len(x) and returns the sum of
// the d[i], accumulated in float64; d must be at least as long as x and may be x.
func ExpShiftSum(d, x []float32, shift float32) float64 {
	var c call
	c.op, c.s[0], c.s[1], c.in, c.out, c.pad, c.shift = opExpShiftSum, d[:len(x)], x, 1<<1, 1, &negInfs, shift
	c.run()
	return c.sum
}

// Erf sets d[i] = erf(x[i]) for every i < len(x); d must be at least as long as x.
func Erf(d, x []float32) {
	var c call
	c.op, c.s[0], c.s[1], c.in, c.out = opErf, d[:len(x)], x, 1<<1, 1
	c.redo = !overlap(c.s[0], x)
	c.run()
}

// Gelu sets d[i] = GELU(x[i]) in its erf form, (0.5·x)·(1 + erf(x·(1/√2))), every
// operation rounded to float32 in that order, so the results are those of Erf and
// Arith run step by step, bit for bit, in one pass; d must be at least as long as x.
func Gelu(d, x []float32) {
	var c call
	c.op, c.s[0], c.s[1], c.in, c.out = opGelu, d[:len(x)], x, 1<<1, 1
	c.redo = !overlap(c.s[0], x)
	c.run()
}

// GeluGradConsts are the constants of GeluGrad: for GELU's erf form C1 = 1/√2,
// Scale = Bias = 0.5, C2 = -0.5 and C3 = 1/√(2π).
type GeluGradConsts struct{ C1, Scale, Bias, C2, C3 float32 }

// GeluGrad sets dx[i] = gy[i]·(cdf + x[i]·pdf) with cdf = erf(x[i]·C1)·Scale + Bias and
// pdf = exp(x[i]²·C2)·C3, GELU's derivative times the gradient, every operation rounded
// to float32 in the order of the graph tensor.Gelu's gradient builds, so the results are
// those of Erf, Exp and Arith run step by step, bit for bit, in one pass. C1 must be
// finite and nonzero and C2 negative (so no lane's exponential leaves the vector
// range); dx, x and gy have the same length.
func GeluGrad(c *GeluGradConsts, dx, x, gy []float32) {
	var k call
	k.op, k.s[0], k.s[1], k.s[2], k.in, k.out, k.gelu = opGeluGrad, dx[:len(x)], x, gy[:len(x)], 1<<1|1<<2, 1, c
	k.redo = !overlap(k.s[0], x) && !overlap(k.s[0], gy)
	k.run()
}

// Max returns the largest element of x: -Inf when x is empty, NaN when x holds a NaN.
func Max(x []float32) float32 {
	m, i := float32(math.Inf(-1)), 0
	if active.max != nil {
		var nan bool
		if i, m, nan = active.max(x); nan {
			return float32(math.NaN())
		}
	}
	for _, v := range x[i:] {
		m = max(m, v)
	}
	return m
}
