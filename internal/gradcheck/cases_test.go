package gradcheck

import (
	"math/rand/v2"

	t "github.com/gml-dev/gml/tensor"
)

// Helpers that keep the case tables short.

// in is a float input of the given shape with values uniform in [-1, 1].
func in(shape ...int) Input { return Input{Shape: shape} }

// gen is a float input drawn by g.
func gen(g func(*rand.Rand, int) []float64, shape ...int) Input { return Input{Shape: shape, Gen: g} }

// ints is an I64 input with fixed values.
func ints(values []float64, shape ...int) Input {
	return Input{Shape: shape, DType: t.I64, Values: values}
}

// unary builds a case applying f to one input.
func unary(name string, x Input, f func(*t.Node) *t.Node) Case {
	return Case{Name: name, Inputs: []Input{x}, Build: func(x []*t.Node) *t.Node { return f(x[0]) }}
}

// binary builds a case applying f to two inputs.
func binary(name string, a, b Input, f func(a, b *t.Node) *t.Node) Case {
	return Case{Name: name, Inputs: []Input{a, b}, Build: func(x []*t.Node) *t.Node { return f(x[0], x[1]) }}
}

var (
	smooth   = Uniform(-1, 1)
	positive = Uniform(0.5, 2)
	wide     = Uniform(-3, 3)
)

func elementwiseCases() []Case {
	return []Case{
		unary("neg", in(2, 3), t.Neg),
		unary("abs", gen(Away(-1, 1, 0.05, 0), 2, 3), t.Abs),
		unary("exp", in(2, 3), t.Exp),
		unary("log", gen(positive, 2, 3), t.Log),
		unary("sqrt", gen(positive, 2, 3), t.Sqrt),
		unary("rsqrt", gen(positive, 2, 3), t.Rsqrt),
		unary("square", in(2, 3), t.Square),
		unary("sin", gen(wide, 2, 3), t.Sin),
		unary("cos", gen(wide, 2, 3), t.Cos),
		unary("tanh", gen(wide, 2, 3), t.Tanh),
		unary("sigmoid", gen(wide, 2, 3), t.Sigmoid),
		unary("relu", gen(Away(-1, 1, 0.05, 0), 2, 3), t.Relu),
		unary("leaky_relu", gen(Away(-1, 1, 0.05, 0), 2, 3), func(x *t.Node) *t.Node { return t.LeakyRelu(x, 0.1) }),
		unary("elu", gen(Away(-2, 2, 0.05, 0), 2, 3), func(x *t.Node) *t.Node { return t.Elu(x, 0.5) }),
		unary("gelu_erf", gen(wide, 2, 3), func(x *t.Node) *t.Node { return t.Gelu(x, t.GeluErf) }),
		unary("gelu_tanh", gen(wide, 2, 3), func(x *t.Node) *t.Node { return t.Gelu(x, t.GeluTanh) }),
		unary("silu", gen(wide, 2, 3), t.Silu),
		unary("softplus", gen(wide, 2, 3), t.Softplus),
		unary("hardsigmoid", gen(Away(-4, 4, 0.05, -2.5, 2.5), 3, 4),
			func(x *t.Node) *t.Node { return t.HardSigmoid(x, 0.2, 0.5) }),
		unary("hardswish", gen(Away(-5, 5, 0.05, -3, 3), 3, 4), t.HardSwish),
		unary("erf", gen(Uniform(-2, 2), 2, 3), t.Erf),
		unary("tan", gen(Uniform(-1, 1), 2, 3), t.Tan),
		unary("atan", gen(wide, 2, 3), t.Atan),
		unary("clamp", gen(Away(-1, 1, 0.05, -0.5, 0.5), 3, 4), func(x *t.Node) *t.Node { return t.Clamp(x, -0.5, 0.5) }),
		unary("scale", in(2, 3), func(x *t.Node) *t.Node { return t.ScaleBias(x, 2.5, 0.3) }),
		// Through f16 and back: linear, so a large step keeps f16 rounding out of the way.
		{Name: "cast_f16", Inputs: []Input{in(2, 3)}, Step: 0.1, Tol: 2e-2,
			Build: func(x []*t.Node) *t.Node { return t.Cast(t.Square(t.Cast(x[0], t.F16)), t.F32) }},
		// floor, ceil, round and sign pass no gradient: only the square term contributes.
		unary("floor_ceil_sign_stop", gen(Away(-1, 1, 0.05, -2.0/3, -1.0/3, 0, 1.0/3, 2.0/3), 2, 3), func(x *t.Node) *t.Node {
			k := t.MulScalar(x, 3)
			return t.Add(t.Square(x), t.Add(t.Floor(k), t.Add(t.Ceil(k), t.Add(t.Round(k), t.Sign(x)))))
		}),

		binary("add_broadcast", in(2, 3), in(3), t.Add),
		binary("sub_broadcast", in(2, 1, 3), in(4, 1), t.Sub),
		binary("mul_broadcast", in(2, 3), in(2, 1), t.Mul),
		binary("mul_scalar_operand", in(2, 3), in(), t.Mul),
		binary("div", in(2, 3), gen(positive, 3), t.Div),
		binary("pow", gen(positive, 2, 3), gen(Uniform(-1.5, 1.5), 3), t.Pow),
		// Quotients stay inside (2, 3), away from the jumps at integers.
		binary("mod", gen(Uniform(2.2, 2.8), 2, 3), gen(Uniform(1, 1.05), 3), t.Mod),
		binary("maximum", gen(Distinct(-1, 1), 2, 3), gen(Distinct(-0.9, 1.1), 2, 3), t.Maximum),
		binary("minimum_broadcast", gen(Distinct(-1, 1), 2, 3), gen(Distinct(-0.95, 1.05), 3), t.Minimum),
		// max(x, x) = x: the tie splits the gradient in halves that add up to one.
		unary("maximum_tie", in(2, 3), func(x *t.Node) *t.Node { return t.Maximum(x, x) }),
		{Name: "where", Inputs: []Input{
			{Shape: t.Shape{2, 3}, DType: t.Bool, Values: []float64{1, 0, 1, 0, 0, 1}}, in(2, 3), in(3)},
			Build: func(x []*t.Node) *t.Node { return t.Where(x[0], x[1], x[2]) }},
		// A value used several times accumulates its gradients.
		unary("reuse", in(2, 3), func(x *t.Node) *t.Node { return t.Mul(t.Exp(x), t.Add(x, t.Sin(x))) }),
	}
}

