package vec

import (
	"math"
	"math/rand/v2"
	"runtime"
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

// adamFTZ is the update of adamGo with every operation under DAZ and FTZ (ftz_test.go).
func adamFTZ(c *AdamConsts, p, g, m, v []float32) {
	var k AdamConsts
	for i, x := range c {
		k[i] = daz(x)
	}
	b1, nb1, b2, nb2, wd, lr, c1, c2, eps, decay := k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8], k[9]
	for i := range p {
		pi := daz(p[i])
		gi := addFTZ(daz(g[i]), mulFTZ(wd, pi))
		mi := addFTZ(mulFTZ(b1, daz(m[i])), mulFTZ(nb1, gi))
		vi := addFTZ(mulFTZ(b2, daz(v[i])), mulFTZ(mulFTZ(nb2, gi), gi))
		m[i], v[i] = mi, vi
		num := mulFTZ(mulFTZ(mi, c1), lr)
		den := addFTZ(float32(math.Sqrt(float64(mulFTZ(vi, c2)))), eps) // √ of a float32 is never tiny
		p[i] = subFTZ(mulFTZ(pi, decay), divFTZ(num, den))
	}
}

// TestAdamFlushesSubnormals checks the assembly levels against adamFTZ bit for bit on
// operands and results around the smallest normal: subnormal moments, parameters and
// gradients, products that land just below, on and above 2⁻¹²⁶ (tininess is decided
// after rounding), exact subnormal products and quotients; on ragged lengths, whose
// tails the assembly takes padded.
func TestAdamFlushesSubnormals(t *testing.T) {
	defer func(a impl) { active = a }(active)
	const minNormal = 0x1p-126
	r := rand.New(rand.NewPCG(7, 8))
	near := func(x float64, k int) float32 { // x moved by k float32 steps
		return math.Float32frombits(uint32(int(math.Float32bits(float32(x))) + k))
	}
	consts := []AdamConsts{
		{0.9, 0.1, 0.999, 0.001, 0.01, 1e-3, 1 / (1 - 0.9), 1 / (1 - 0.999), 1e-8, 1},
		{0.5, 0.5, 0.25, 0.75, 0, 1, 1, 1, 0x1p-60, 0.5},
		// Factors 1-j·2⁻²³: with (1+j·2⁻²³)·2⁻¹²⁶ their product is 2⁻¹²⁶(1-j²·2⁻⁴⁶),
		// tiny before rounding, 2⁻¹²⁶ after, so not flushed.
		{1 - 3*0x1p-23, 3 * 0x1p-23, 1 - 7*0x1p-23, 7 * 0x1p-23, 0, 1e-3, 1, 1, 1e-8, 1 - 5*0x1p-23},
	}
	for ci, c := range consts {
		var p, g, m, v []float32
		add := func(pi, gi, mi, vi float32) {
			p, g, m, v = append(p, pi), append(g, gi), append(m, mi), append(v, vi)
		}
		for k := -40; k <= 40; k++ {
			// β1·m and β2·v around 2⁻¹²⁶, with no gradient.
			add(1, 0, near(minNormal/float64(c[0]), k), near(minNormal/float64(c[2]), k))
			// (1-β2)·g·g around 2⁻¹²⁶.
			add(1, float32(math.Sqrt(minNormal/float64(c[3])))*near(1, k), 0, 0)
			// The decayed parameter around 2⁻¹²⁶.
			add(near(minNormal/float64(c[9]), k), 0, 0, 0)
			// The step, a quotient, around 2⁻¹²⁶, over several denominators (v' = 1..2,
			// and 16 for a power of two: a quotient of float32s lies on a grid through
			// 2⁻¹²⁶ and only such a denominator puts it where rounding hides tininess).
			for j := range 17 {
				vj := 1 + float64(j)/16
				if j == 16 {
					vj = 16
				}
				den := math.Sqrt(vj*float64(c[7])) + float64(c[8])
				add(0, 0, near(minNormal*den/float64(c[0]*c[6]*c[5]), k), float32(vj/float64(c[2])))
			}
		}
		for range 2000 {
			tiny := func() float32 { // subnormal, or small normal, either sign
				x := math.Float32frombits(r.Uint32() & 0x80ffffff)
				return x * float32(math.Ldexp(1, -r.IntN(40)))
			}
			add(tiny(), tiny(), tiny(), float32(math.Abs(float64(tiny()))))
			add(float32(r.NormFloat64()), float32(0x1p-65*r.NormFloat64()), tiny(), float32(math.Abs(float64(tiny()))))
		}
		for _, im := range levels()[1:] {
			for _, n := range []int{1, 7, 33, 257, len(p)} {
				wp, wm, wv := append([]float32(nil), p[:n]...), append([]float32(nil), m[:n]...), append([]float32(nil), v[:n]...)
				adamFTZ(&c, wp, g[:n], wm, wv)
				gp, gm, gv := append([]float32(nil), p[:n]...), append([]float32(nil), m[:n]...), append([]float32(nil), v[:n]...)
				active = im
				AdamStep(&c, gp, g[:n], gm, gv)
				for i := range n {
					for _, pair := range [][2]float32{{gp[i], wp[i]}, {gm[i], wm[i]}, {gv[i], wv[i]}} {
						if math.Float32bits(pair[0]) != math.Float32bits(pair[1]) {
							t.Fatalf("%v consts %d n=%d: element %d (p %g g %g m %g v %g): p m v = %g %g %g, want %g %g %g",
								im.level, ci, n, i, p[i], g[i], m[i], v[i], gp[i], gm[i], gv[i], wp[i], wm[i], wv[i])
						}
					}
					for _, x := range []float32{gp[i], gm[i], gv[i]} {
						if x != 0 && math.Abs(float64(x)) < minNormal {
							t.Fatalf("%v consts %d element %d: subnormal result %g", im.level, ci, i, x)
						}
					}
				}
			}
		}
	}
}

