package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// cutKernels are the slice functions whose results must not depend on where a call
// cuts a slice, as func(d, x, y) with y a second input (GeluGrad's gy).
var cutKernels = []struct {
	name string
	f    func(d, x, y []float32)
}{
	{"exp", func(d, x, _ []float32) { Exp(d, x) }},
	{"expshiftsum", func(d, x, _ []float32) { ExpShiftSum(d, x, 3.5) }},
	{"expshiftsum-overflowing", func(d, x, _ []float32) { ExpShiftSum(d, x, -40) }}, // many lanes refused
	{"erf", func(d, x, _ []float32) { Erf(d, x) }},
	{"gelu", func(d, x, _ []float32) { Gelu(d, x) }},
	{"gelugrad", func(d, x, y []float32) {
		GeluGrad(&GeluGradConsts{1 / math.Sqrt2, 0.5, 0.5, -0.5, float32(1 / math.Sqrt(2*math.Pi))}, d, x, y)
	}},
	{"relu", func(d, x, _ []float32) { Relu(d, x) }},
}

// cutInputs returns n arguments at three scales with special values spread among them,
// so some vectors hold a lane the assembly refuses beside lanes it takes.
func cutInputs(r *rand.Rand, n int) []float32 {
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 200, -200,
		88.5, 88.3, 88.2, -87.3, -88, 0, float32(math.Copysign(0, -1)), 4, -4, 1e-40, 13.5, -14}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * []float64{0.5, 3, 40}[i%3])
	}
	for _, v := range special {
		x[r.IntN(n)] = v
	}
	return x
}

// TestCutAnywhere checks that an element's result depends on its arguments alone: at
// every level, each element of slices of ragged lengths at every offset, written apart
// from the arguments and in their place, has the bits it gets inside whole vectors, in
// calls over a long span from each of the sixteen alignments.
func TestCutAnywhere(t *testing.T) {
	defer func(a impl) { active = a }(active)
	const span = 20 * maxWidth
	r := rand.New(rand.NewPCG(7, 8))
	x, y := cutInputs(r, span+maxWidth), cutInputs(r, span+maxWidth)
	for _, im := range levels() {
		active = im
		for _, k := range cutKernels {
			var whole [maxWidth][]float32 // whole[s]: the results of x[s:s+span]
			for s := range whole {
				whole[s] = make([]float32, span)
				k.f(whole[s], x[s:s+span], y[s:s+span])
			}
			for _, n := range []int{1, 7, 15, 16, 17, 33, 257} {
				d := make([]float32, n)
				for run := range 2 * maxWidth {
					off := run / 2
					if run%2 == 0 {
						k.f(d, x[off:off+n], y[off:off+n])
					} else {
						copy(d, x[off:])
						k.f(d, d, y[off:off+n])
					}
					for i, v := range d {
						p := off + i
						for s, w := range whole {
							if p >= s && p-s < span && math.Float32bits(v) != math.Float32bits(w[p-s]) {
								t.Fatalf("%v %s: x[%d] = %v (y %v) in a slice of %d at %d gives %v (%#x) (in place: %v), from %d in whole vectors %v (%#x)",
									im.level, k.name, p, x[p], y[p], n, off, run%2 == 1, v, math.Float32bits(v), s, w[p-s], math.Float32bits(w[p-s]))
							}
						}
					}
				}
			}
		}
	}
}

// TestCallAllocs checks that the padded tails and the refused vectors cost no
// allocation, at every level.
func TestCallAllocs(t *testing.T) {
	defer func(a impl) { active = a }(active)
	x, y, d := cutInputs(rand.New(rand.NewPCG(9, 9)), 37), make([]float32, 37), make([]float32, 37)
	x[3] = float32(math.NaN())
	ac, sc := &AdamConsts{0.9, 0.1, 0.999, 0.001, 0, 1e-3, 10, 1000, 1e-8, 1}, &SGDConsts{0.9, 0, 0.1}
	for _, im := range levels() {
		active = im
		for _, k := range cutKernels {
			if a := testing.AllocsPerRun(10, func() { k.f(d, x, y) }); a != 0 {
				t.Errorf("%v %s: %v allocations a call", im.level, k.name, a)
			}
		}
		m, v := make([]float32, 37), make([]float32, 37)
		for name, f := range map[string]func(){
			"adam": func() { AdamStep(ac, d, y, m, v) },
			"sgd":  func() { SGDStep(sc, true, d, y, m) },
		} {
			if a := testing.AllocsPerRun(10, f); a != 0 {
				t.Errorf("%v %s: %v allocations a call", im.level, name, a)
			}
		}
	}
}
