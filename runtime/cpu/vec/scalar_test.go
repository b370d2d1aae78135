package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestScalar compares the float32 functions with package math over their range,
// allowing a few float32 ulps (relative 4e-7) plus a small absolute slack (erf's bound
// is absolute).
func TestScalar(t *testing.T) {
	cases := []struct {
		name string
		f    func(float32) float32
		ref  func(float64) float64
		lo   float32
		hi   float32
		abs  float64
	}{
		{"exp", Expf, math.Exp, -87, 88.7, 1e-38},
		{"tanh", Tanhf, math.Tanh, -12, 12, 1e-38},
		{"erf", Erff, math.Erf, -6, 6, 1.2e-7},
		{"erf_small", Erff, math.Erf, -0.6, 0.6, 1e-38}, // relative near zero
		{"log", Logf, math.Log, 1e-30, 1e4, 1e-38},
		{"log_near_1", Logf, math.Log, 0.5, 2, 1e-38}, // relative near zero
	}
	for _, c := range cases {
		for i := 0; i <= 200000; i++ {
			x := c.lo + (c.hi-c.lo)*float32(i)/200000
			got, want := float64(c.f(x)), c.ref(float64(x))
			if !(math.Abs(got-want) <= 4e-7*math.Abs(want)+c.abs) {
				t.Fatalf("%s(%v) = %v, want %v", c.name, x, got, want)
			}
		}
	}
	inf := float32(math.Inf(1))
	for i, s := range []struct{ got, want float32 }{
		{Expf(100), inf}, {Expf(-100), 0}, {Tanhf(30), 1}, {Tanhf(-30), -1},
		{Erff(inf), 1}, {Erff(-inf), -1}, {Erff(0), 0},
		{Logf(inf), inf}, {Logf(0), -inf}, {Logf(1), 0}, {Logf(0x1p-140), -140 * math.Ln2},
	} {
		if s.got != s.want {
			t.Errorf("special case %d: %v, want %v", i, s.got, s.want)
		}
	}
	nan := float32(math.NaN())
	if v := Expf(nan); v == v {
		t.Errorf("Expf(NaN) = %v", v)
	}
	if v := Logf(-1); v == v {
		t.Errorf("Logf(-1) = %v", v)
	}
	if v := Erff(nan); v == v {
		t.Errorf("Erff(NaN) = %v", v)
	}
}

// levels lists the levels this machine runs, Go first.
func levels() []impl {
	out := []impl{{level: Go}}
	for _, l := range []Level{AVX2, AVX512} {
		if im, ok := asmImpl(l); ok {
			out = append(out, im)
		}
	}
	return out
}

// edgy returns n arguments in [lo, hi] with, from seed on, the special values spread
// among them, so vectors with an edge lane sit between plain ones and in the tail.
func edgy(r *rand.Rand, n int, lo, hi float64, special []float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(lo + (hi-lo)*r.Float64())
	}
	for i, v := range special {
		if j := (i*37 + 5) % (n + 1); j < n && n > 40 {
			x[j] = v
		}
	}
	return x
}

// close reports whether got is within a relative rel plus an absolute abs of want, with
// NaN only for NaN and infinities (also those of float32 overflow) exact.
func close(got float32, want float64, rel, abs float64) bool {
	if math.IsInf(float64(float32(want)), 0) {
		want = float64(float32(want))
	}
	if math.IsNaN(want) || math.IsInf(want, 0) || want == 0 {
		return float64(got) == want || math.IsNaN(want) && got != got ||
			want == 0 && math.Abs(float64(got)) <= abs
	}
	return math.Abs(float64(got)-want) <= rel*math.Abs(want)+abs
}

