package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"

	t "github.com/gml-dev/gml/tensor"
)

// Cases of attention, its fused backward and RoPE: self, causal, cross and causal
// cross attention with more keys than queries or fewer, masks broadcast in every way
// (with -Inf entries), feature sizes up to 200, and a query that sees no key; most of
// them in both layouts, (B, H, T, D) and (B, T, H, D) (AttentionBTHD).

func attentionCases() []Case {
	shapes := []struct {
		name   string
		lead   []int
		tq, tk int
		d, dv  int
		causal bool
		mask   []int // nil: no mask
		scale  float32
	}{
		{"self", []int{2, 3}, 37, 37, 16, 16, false, nil, 0},
		{"causal", []int{2, 3}, 37, 37, 16, 16, true, nil, 0},
		{"cross", []int{2}, 5, 70, 24, 40, false, nil, 0.3},
		{"causal_wide", []int{2}, 19, 53, 7, 5, true, nil, 0},
		{"causal_tall", []int{3}, 45, 20, 8, 8, true, nil, 0},
		{"mask_full", []int{2, 2}, 19, 33, 32, 32, false, []int{2, 2, 19, 33}, 0},
		{"mask_per_batch", []int{2, 3}, 17, 17, 12, 12, true, []int{2, 1, 17, 17}, 0},
		{"mask_keys", []int{4}, 9, 50, 20, 20, false, []int{1, 50}, 0},
		{"d100", []int{1, 2}, 21, 29, 100, 70, false, nil, 0},
		{"d200", []int{2}, 10, 23, 200, 130, true, []int{10, 23}, 0},
		{"rank2", nil, 13, 11, 7, 5, false, []int{13, 1}, 0},
	}
	var cs []Case
	for _, s := range shapes {
		for _, layout := range []t.AttentionLayout{t.AttentionBHTD, t.AttentionBTHD} {
			if layout == t.AttentionBTHD && (len(s.lead) == 0 || s.name == "d100") {
				continue // rank2 has no heads axis; d100 is one more feature size, once is enough
			}
			name := s.name
			shape := func(n, d int) t.Shape { return append(append(t.Shape{}, s.lead...), n, d) }
			if layout == t.AttentionBTHD {
				name = "bthd_" + name
				shape = func(n, d int) t.Shape {
					h := len(s.lead) - 1
					return append(append(t.Shape{}, s.lead[:h]...), n, s.lead[h], d)
				}
			}
			inputs := []Input{in(shape(s.tq, s.d)...), in(shape(s.tk, s.d)...), in(shape(s.tk, s.dv)...)}
			if s.mask != nil {
				inputs = append(inputs, Input{Shape: s.mask, Gen: maskValues(s.mask[len(s.mask)-1] > 1)})
			}
			at := t.AttentionAttr{Causal: s.causal, Scale: s.scale, Layout: layout}
			maskOf := func(x []*t.Node) *t.Node {
				if len(x) > 3 {
					return x[3]
				}
				return nil
			}
			var dts []t.DType
			if s.name == "self" || s.name == "rank2" {
				dts = []t.DType{t.F32, t.F16, t.BF16}
			}
			cs = append(cs, Case{Name: "attention_" + name, Inputs: inputs, DTypes: dts,
				Build: func(x []*t.Node) *t.Node { return t.Attention(x[0], x[1], x[2], maskOf(x), at) }})
			// The fused backward: statistics, ∂q and ∂k|∂v of the same attention, given the
			// forward output and an output gradient.
			for _, out := range []t.AttentionGradOutput{t.AttentionStats, t.AttentionGradQ, t.AttentionGradKV} {
				bw := append(append([]Input(nil), inputs[:3]...), in(shape(s.tq, s.dv)...))
				cs = append(cs, Case{Name: fmt.Sprintf("attention_grad_%d_%s", out, name), Inputs: append(bw, inputs[3:]...), DTypes: dts,
					Build: func(x []*t.Node) *t.Node {
						q, k, v, gy := x[0], x[1], x[2], x[3]
						var mask *t.Node
						if len(x) > 4 {
							mask = x[4]
						}
						o := t.Attention(q, k, v, mask, at)
						dq, dk, _ := t.AttentionGrad(q, k, v, mask, o, gy, at)
						switch out {
						case t.AttentionStats:
							return dq.Input(4)
						case t.AttentionGradQ:
							return dq
						}
						return dk.Input(0) // ∂k|∂v, which dk slices
					}, Tol: 2e-5})
			}
		}
	}
	hidden := make([]float64, 4*40)
	for j := 0; j < 40; j++ {
		hidden[2*40+j] = math.Inf(-1) // query 2 sees no key: its output is NaN everywhere
	}
	cs = append(cs,
		Case{Name: "attention_hidden_query", Inputs: []Input{in(1, 4, 8), in(1, 40, 8), in(1, 40, 8), {Shape: t.Shape{4, 40}, Values: hidden}},
			Build: func(x []*t.Node) *t.Node { return t.Attention(x[0], x[1], x[2], x[3], t.AttentionAttr{}) }},
		grad(Case{Name: "attention", Inputs: []Input{in(1, 2, 3, 4), in(1, 2, 5, 4), in(1, 2, 5, 3)},
			Build: func(x []*t.Node) *t.Node { return t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{}) }}),
		grad(Case{Name: "attention_causal_masked", Inputs: []Input{in(2, 1, 3, 2), in(2, 1, 4, 2), in(2, 1, 4, 3), in(1, 1, 3, 4)},
			Build: func(x []*t.Node) *t.Node {
				return t.Attention(x[0], x[1], x[2], x[3], t.AttentionAttr{Causal: true, Scale: 0.8})
			}}),
		// Cross attention with a feature size that is not a multiple of four, and causal
		// cross attention with more keys than queries under a mask broadcast over the
		// queries.
		grad(Case{Name: "attention_cross_odd_features", Inputs: []Input{in(2, 1, 3, 5), in(2, 1, 6, 5), in(2, 1, 6, 3)},
			Build: func(x []*t.Node) *t.Node { return t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{Scale: 0.7}) }}),
		grad(Case{Name: "attention_causal_cross_masked", Inputs: []Input{in(1, 2, 4, 3), in(1, 2, 6, 3), in(1, 2, 6, 5), in(2, 1, 6)},
			Build: func(x []*t.Node) *t.Node {
				return t.Attention(x[0], x[1], x[2], x[3], t.AttentionAttr{Causal: true})
			}}),
		grad(Case{Name: "attention_causal_tall_grad", Inputs: []Input{in(1, 5, 3), in(1, 3, 3), in(1, 3, 2)},
			Build: func(x []*t.Node) *t.Node { return t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{Causal: true}) }}),
		// The gradients in the AttentionBTHD layout: (B, T, H, D) operands, a mask in the
		// scores' (B, H, Tq, Tk) order.
		grad(Case{Name: "attention_bthd", Inputs: []Input{in(2, 3, 2, 4), in(2, 5, 2, 4), in(2, 5, 2, 3)},
			Build: func(x []*t.Node) *t.Node {
				return t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{Layout: t.AttentionBTHD})
			}}),
		grad(Case{Name: "attention_bthd_causal_masked", Inputs: []Input{in(1, 4, 3, 3), in(1, 6, 3, 3), in(1, 6, 3, 5), in(3, 1, 6)},
			Build: func(x []*t.Node) *t.Node {
				return t.Attention(x[0], x[1], x[2], x[3], t.AttentionAttr{Causal: true, Scale: 0.8, Layout: t.AttentionBTHD})
			}}),
		grad(Case{Name: "attention_bthd_rank3", Inputs: []Input{in(5, 2, 3), in(3, 2, 3), in(3, 2, 2)},
			Build: func(x []*t.Node) *t.Node {
				return t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{Causal: true, Layout: t.AttentionBTHD})
			}}),
	)
	rope := []struct {
		shape t.Shape
		dims  int
		base  float32
		pos   []float64
		dt    t.DType
	}{
		{t.Shape{2, 3, 9, 16}, 0, 0, seq(9, func(i int) float64 { return float64(i) }), t.I32},
		{t.Shape{2, 7, 12}, 8, 500, seq(7, func(i int) float64 { return float64(3*i - 10) }), t.I64},
		{t.Shape{1, 33, 128}, 0, 0, seq(33, func(i int) float64 { return float64(4000 + 97*i) }), t.I32},
		{t.Shape{5, 6}, 2, 0, seq(5, func(i int) float64 { return -float64(i) }), t.I64},
	}
	for _, r := range rope {
		at := t.RoPEAttr{Dims: r.dims, Base: r.base}
		cs = append(cs, binary(fmt.Sprint("rope", r.shape), in(r.shape...), Input{Shape: t.Shape{len(r.pos)}, DType: r.dt, Own: true, Values: r.pos},
			func(x, p *t.Node) *t.Node { return t.RoPE(x, p, at) }).in(t.F32, t.F16, t.BF16).tol(2e-5))
	}
	return append(cs,
		grad(binary("rope_partial", in(1, 2, 3, 6), idx([]float64{0, 5, 2}, 3), func(x, p *t.Node) *t.Node {
			return t.RoPE(x, p, t.RoPEAttr{Dims: 4, Base: 100})
		})),
		grad(binary("rope_i32_positions", in(2, 4), Input{Shape: t.Shape{2}, DType: t.I32, Own: true, Values: []float64{3, 1}},
			func(x, p *t.Node) *t.Node { return t.RoPE(x, p, t.RoPEAttr{}) })),
	)
}

// maskValues draws an additive mask in [-2, 2] with some -Inf entries when the keys
// axis is long enough for every query to keep a key.
func maskValues(withInf bool) func(r *rand.Rand, n int) []float64 {
	return func(r *rand.Rand, n int) []float64 {
		v := Uniform(-2, 2)(r, n)
		for i := 1; withInf && i < n; i += 7 {
			v[i] = math.Inf(-1)
		}
		return v
	}
}

func seq(n int, f func(i int) float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}
