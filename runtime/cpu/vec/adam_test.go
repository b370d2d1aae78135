package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamAtEveryLevel checks AdamStep at every level against the Go code, bit for
// bit, on ragged lengths, for Adam (decay folded into the gradient) and AdamW.
func TestAdamAtEveryLevel(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []AdamConsts{
		{0.9, 0.1, 0.999, 0.001, 0.01, 1e-3, 1 / (1 - 0.9), 1 / (1 - 0.999), 1e-8, 1},
		{0.8, 0.2, 0.99, 0.01, 0, 3e-2, 1.5, 7, 1e-6, 0.999},
	} {
		for _, im := range levels() {
			for _, n := range []int{0, 1, 7, 8, 9, 33, 257} {
				vals := func(scale float64, positive bool) []float32 {
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(r.NormFloat64() * scale)
						if positive {
							x[i] = float32(math.Abs(float64(x[i])))
						}
					}
					return x
				}
				p, g, m, v := vals(1, false), vals(0.1, false), vals(0.01, false), vals(1e-4, true)
				wp, wm, wv := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
				adamGo(&c, wp, g, wm, wv)
				active = im
				AdamStep(&c, p, g, m, v)
				for i := range p {
					for _, pair := range [][2]float32{{p[i], wp[i]}, {m[i], wm[i]}, {v[i], wv[i]}} {
						if math.Float32bits(pair[0]) != math.Float32bits(pair[1]) {
							t.Fatalf("%v n=%d consts %v: element %d: %v, want %v", im.level, n, c, i, pair[0], pair[1])
						}
					}
				}
			}
		}
	}
}