// TestSlicesAtEveryLevel runs the slice functions at every level on ragged lengths, with
// edge values placed inside vectors and in the tails.
func TestSlicesAtEveryLevel(t *testing.T) {
	defer func(a impl) { active = a }(active)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	special := []float32{nan, inf, -inf, 200, -200, 88.5, 88.3, -87.3, -88, 0, 4, -4, 1e-30}
	r := rand.New(rand.NewPCG(1, 2))
	for _, im := range levels() {
		active = im
		for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 257, 1000} {
			name := fmt.Sprintf("%v/n=%d", im.level, n)
			x := edgy(r, n, -90, 90, special)
			d := make([]float32, n)
			Exp(d, x)
			for i, v := range x {
				if want := math.Exp(float64(v)); !close(d[i], want, 4e-7, 1e-37) && !(want < 1.2e-38 && d[i] == 0) {
					t.Fatalf("%s: Exp(%v) = %v, want %v", name, v, d[i], want)
				}
			}
			const shift = 3.5
			sum := ExpShiftSum(d, x, shift)
			var want float64
			for i, v := range x {
				e := math.Exp(float64(v - shift)) // the shift is subtracted in float32
				if !close(d[i], e, 4e-7, 1e-37) && !(e < 1.2e-38 && d[i] == 0) {
					t.Fatalf("%s: ExpShiftSum element exp(%v-%v) = %v, want %v", name, v, shift, d[i], e)
				}
				want += float64(d[i])
			}
			if !close(float32(sum), want, 1e-6, 0) && !(math.IsNaN(sum) && math.IsNaN(want)) && !(math.IsInf(sum, 1) && math.IsInf(want, 1)) {
				t.Fatalf("%s: ExpShiftSum = %v, want %v", name, sum, want)
			}
			for _, withNaN := range []bool{false, true} {
				x := edgy(r, n, -1e3, 1e3, special[1:])
				if withNaN && n > 0 {
					x[r.IntN(n)] = nan
				}
				want := float32(math.Inf(-1))
				for _, v := range x {
					want = max(want, v)
				}
				if got := Max(x); got != want && !(got != got && want != want) {
					t.Fatalf("%s: Max = %v, want %v", name, got, want)
				}
			}
			x = edgy(r, n, -6, 6, special)
			Erf(d, x)
			for i, v := range x {
				if want := math.Erf(float64(v)); !close(d[i], want, 4e-7, 1.2e-7) {
					t.Fatalf("%s: Erf(%v) = %v, want %v", name, v, d[i], want)
				}
			}
		}
	}
}

// TestChoose checks that GML_SIMD lowers the level and never raises it.
func TestChoose(t *testing.T) {
	best := choose("")
	if got := choose("go"); got.level != Go || got.max != nil {
		t.Errorf("GML_SIMD=go chose %v", got.level)
	}
	if got := choose("avx512"); got.level != best.level {
		t.Errorf("GML_SIMD=avx512 chose %v, want the machine's best %v", got.level, best.level)
	}
	if got := choose("avx2"); got.level > AVX2 {
		t.Errorf("GML_SIMD=avx2 chose %v", got.level)
	}
}

// TestSigmoidAndSiluAtTheEdges checks the Go loops on special values.
func TestSigmoidAndSiluAtTheEdges(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	x := []float32{nan, inf, -inf, 200, -200, 88.5, -88, 0, 3, -3}
	for _, c := range []struct {
		name string
		f    func(d, x []float32)
		ref  func(float64) float64
	}{
		{"sigmoid", Sigmoid, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"silu", Silu, func(v float64) float64 { return v / (1 + math.Exp(-v)) }}, // NaN at -Inf, as x·sigmoid(x)
	} {
		d := make([]float32, len(x))
		c.f(d, x)
		for i, v := range x {
			want := float32(c.ref(float64(v)))
			got := d[i]
			if want != want {
				if got == got {
					t.Errorf("%s(%v) = %v, want NaN", c.name, v, got)
				}
				continue
			}
			if got != want && !(math.Abs(float64(got-want)) <= 1e-6*math.Abs(float64(want))+1e-37) {
				t.Errorf("%s(%v) = %v, want %v", c.name, v, got, want)
			}
		}
	}
}

