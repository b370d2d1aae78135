package backendtest

import t "github.com/gml-dev/gml/tensor"

// Cases of the custom ops that ship registered: row_median (a reduction whose gradient
// is a second custom op), row_permute (params drive it; its gradient is itself with the
// inverse permutation) and clip_inplace (on a copy, with a clamp's gradient, and on a
// variable). Custom kernels run on the CPU on every backend; enough rows to be split
// across threads, and the half types, which kernels see widened to f32.

func customCases() []Case {
	median := func(rows int) func(x *t.Node) *t.Node {
		return func(x *t.Node) *t.Node { return t.Custom("row_median", []*t.Node{x}, t.Shape{rows, 1}) }
	}
	permute := func(x *t.Node) *t.Node { return t.Square(t.Custom("row_permute", []*t.Node{x}, x.Shape(), 2, 0, 3, 1)) }
	clip := func(x *t.Node) *t.Node { return t.Mul(t.CustomInPlace("clip_inplace", x, nil, -0.4, 0.6), x) }
	halves := []t.DType{t.F32, t.F16, t.BF16}
	return []Case{
		grad(unary("custom_row_median_odd", gen(Distinct(-1, 1), 3, 5), median(3))),
		grad(unary("custom_row_median_even", gen(Distinct(-1, 1), 2, 6), median(2))),
		unary("custom_row_median_rows", gen(Distinct(-1, 1), 3000, 7), median(3000)).in(halves...),
		grad(unary("custom_row_permute", in(3, 4), permute)),
		unary("custom_row_permute_rows", in(5000, 4), permute).in(halves...),
		grad(unary("custom_clip_inplace", gen(Away(-1, 1, 0.05, -0.4, 0.6), 3, 4), clip)),
		unary("custom_clip_inplace_rows", in(700, 33), clip).in(halves...),
		{Name: "custom_clip_variable", Inputs: []Input{{Shape: t.Shape{40, 9}, Var: true}}, DTypes: halves,
			Build: func(x []*t.Node) *t.Node { return t.CustomInPlace("clip_inplace", x[0], nil, -0.25, 0.5) }},
	}
}
