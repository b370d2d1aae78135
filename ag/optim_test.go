package ag_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

// TestOptimizersFollowPyTorch takes two steps of each optimizer on L = Σ p²/2 (so the
// gradient is p) and compares with PyTorch's update formulas evaluated here.
func TestOptimizersFollowPyTorch(t *testing.T) {
	cpuTape(t)
	type state struct{ p, a, b, c float64 }
	cases := []struct {
		name string
		make func(ps []*ag.Tensor) *ag.Optimizer
		step func(s *state, t int)
	}{
		{"sgd momentum nesterov", func(ps []*ag.Tensor) *ag.Optimizer {
			return ag.SGD(ps, 0.1, ag.Momentum(0.9), ag.Nesterov(), ag.WeightDecay(0.01))
		}, func(s *state, t int) {
			g := s.p + 0.01*s.p
			s.a = 0.9*s.a + g
			s.p -= 0.1 * (g + 0.9*s.a)
		}},
		{"adam", func(ps []*ag.Tensor) *ag.Optimizer { return ag.Adam(ps, 0.1) }, func(s *state, t int) {
			g := s.p
			s.a = 0.9*s.a + 0.1*g
			s.b = 0.999*s.b + 0.001*g*g
			mh, vh := s.a/(1-math.Pow(0.9, float64(t))), s.b/(1-math.Pow(0.999, float64(t)))
			s.p -= 0.1 * mh / (math.Sqrt(vh) + 1e-8)
		}},
		{"adamw", func(ps []*ag.Tensor) *ag.Optimizer { return ag.AdamW(ps, 0.1, ag.WeightDecay(0.1)) }, func(s *state, t int) {
			g := s.p
			s.p *= 1 - 0.1*0.1
			s.a = 0.9*s.a + 0.1*g
			s.b = 0.999*s.b + 0.001*g*g
			mh, vh := s.a/(1-math.Pow(0.9, float64(t))), s.b/(1-math.Pow(0.999, float64(t)))
			s.p -= 0.1 * mh / (math.Sqrt(vh) + 1e-8)
		}},
		{"rmsprop centered momentum", func(ps []*ag.Tensor) *ag.Optimizer {
			return ag.RMSprop(ps, 0.01, ag.Momentum(0.5), ag.Centered())
		}, func(s *state, t int) {
			g := s.p
			s.a = 0.99*s.a + 0.01*g*g
			s.b = 0.99*s.b + 0.01*g
			s.c = 0.5*s.c + g/(math.Sqrt(s.a-s.b*s.b)+1e-8)
			s.p -= 0.01 * s.c
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ag.Param(mustT(tensor.FromFloat32s(tensor.Shape{2}, []float32{1.5, -0.5})))
			o := c.make([]*ag.Tensor{p})
			want := []*state{{p: 1.5}, {p: -0.5}}
			for step := 1; step <= 2; step++ {
				o.ZeroGrad()
				ag.Scale(ag.Sum(ag.Square(p), false), 0.5).Backward()
				o.Step()
				for _, s := range want {
					c.step(s, step)
				}
			}
			got := p.Float64s()
			for i, s := range want {
				if math.Abs(got[i]-s.p) > 1e-5 {
					t.Errorf("p[%d] = %v, want %v", i, got[i], s.p)
				}
			}
		})
	}
}

func TestCaptureVariantsAndMasks(t *testing.T) {
	cpuTape(t)
	w := ag.Param(mustT(tensor.FromFloat32s(tensor.Shape{3, 2}, []float32{1, 2, 3, 4, 5, 6})))
	c := ag.Capture(func(in ...*ag.Tensor) *ag.Tensor { return ag.MatMul(in[0], w) }, ag.MaxVariants(2))
	for _, n := range []int{1, 2, 3, 2} {
		if got := c.Call(ag.Ones(n, 3)).Shape(); got[0] != n {
			t.Fatalf("batch %d gave %v", n, got)
		}
	}
	vs, evicted := c.Variants()
	if len(vs) != 2 || evicted != 1 || vs[1].Inputs != "f32[2 3]" || vs[1].Runs != 2 {
		t.Errorf("variants %+v, evicted %d", vs, evicted)
	}
	q := ag.Ones(1, 2, 3, 4)
	kv := ag.Ones(1, 2, 5, 4)
	err := ag.Catch(func() { ag.FlashAttention(q, kv, kv, ag.Zeros(5, 3), false) })
	if err == nil || !strings.Contains(err.Error(), "transposed") {
		t.Errorf("a (Tk, Tq) mask: %v", err)
	}
	allowed := ag.Greater(ag.Ones(3, 5), ag.Zeros(1))
	if got := ag.FlashAttention(q, kv, kv, allowed, false).Shape(); got[2] != 3 {
		t.Errorf("a boolean mask gave %v", got)
	}
}