// TestGelu checks the one-pass GELU at every level against the float64 formula and,
// bit for bit, against the steps it replaces (Arith and Erf at the same level), on
// ragged lengths with NaNs, infinities and signed zeros among the lanes.
func TestGelu(t *testing.T) {
	defer func(old impl) { active = old }(active)
	r := rand.New(rand.NewPCG(5, 17))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	special := []float32{nan, inf, -inf, 0, float32(math.Copysign(0, -1)), 1e-40, -9, 9}
	for _, im := range levels() {
		active = im
		for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 257, 1000} {
			name := fmt.Sprintf("%v/n=%d", im.level, n)
			x := edgy(r, n, -7, 7, special)
			d := make([]float32, n)
			Gelu(d, x)
			// The steps: t = x·(1/√2), t = erf(t), t = 1 + t, h = 0.5·x, d = h·t.
			c := []float32{1 / math.Sqrt2, 1, 0.5}
			ts, hs, want := make([]float32, n), make([]float32, n), make([]float32, n)
			Arith(Mul, ts, x, 1, c[0:], 0)
			Erf(ts, ts)
			Arith(Add, ts, c[1:], 0, ts, 1)
			Arith(Mul, hs, c[2:], 0, x, 1)
			Arith(Mul, want, hs, 1, ts, 1)
			for i, v := range x {
				if math.Float32bits(d[i]) != math.Float32bits(want[i]) && !(d[i] != d[i] && want[i] != want[i]) {
					t.Fatalf("%s: Gelu(%v) = %v, the steps give %v", name, v, d[i], want[i])
				}
				ref := 0.5 * float64(v) * (1 + math.Erf(float64(v)/math.Sqrt2))
				if math.IsInf(float64(v), -1) {
					ref = math.NaN() // -Inf·0, as the formula gives
				}
				// Erf's absolute error (4.2e-7) scaled by x/2 bounds the error where
				// 1 + erf cancels (x below -3).
				if !close(d[i], ref, 1e-6, 1e-7+2.2e-7*math.Abs(float64(v))) && !(d[i] != d[i] && ref != ref) {
					t.Fatalf("%s: Gelu(%v) = %v, want %v", name, v, d[i], ref)
				}
			}
		}
	}
}

// TestGeluGrad checks the one-pass GELU derivative at every level against the float64
// formula and, bit for bit, against the steps of tensor.Gelu's gradient graph (Arith,
// Erf and Exp at the same level), on ragged lengths with edge values among the lanes.
func TestGeluGrad(t *testing.T) {
	defer func(old impl) { active = old }(active)
	r := rand.New(rand.NewPCG(6, 18))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	special := []float32{nan, inf, -inf, 0, float32(math.Copysign(0, -1)), 1e-40, -9, 9, 13.5, -14}
	c := &GeluGradConsts{1 / math.Sqrt2, 0.5, 0.5, -0.5, float32(1 / math.Sqrt(2*math.Pi))}
	for _, im := range levels() {
		active = im
		for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 257, 1000} {
			name := fmt.Sprintf("%v/n=%d", im.level, n)
			x, gy := edgy(r, n, -7, 7, special), edgy(r, n, -2, 2, nil)
			dx := make([]float32, n)
			GeluGrad(c, dx, x, gy)
			k := []float32{c.C1, c.Scale, c.Bias, c.C2, c.C3}
			cdf, s, pdf, want := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			Arith(Mul, cdf, x, 1, k[0:], 0)
			Erf(cdf, cdf)
			Arith(Mul, cdf, cdf, 1, k[1:], 0)
			Arith(Add, cdf, cdf, 1, k[2:], 0)
			Arith(Mul, s, x, 1, x, 1)
			Arith(Mul, s, s, 1, k[3:], 0)
			Exp(pdf, s)
			Arith(Mul, pdf, pdf, 1, k[4:], 0)
			Arith(Mul, pdf, x, 1, pdf, 1)
			Arith(Add, want, cdf, 1, pdf, 1)
			Arith(Mul, want, gy, 1, want, 1)
			for i, v := range x {
				if math.Float32bits(dx[i]) != math.Float32bits(want[i]) && !(dx[i] != dx[i] && want[i] != want[i]) {
					t.Fatalf("%s: GeluGrad(%v, %v) = %v, the steps give %v", name, v, gy[i], dx[i], want[i])
				}
				xv := float64(v)
				ref := float64(gy[i]) * (0.5*(1+math.Erf(xv/math.Sqrt2)) + xv*math.Exp(-xv*xv/2)/math.Sqrt(2*math.Pi))
				if math.IsInf(xv, 0) {
					ref = float64(gy[i]) * (0.5 + 0.5*math.Copysign(1, xv)) // x·pdf is 0·∞: the graph gives NaN
				}
				if !close(dx[i], ref, 1e-6, 3e-7*math.Abs(float64(gy[i]))) && !(dx[i] != dx[i] && (ref != ref || math.IsInf(xv, 0))) {
					t.Fatalf("%s: GeluGrad(%v, %v) = %v, want %v", name, v, gy[i], dx[i], ref)
				}
			}
		}
	}
}