func reductionCases() []Case {
	return []Case{
		unary("sum_axis", in(2, 3, 4), func(x *t.Node) *t.Node { return t.Sum(x, []int{1}, false) }),
		unary("sum_all", in(2, 3, 4), func(x *t.Node) *t.Node { return t.Sum(x, nil, false) }),
		unary("mean_keep", in(2, 3, 4), func(x *t.Node) *t.Node { return t.Mean(x, []int{0, 2}, true) }),
		unary("max_axis", gen(Distinct(-1, 1), 2, 3, 4), func(x *t.Node) *t.Node { return t.Max(x, []int{1}, false) }),
		unary("max_all", gen(Distinct(-1, 1), 2, 3), func(x *t.Node) *t.Node { return t.Max(x, nil, false) }),
		unary("min_keep", gen(Distinct(-1, 1), 2, 3, 4), func(x *t.Node) *t.Node { return t.Min(x, []int{-1}, true) }),
		unary("prod", gen(Uniform(0.5, 1.5), 2, 3, 2), func(x *t.Node) *t.Node { return t.Prod(x, []int{1}, false) }),
		// One zero in the first row, two in the second: exact partial products.
		unary("prod_zeros", Input{Shape: t.Shape{2, 3}, Values: []float64{0, 0.5, 1.5, 0, 0, 2}},
			func(x *t.Node) *t.Node { return t.Prod(x, []int{1}, false) }),
		unary("variance", in(2, 5), func(x *t.Node) *t.Node { return t.Variance(x, []int{1}, false, 0) }),
		unary("variance_sample", in(3, 4), func(x *t.Node) *t.Node { return t.Variance(x, []int{0}, true, 1) }),
		unary("cumsum", in(2, 4), func(x *t.Node) *t.Node { return t.CumSum(x, 1, false, false) }),
		unary("cumsum_exclusive_reverse", in(3, 2), func(x *t.Node) *t.Node { return t.CumSum(x, 0, true, true) }),
		unary("topk_values", gen(Distinct(-1, 1), 2, 5), func(x *t.Node) *t.Node {
			v, _ := t.TopK(x, 2, 1, true)
			return v
		}),
	}
}

func matmulCases() []Case {
	return []Case{
		binary("matmul", in(2, 3), in(3, 4), t.MatMul),
		binary("matmul_trans_a", in(3, 2), in(3, 4), func(a, b *t.Node) *t.Node { return t.MatMulT(a, b, true, false) }),
		binary("matmul_trans_b", in(2, 3), in(4, 3), func(a, b *t.Node) *t.Node { return t.MatMulT(a, b, false, true) }),
		binary("matmul_trans_both", in(3, 2), in(4, 3), func(a, b *t.Node) *t.Node { return t.MatMulT(a, b, true, true) }),
		binary("matmul_batch_broadcast", in(2, 1, 2, 3), in(3, 3, 2), t.MatMul),
		binary("matmul_broadcast_a", in(2, 3), in(2, 3, 2), t.MatMul),
		// One matrix for every row of a batch: its gradient is one product over all rows.
		binary("matmul_shared_b", in(2, 3, 4), in(4, 2), t.MatMul),
		binary("matmul_shared_b_trans_b", in(2, 2, 3, 4), in(5, 4), func(a, b *t.Node) *t.Node { return t.MatMulT(a, b, false, true) }),
		binary("outer", in(3), in(4), t.Outer),
	}
}

