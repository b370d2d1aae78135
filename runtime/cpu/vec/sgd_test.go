package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sgdFTZ is the update of sgdGo with every operation under DAZ and FTZ (ftz_test.go).
func sgdFTZ(c *SGDConsts, nesterov bool, p, g, vel []float32) {
	mu, wd, lr := daz(c[0]), daz(c[1]), daz(c[2])
	for i := range p {
		pi := daz(p[i])
		gi := addFTZ(daz(g[i]), mulFTZ(wd, pi))
		v := addFTZ(mulFTZ(mu, daz(vel[i])), gi)
		vel[i] = v
		if nesterov {
			v = addFTZ(gi, mulFTZ(mu, v))
		}
		p[i] = subFTZ(pi, mulFTZ(lr, v))
	}
}

// TestSGDAtEveryLevel checks SGDStep against the update in float64 on plain values, and
// bit for bit against the Go code there (every level) and against sgdFTZ on values
// around the smallest normal (the assembly levels: subnormal velocities and parameters,
// products that land on either side of 2⁻¹²⁶), on ragged lengths, with and without
// Nesterov momentum.
func TestSGDAtEveryLevel(t *testing.T) {
	defer func(a impl) { active = a }(active)
	const minNormal = 0x1p-126
	r := rand.New(rand.NewPCG(13, 14))
	near := func(x float64, k int) float32 { // x moved by k float32 steps
		return math.Float32frombits(uint32(int(math.Float32bits(float32(x))) + k))
	}
	for ci, c := range []SGDConsts{{0.9, 0.01, 0.1}, {1 - 3*0x1p-23, 0, 1e-3}, {0, 1e-4, 0.5}} {
		for _, nesterov := range []bool{false, true} {
			// Plain values, then the edge cases.
			var p, g, vel []float32
			for range 257 {
				p, g, vel = append(p, float32(r.NormFloat64())), append(g, float32(0.1*r.NormFloat64())), append(vel, float32(0.01*r.NormFloat64()))
			}
			plain := len(p)
			for k := -40; k <= 40; k++ {
				p, g, vel = append(p, 1), append(g, 0), append(vel, near(minNormal/float64(c[0]), k))
				p, g, vel = append(p, near(minNormal, k)), append(g, 0), append(vel, 0)
			}
			for range 1000 {
				tiny := func() float32 {
					return math.Float32frombits(r.Uint32()&0x80ffffff) * float32(math.Ldexp(1, -r.IntN(40)))
				}
				p, g, vel = append(p, tiny()), append(g, tiny()), append(vel, tiny())
			}
			for _, im := range levels() {
				for _, n := range []int{1, 7, 33, 257, len(p)} {
					if im.level == Go && n > plain {
						continue // the Go code does not flush subnormals
					}
					wp, wv := append([]float32(nil), p[:n]...), append([]float32(nil), vel[:n]...)
					if n <= plain {
						sgdGo(&c, nesterov, wp, g[:n], wv)
					} else {
						sgdFTZ(&c, nesterov, wp, g[:n], wv)
					}
					gp, gv := append([]float32(nil), p[:n]...), append([]float32(nil), vel[:n]...)
					active = im
					SGDStep(&c, nesterov, gp, g[:n], gv)
					for i := range n {
						if math.Float32bits(gp[i]) != math.Float32bits(wp[i]) || math.Float32bits(gv[i]) != math.Float32bits(wv[i]) {
							t.Fatalf("%v consts %d nesterov %v n=%d element %d (p %g g %g vel %g): p vel = %g %g, want %g %g",
								im.level, ci, nesterov, n, i, p[i], g[i], vel[i], gp[i], gv[i], wp[i], wv[i])
						}
						if i >= plain {
							continue
						}
						mu, wd, lr := float64(c[0]), float64(c[1]), float64(c[2])
						gi := float64(g[i]) + wd*float64(p[i])
						v := mu*float64(vel[i]) + gi
						s := v
						if nesterov {
							s = gi + mu*v
						}
						vSize := math.Abs(mu*float64(vel[i])) + math.Abs(float64(g[i])) + math.Abs(wd*float64(p[i])) // the terms, not their sum
						pSize := math.Abs(float64(p[i])) + math.Abs(lr*s)
						if math.Abs(float64(gv[i])-v) > 4e-7*vSize || math.Abs(float64(gp[i])-(float64(p[i])-lr*s)) > 4e-7*(pSize+vSize) {
							t.Fatalf("%v consts %d nesterov %v element %d: p vel = %g %g, want %g %g", im.level, ci, nesterov, i, gp[i], gv[i], float64(p[i])-lr*s, v)
						}
					}
				}
			}
		}
	}
}
