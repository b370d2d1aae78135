package backendtest

import (
	"math/rand/v2"

	t "github.com/gml-dev/gml/tensor"
)

// Cases of softmax, log-softmax, layer norm and RMS norm, and the losses built on
// softmax, with the extreme logits that a softmax without its max subtraction turns
// into NaN.

// extremeLogits are rows of logits far beyond exp's range: ±100, ±1000, a row whose
// every logit is -1000 (which underflows to 0/0 without the max subtraction), and one
// of ordinary size.
var extremeLogits = []float64{
	100, 0, -100, 50,
	1000, 999, -1000, 0,
	-1000, -1000, -1000, -1000,
	0.5, -0.25, 1, 0,
}

func normCases() []Case {
	soft := func(axis int) func(*t.Node) *t.Node { return func(x *t.Node) *t.Node { return t.Softmax(x, axis) } }
	logSoft := func(axis int) func(*t.Node) *t.Node { return func(x *t.Node) *t.Node { return t.LogSoftmax(x, axis) } }
	masked := func(op t.Op, axis int, scale float32) func(x, m *t.Node) *t.Node {
		return func(x, m *t.Node) *t.Node { return t.Apply(op, t.SoftmaxAttr{Axis: axis, Scale: scale}, x, m) }
	}
	floats := []t.DType{t.F32, t.F16, t.BF16}
	extreme := Input{Shape: t.Shape{4, 4}, Values: extremeLogits}
	return []Case{
		unary("softmax_rows", gen(wide, 6, 77), soft(1)).in(floats...),
		unary("softmax_mid_axis", gen(wide, 4, 37, 6), soft(1)),
		unary("softmax_axis0", in(3, 4), soft(0)),
		unary("log_softmax_long_rows", gen(wide, 2, 3, 1000), logSoft(-1)).in(floats...),
		binary("softmax_masked_square", in(2, 3, 5, 5), gen(Uniform(-3, 0), 5, 5), masked(t.OpSoftmax, -1, 0.5)),
		binary("softmax_masked_per_batch", in(2, 3, 5, 7), gen(Uniform(-3, 0), 2, 1, 1, 7), masked(t.OpSoftmax, 3, 0.5)),
		binary("softmax_masked_mid_axis", in(4, 6, 3), gen(Uniform(-3, 0), 6, 1), masked(t.OpSoftmax, 1, 0.5)),
		binary("log_softmax_masked_full", in(3, 8), gen(Uniform(-3, 0), 3, 8), masked(t.OpLogSoftmax, 1, 2)),
		// Extreme logits: every backend must stay finite and exact.
		unary("softmax_extreme_logits", extreme, soft(1)).in(t.F32, t.F16, t.BF16),
		unary("log_softmax_extreme_logits", extreme, logSoft(1)).in(t.F32, t.F16),
		unary("softmax_extreme_logits_axis0", extreme, soft(0)),
		binary("softmax_extreme_logits_masked", extreme, gen(Uniform(-1, 0), 4, 4), masked(t.OpSoftmax, 1, 1)),

		unary("layer_norm", in(4, 5, 33), func(x *t.Node) *t.Node { return t.LayerNorm(x, nil, nil, []int{2}, 1e-5) }).in(floats...),
		{Name: "layer_norm_affine_two_axes", Inputs: []Input{in(6, 2, 40), gen(Uniform(0.5, 1.5), 2, 40), in(2, 40)},
			Build: func(x []*t.Node) *t.Node { return t.LayerNorm(x[0], x[1], x[2], []int{1, 2}, 1e-5) }},
		unary("layer_norm_offset", gen(Uniform(999, 1001), 3, 64), func(x *t.Node) *t.Node { return t.LayerNorm(x, nil, nil, nil, 1e-5) }).tol(2e-4),
		unary("rms_norm", in(9, 64), func(x *t.Node) *t.Node { return t.RMSNorm(x, nil, []int{1}, 1e-6) }).in(floats...),
		binary("rms_norm_affine_two_axes", in(6, 2, 40), gen(Uniform(0.5, 1.5), 2, 40), func(x, g *t.Node) *t.Node { return t.RMSNorm(x, g, []int{1, 2}, 1e-5) }),
		unary("norm_empty_rows", in(0, 5), func(x *t.Node) *t.Node { return t.LayerNorm(x, nil, nil, nil, 1e-5) }),
		// Rows with no spread, and a spread below eps: only eps keeps the first finite
		// (0/0 without it) and sets the scale of the second.
		unary("layer_norm_constant_rows", Input{Shape: t.Shape{3, 4}, Values: []float64{2.5, 2.5, 2.5, 2.5, -1, -1, -1, -1, 0.5, -0.25, 1, 0}},
			func(x *t.Node) *t.Node { return t.LayerNorm(x, nil, nil, []int{1}, 1e-5) }).in(floats...),
		unary("rms_norm_zero_rows", Input{Shape: t.Shape{2, 4}, Values: []float64{0, 0, 0, 0, 0.5, -0.25, 1, 0}},
			func(x *t.Node) *t.Node { return t.RMSNorm(x, nil, []int{1}, 1e-6) }).in(floats...),
		unary("layer_norm_spread_below_eps", gen(Uniform(-1e-3, 1e-3), 4, 64), func(x *t.Node) *t.Node { return t.LayerNorm(x, nil, nil, []int{1}, 1e-5) }),
		unary("rms_norm_spread_below_eps", gen(Uniform(-1e-3, 1e-3), 4, 64), func(x *t.Node) *t.Node { return t.RMSNorm(x, nil, []int{1}, 1e-5) }),

		grad(unary("softmax", in(3, 4), soft(-1))),
		grad(unary("softmax_axis0_grad", in(3, 4), soft(0))),
		grad(binary("softmax_masked_scaled", in(2, 3, 4), in(1, 4), func(x, m *t.Node) *t.Node { return t.SoftmaxMasked(x, m, -1, 0.7) })),
		grad(unary("log_softmax", in(3, 4), logSoft(1))),
		grad(binary("log_softmax_masked_scaled", in(3, 4), in(3, 1), masked(t.OpLogSoftmax, 0, 1.5))),
		grad(unary("softmax_extreme_logits_grad", gen(extremeRows, 3, 4), soft(1))),
		grad(unary("log_softmax_extreme_logits_grad", gen(extremeRows, 3, 4), logSoft(1))),
		grad(Case{Name: "layer_norm_grad", Inputs: []Input{in(3, 5), in(5), in(5)},
			Build: func(x []*t.Node) *t.Node { return t.LayerNorm(x[0], x[1], x[2], nil, 1e-5) }}),
		grad(unary("layer_norm_two_axes", in(2, 3, 4), func(x *t.Node) *t.Node { return t.LayerNorm(x, nil, nil, []int{-2, -1}, 1e-5) })),
		grad(binary("layer_norm_gamma", in(4, 3), in(3), func(x, g *t.Node) *t.Node { return t.LayerNorm(x, g, nil, nil, 1e-3) })),
		grad(binary("rms_norm_grad", in(3, 5), in(5), func(x, g *t.Node) *t.Node { return t.RMSNorm(x, g, nil, 1e-5) })),
		grad(unary("rms_norm_plain", in(2, 2, 3), func(x *t.Node) *t.Node { return t.RMSNorm(x, nil, []int{-2, -1}, 1e-5) })),
	}
}

// extremeRows draws logits around ±100 with spread, so a softmax row is dominated by a
// few entries but its gradient is not all zeros.
func extremeRows(r *rand.Rand, n int) []float64 {
	v := Uniform(-2, 2)(r, n)
	for i := range v {
		if i%2 == 0 {
			v[i] += 100
		} else {
			v[i] -= 100
		}
	}
	return v
}