func layoutCases() []Case {
	return []Case{
		unary("reshape", in(2, 3, 2), func(x *t.Node) *t.Node { return t.Square(t.Reshape(x, 3, -1)) }),
		unary("permute", in(2, 3, 4), func(x *t.Node) *t.Node { return t.Permute(x, 2, 0, 1) }),
		unary("transpose", in(2, 3), func(x *t.Node) *t.Node { return t.Transpose(x, 0, 1) }),
		binary("concat", in(2, 1), in(2, 3), func(a, b *t.Node) *t.Node { return t.Concat(1, a, b, a) }),
		unary("split", in(5, 2), func(x *t.Node) *t.Node {
			p := t.Split(x, 0, 2, 3)
			return t.Mul(t.Sum(p[0], nil, false), p[1])
		}),
		unary("slice_steps", in(5, 4), func(x *t.Node) *t.Node { return t.Slice(x, []int{1, 0}, []int{5, 4}, []int{2, 3}) }),
		unary("slice_negative_step", in(5, 3), func(x *t.Node) *t.Node { return t.Slice(x, []int{-1, 1}, []int{0, 3}, []int{-2, 1}) }),
		unary("slice_axis", in(4, 3), func(x *t.Node) *t.Node { return t.SliceAxis(x, 0, 1, 3) }),
		unary("pad_constant", in(2, 3), func(x *t.Node) *t.Node {
			return t.Pad(x, []int{1, 0}, []int{0, 2}, t.PadConstant, 0.5)
		}),
		unary("pad_reflect", in(3, 4), func(x *t.Node) *t.Node {
			return t.Pad(x, []int{2, 1}, []int{1, 3}, t.PadReflect, 0)
		}),
		unary("pad_edge", in(2, 3), func(x *t.Node) *t.Node { return t.Pad(x, []int{1, 2}, []int{2, 1}, t.PadEdge, 0) }),
		unary("expand", in(3, 1), func(x *t.Node) *t.Node { return t.Expand(x, 2, 3, 4) }),
		unary("tile", in(2, 3), func(x *t.Node) *t.Node { return t.Tile(x, 2, 3) }),
		unary("squeeze_unsqueeze_flatten", in(2, 1, 3), func(x *t.Node) *t.Node {
			return t.Flatten(t.Unsqueeze(t.Squeeze(x, 1), 0), 1)
		}),
		{Name: "gather_duplicates", Inputs: []Input{in(3, 4), ints([]float64{2, 0, 2, 3}, 2, 2)},
			Build: func(x []*t.Node) *t.Node { return t.Gather(x[0], x[1], 1) }},
		{Name: "embedding", Inputs: []Input{in(5, 3), ints([]float64{4, 1, 4}, 3)},
			Build: func(x []*t.Node) *t.Node { return t.Embedding(x[0], x[1]) }},
		{Name: "take_along", Inputs: []Input{in(3, 4), ints([]float64{1, 1, 0, 3, 2, 2}, 3, 2)},
			Build: func(x []*t.Node) *t.Node { return t.TakeAlong(x[0], x[1], 1) }},
		{Name: "scatter", Inputs: []Input{in(3, 4), ints([]float64{1, 3, 0, 2, 3, 0}, 3, 2), in(3, 2)},
			Build: func(x []*t.Node) *t.Node { return t.Scatter(x[0], x[1], x[2], 1, t.ScatterReduceNone) }},
		{Name: "scatter_reduce_add", Inputs: []Input{in(3, 4), ints([]float64{1, 1, 0, 2, 3, 0}, 3, 2), in(3, 2)},
			Build: func(x []*t.Node) *t.Node { return t.Scatter(x[0], x[1], x[2], 1, t.ScatterReduceAdd) }},
		{Name: "scatter_add", Inputs: []Input{in(4, 3), ints([]float64{3, 0, 3}, 3), in(3, 3)},
			Build: func(x []*t.Node) *t.Node { return t.ScatterAdd(x[0], x[1], x[2], 0) }},
		unary("depth_to_space_dcr", in(1, 8, 2, 3), func(x *t.Node) *t.Node { return t.DepthToSpace(x, 2, "DCR") }),
		unary("depth_to_space_crd", in(1, 8, 2, 3), func(x *t.Node) *t.Node { return t.DepthToSpace(x, 2, "CRD") }),
		{Name: "dropout", Inputs: []Input{in(4, 5), {Shape: t.Shape{}, DType: t.I32, Values: []float64{7}}},
			Build: func(x []*t.Node) *t.Node { return t.Dropout(x[0], x[1], 0.4) }},
	}
}
