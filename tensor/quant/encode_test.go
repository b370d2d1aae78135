package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// roundTrip encodes x in f and decodes it again.
func roundTrip(t *testing.T, f Format, x []float32) []float32 {
	t.Helper()
	n, err := f.Bytes(len(x))
	if err != nil {
		t.Fatal(err)
	}
	q := make([]byte, n)
	if err := f.Quantize(q, x); err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	if err := f.Dequantize(y, q); err != nil {
		t.Fatal(err)
	}
	return y
}

func gaussian(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
	}
	return x
}

// relRMSE is the root-mean-square error of y against x, relative to x's RMS.
func relRMSE(x, y []float32) float64 {
	var e, s float64
	for i := range x {
		d := float64(y[i]) - float64(x[i])
		e += d * d
		s += float64(x[i]) * float64(x[i])
	}
	return math.Sqrt(e / s)
}

// TestQuantizeErrorBounds checks each encoder's error against its format's step: no
// weight of a symmetric block is off by more than half a step (plus float16 rounding of
// the scale), and Q4_K, with its fitted offsets, beats Q4_0 on average.
func TestQuantizeErrorBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := gaussian(rng, 64*QK, 0.02)
	rmse := map[Format]float64{}
	for _, f := range []Format{Q4_0, Q8_0, Q4_K} {
		y := roundTrip(t, f, x)
		rmse[f] = relRMSE(x, y)
		if f == Q4_K {
			continue
		}
		levels := map[Format]float64{Q4_0: 8, Q8_0: 127}[f]
		for b := 0; b < len(x); b += 32 {
			var amax float64
			for _, v := range x[b : b+32] {
				amax = max(amax, math.Abs(float64(v)))
			}
			step := amax / levels
			for i := b; i < b+32; i++ {
				// Q4_0's levels reach 8 steps on the extreme value's side, 7 on the other.
				bound := max(step/2, math.Abs(float64(x[i]))-7*step)
				if err := math.Abs(float64(y[i] - x[i])); err > bound*(1+1e-3)+amax*1e-3 {
					t.Fatalf("%s weight %d: %g decodes to %g, off by %g > %g", f, i, x[i], y[i], err, bound)
				}
			}
		}
	}
	t.Logf("relative RMSE on Gaussian weights: Q4_0 %.4f, Q4_K %.4f, Q8_0 %.5f", rmse[Q4_0], rmse[Q4_K], rmse[Q8_0])
	if rmse[Q8_0] > 0.01 || rmse[Q4_0] > 0.13 || rmse[Q4_K] > 0.11 {
		t.Errorf("relative RMSE too high: %v", rmse)
	}
	if rmse[Q4_K] >= rmse[Q4_0] {
		t.Errorf("Q4_K error %g not below Q4_0's %g", rmse[Q4_K], rmse[Q4_0])
	}
}

// TestQuantizeSpecialBlocks: exact zeros, constants, one outlier among small values, all
// positive and all negative blocks, and values whose scale underflows float16.
func TestQuantizeSpecialBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fill := func(f func(i int) float32) []float32 {
		x := make([]float32, QK)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	cases := map[string][]float32{
		"zeros":    fill(func(int) float32 { return 0 }),
		"constant": fill(func(int) float32 { return 0.5 }),
		"negative": fill(func(int) float32 { return -0.25 - float32(rng.Float64()) }),
		"positive": fill(func(int) float32 { return 1 + float32(rng.Float64()) }),
		"outlier": fill(func(i int) float32 {
			if i == 7 {
				return 100
			}
			return float32(rng.NormFloat64() * 0.01)
		}),
		"tiny": fill(func(int) float32 { return float32(rng.NormFloat64() * 1e-9) }),
	}
	for name, x := range cases {
		for _, f := range []Format{Q4_0, Q8_0, Q4_K} {
			y := roundTrip(t, f, x)
			var amax float64
			for _, v := range x {
				amax = max(amax, math.Abs(float64(v)))
			}
			for i := range x {
				if math.IsNaN(float64(y[i])) || math.Abs(float64(y[i]-x[i])) > amax/7+1e-6 {
					t.Errorf("%s %s: weight %d = %g decodes to %g", name, f, i, x[i], y[i])
					break
				}
			}
			if name == "zeros" {
				for i, v := range y {
					if v != 0 {
						t.Errorf("%s: zero weight %d decodes to %g", f, i, v)
						break
					}
				}
			}
		}
	}
	// The outlier is the block's extreme value and is kept almost exactly.
	for _, f := range []Format{Q4_0, Q8_0, Q4_K} {
		y := roundTrip(t, f, cases["outlier"])
		if math.Abs(float64(y[7])-100) > 0.1 {
			t.Errorf("%s: outlier 100 decodes to %g", f, y[7])
		}
	}
}
