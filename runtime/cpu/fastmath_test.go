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
	}
	for _, c := range cases {
		for i := 0; i <= 200000; i++ {
			x := c.lo + (c.hi-c.lo)*float32(i)/200000
			got, want := float64(c.f(x)), c.ref(float64(x))
			if math.Abs(got-want) > 4e-7*math.Abs(want)+1e-38 {
				t.Fatalf("%s(%v) = %v, want %v", c.name, x, got, want)
			}
		}
	}
	special := []struct {
		got, want float32
	}{
		{expf(100), float32(math.Inf(1))}, {expf(-100), 0}, {tanhf(30), 1}, {tanhf(-30), -1},
		{sigmoidf(-200), 0}, {sigmoidf(200), 1},
	}
	for i, s := range special {
		if s.got != s.want {
			t.Errorf("special case %d: %v, want %v", i, s.got, s.want)
		}
	}
	if v := expf(float32(math.NaN())); v == v {
		t.Errorf("expf(NaN) = %v", v)
	}
}
