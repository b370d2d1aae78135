package cpu

import (
	"math"
	"testing"
)

// TestFastMath compares the float32 functions with package math over their range,
// allowing a few float32 ulps (relative 4e-7) plus a tiny absolute slack near zero.
func TestFastMath(t *testing.T) {
	cases := []struct {
		name string
		f    func(float32) float32
		ref  func(float64) float64
		lo   float32
		hi   float32
	}{
		{"exp", expf, math.Exp, -87, 88.7},
		{"tanh", tanhf, math.Tanh, -12, 12},
		{"sigmoid", sigmoidf, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }, -80, 80},
		{"erf", erff, math.Erf, -6, 6},
		{"erf_small", erff, math.Erf, -0.6, 0.6},
	}
	for _, c := range cases {
		for i := 0; i <= 200000; i++ {
			x := c.lo + (c.hi-c.lo)*float32(i)/200000
			got, want := float64(c.f(x)), c.ref(float64(x))
			if !(math.Abs(got-want) <= 4e-7*math.Abs(want)+1e-38) {
				t.Fatalf("%s(%v) = %v, want %v", c.name, x, got, want)
			}
		}
	}
	special := []struct {
		got, want float32
	}{
		{expf(100), float32(math.Inf(1))}, {expf(-100), 0}, {tanhf(30), 1}, {tanhf(-30), -1},
		{sigmoidf(-200), 0}, {sigmoidf(200), 1}, {erff(30), 1}, {erff(-30), -1}, {erff(0), 0},
	}
	for i, s := range special {
		if s.got != s.want {
			t.Errorf("special case %d: %v, want %v", i, s.got, s.want)
		}
	}
	if v := expf(float32(math.NaN())); v == v {
		t.Errorf("expf(NaN) = %v", v)
	}
	if v := erff(float32(math.NaN())); v == v {
		t.Errorf("erff(NaN) = %v", v)
	}
}

// TestActivationSlicesAtTheEdges checks the inlined loops on special values.
func TestActivationSlicesAtTheEdges(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	x := []float32{nan, inf, -inf, 200, -200, 88.5, -88, 0}
	for _, c := range []struct {
		name string
		f    func(d, x []float32)
		ref  func(float64) float64
	}{
		{"exp", expSlice, math.Exp},
		{"sigmoid", sigmoidSlice, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
		{"silu", siluSlice, func(v float64) float64 { return v / (1 + math.Exp(-v)) }}, // NaN at -Inf, as x·sigmoid(x)
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