// TestAdamAgainstFloat64 checks AdamStep at every level against the update computed in
// float64, within a few float32 roundings, on ragged lengths.
func TestAdamAgainstFloat64(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(9, 10))
	c := AdamConsts{0.9, 0.1, 0.999, 0.001, 0.01, 1e-3, 1 / (1 - 0.9*0.9), 1 / (1 - 0.999*0.999), 1e-7, 1}
	for _, im := range levels() {
		active = im
		for _, n := range []int{1, 7, 33, 257} {
			p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range p {
				p[i], g[i], m[i] = float32(r.NormFloat64()), float32(r.NormFloat64()*0.1), float32(r.NormFloat64()*0.01)
				v[i] = float32(math.Abs(r.NormFloat64() * 1e-4))
			}
			p0, m0, v0 := append([]float32(nil), p...), append([]float32(nil), m...), append([]float32(nil), v...)
			AdamStep(&c, p, g, m, v)
			for i := range p {
				gi := float64(g[i]) + float64(c[4])*float64(p0[i])
				wm := float64(c[0])*float64(m0[i]) + float64(c[1])*gi
				wv := float64(c[2])*float64(v0[i]) + float64(c[3])*gi*gi
				wp := float64(p0[i]) - float64(c[5])*wm*float64(c[6])/(math.Sqrt(wv*float64(c[7]))+float64(c[8]))
				// Each bound is relative to the size of the terms, not of their sum.
				mSize := math.Abs(float64(c[0])*float64(m0[i])) + math.Abs(float64(c[1])*gi)
				pSize := math.Abs(float64(p0[i])) + math.Abs(wp-float64(p0[i]))
				for _, q := range [][3]float64{{float64(m[i]), wm, mSize}, {float64(v[i]), wv, wv}, {float64(p[i]), wp, pSize}} {
					if math.Abs(q[0]-q[1]) > 4e-7*q[2] {
						t.Fatalf("%v n=%d element %d: %g, want %g", im.level, n, i, q[0], q[1])
					}
				}
			}
		}
	}
}

// modeProbe holds 2⁻¹²⁶ and ½ in a variable the compiler cannot fold.
var modeProbe = [2]float32{0x1p-126, 0.5}

// probeMode multiplies them at the call, in the thread's floating-point mode at that
// moment (a product written inline could be computed once, before the step).
//
//go:noinline
func probeMode() float32 { return modeProbe[0] * modeProbe[1] }

// TestOptimizersRestoreSubnormals checks that the optimizer steps leave the caller's
// floating-point mode as they found it: the assembly sets flush-to-zero for its loop,
// and a lost restore would make every later operation on that thread flush subnormal
// results without any error.
func TestOptimizersRestoreSubnormals(t *testing.T) {
	defer func(a impl) { active = a }(active)
	runtime.LockOSThread() // the mode is per thread: check the thread that ran the step
	defer runtime.UnlockOSThread()
	for _, im := range levels() {
		active = im
		for _, n := range []int{1, 7, 33} {
			p, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			AdamStep(&AdamConsts{0.9, 0.1, 0.999, 0.001, 0, 1e-3, 1, 1, 1e-8, 1}, p, g, m, v)
			if got := probeMode(); math.Float32bits(got) != math.Float32bits(0x1p-127) { // bits: DAZ would compare 2⁻¹²⁷ as 0
				t.Errorf("%v, n=%d: after AdamStep 2⁻¹²⁶·½ = %g, want the subnormal 2⁻¹²⁷", im.level, n, got)
			}
			SGDStep(&SGDConsts{0.9, 1e-2, 0}, false, p, g, v)
			if got := probeMode(); math.Float32bits(got) != math.Float32bits(0x1p-127) { // bits: DAZ would compare 2⁻¹²⁷ as 0
				t.Errorf("%v, n=%d: after SGDStep 2⁻¹²⁶·½ = %g, want the subnormal 2⁻¹²⁷", im.level, n, got)
			}
		}
	}
}
