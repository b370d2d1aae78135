package backendtest

import (
	"math"
	"math/rand/v2"

	t "github.com/gml-dev/gml/tensor"
)

// Cases of the reductions, arg-reductions, cumulative sums and top-k, including the
// shapes that take each GPU path (rows, columns, chunked long columns, interleaved
// axes) and ties.

// withNaN draws from [-1, 1] with a NaN in about one element of five.
func withNaN(r *rand.Rand, n int) []float64 {
	v := Uniform(-1, 1)(r, n)
	for i := range v {
		if r.IntN(5) == 0 {
			v[i] = math.NaN()
		}
	}
	return v
}

func reduceCases() []Case {
	red := func(op t.Op, axes []int, keep bool) func(*t.Node) *t.Node {
		return func(x *t.Node) *t.Node { return t.Apply(op, t.ReduceAttr{Axes: axes, KeepDims: keep}, x) }
	}
	numeric := []t.DType{t.F32, t.F16, t.BF16, t.I32, t.I64}
	cs := []Case{
		unary("sum_all", in(7, 9), red(t.OpSum, nil, false)).in(numeric...),
		unary("sum_rows", in(7, 300), red(t.OpSum, []int{1}, false)),
		unary("sum_cols", in(300, 7), red(t.OpSum, []int{0}, true)),
		// Long columns are cut into chunks combined by a second pass on the GPU.
		unary("sum_cols_chunked", in(1000, 70), red(t.OpSum, []int{0}, false)),
		unary("sum_bias_grad", in(3, 4, 5, 6), red(t.OpSum, []int{0, 2, 3}, true)),
		unary("sum_empty_axis", in(0, 3), red(t.OpSum, []int{0}, false)),
		unary("mean_cols_chunked", in(3, 700, 33), red(t.OpMean, []int{1}, false)),
		unary("mean_mid", in(3, 4, 5, 6), red(t.OpMean, []int{1, 2}, false)).in(t.F32, t.F16, t.BF16),
		unary("mean_outer_inner", in(2, 3, 4), red(t.OpMean, []int{0, 2}, false)),
		unary("max_cols_chunked", in(513, 5), red(t.OpMax, []int{0}, true)),
		unary("max_last", in(5, 1, 33), red(t.OpMax, []int{2}, true)).in(numeric...),
		unary("min_interleaved", in(2, 3, 4, 5, 6), red(t.OpMin, []int{1, 3}, false)).in(numeric...),
		unary("prod_first", gen(Uniform(0.5, 1.5), 3, 1, 7), red(t.OpProd, []int{0}, false)).in(t.F32, t.F16, t.BF16),
		unary("prod_int", gen(Ints(-3, 3), 4, 5), red(t.OpProd, []int{1}, false)).in(t.I32, t.I64),
		unary("var_rows", in(37, 1000), func(x *t.Node) *t.Node { return t.Variance(x, []int{1}, false, 0) }),
		unary("var_sample_keep", in(3, 4), func(x *t.Node) *t.Node { return t.Variance(x, []int{0}, true, 1) }).in(t.F32, t.F16, t.BF16),

		// Ties: Max and Min reach their extremum at two places per row (the gradient
		// splits between them), ArgMax and ArgMin take the first.
		grad(unary("max_ties", Input{Shape: t.Shape{2, 4}, Values: []float64{0.5, 0.5, -1, 0.2, 0.1, -0.3, 0.9, 0.9}}, red(t.OpMax, []int{1}, false))),
		grad(unary("min_ties", Input{Shape: t.Shape{2, 4}, Values: []float64{-0.5, 0.3, -0.5, 0.2, 0.1, -0.7, 0.9, -0.7}}, red(t.OpMin, []int{1}, false))),
		grad(unary("max_all_ties", Input{Shape: t.Shape{2, 3}, Values: []float64{0.7, -0.2, 0.1, 0.3, 0.7, 0}}, red(t.OpMax, nil, false))),
		unary("argmax_ties", gen(fewValues, 6, 7), func(x *t.Node) *t.Node { return t.ArgMax(x, 1, false) }).in(numeric...),
		unary("argmin_ties_keep", gen(fewValues, 5, 3, 4), func(x *t.Node) *t.Node { return t.ArgMin(x, 0, true) }).in(numeric...),
		unary("argmax_long", in(3, 5000), func(x *t.Node) *t.Node { return t.ArgMax(x, 1, false) }),
		unary("argmax_mid_keep", gen(fewValues, 3, 9, 5), func(x *t.Node) *t.Node { return t.ArgMax(x, 1, true) }).in(t.F32, t.I32, t.I64),
		unary("argmin_long", gen(fewValues, 2, 70001), func(x *t.Node) *t.Node { return t.ArgMin(x, 1, false) }).in(t.F32, t.I32, t.I64),
		// More lines than one grid row of workgroups holds (65535).
		unary("argmax_many_lines", gen(fewValues, 65600, 2), func(x *t.Node) *t.Node { return t.ArgMax(x, 1, false) }),
		// NaN counts as the extreme for ArgMax and ArgMin and sorts as the largest in TopK.
		unary("argmax_nan", gen(withNaN, 4, 9), func(x *t.Node) *t.Node { return t.ArgMax(x, 1, false) }),
		unary("argmin_nan", gen(withNaN, 4, 9), func(x *t.Node) *t.Node { return t.ArgMin(x, 1, false) }),
		unary("topk_nan", gen(withNaN, 4, 9), func(x *t.Node) *t.Node { _, i := t.TopK(x, 4, 1, true); return i }),

		unary("cumsum", in(2, 4), func(x *t.Node) *t.Node { return t.CumSum(x, 1, false, false) }).in(numeric...),
		unary("cumsum_exclusive_reverse", in(3, 2), func(x *t.Node) *t.Node { return t.CumSum(x, 0, true, true) }).in(numeric...),
		unary("cumsum_long", in(3, 5000), func(x *t.Node) *t.Node { return t.CumSum(x, 1, false, false) }).tol(1e-4),
		unary("topk_largest", gen(fewValues, 3, 6), func(x *t.Node) *t.Node { _, i := t.TopK(x, 3, 1, true); return i }).in(numeric...),
		unary("topk_smallest_axis0", in(7, 4), func(x *t.Node) *t.Node { _, i := t.TopK(x, 2, 0, false); return i }).in(numeric...),
		unary("topk_long", gen(fewValues, 3, 5001), func(x *t.Node) *t.Node { _, i := t.TopK(x, 7, 1, true); return i }).in(t.F32, t.I32, t.I64),
		unary("topk_all_smallest_mid", gen(fewValues, 2, 13, 3), func(x *t.Node) *t.Node { _, i := t.TopK(x, 13, 1, false); return i }).in(t.F32, t.I32, t.I64),
		unary("cumsum_rows", gen(Uniform(1, 3), 5, 3001), func(x *t.Node) *t.Node { return t.CumSum(x, 1, false, false) }),
		unary("cumsum_exclusive_reverse_mid", in(7, 9, 3), func(x *t.Node) *t.Node { return t.CumSum(x, 1, true, true) }),
		unary("cumsum_exclusive_long", in(2, 777), func(x *t.Node) *t.Node { return t.CumSum(x, 1, true, false) }),
		unary("cumsum_reverse_axis0", in(1000, 3), func(x *t.Node) *t.Node { return t.CumSum(x, 0, false, true) }),
		unary("var_sample_rows", gen(Uniform(1, 3), 6, 257), func(x *t.Node) *t.Node { return t.Variance(x, []int{1}, false, 1) }),
		unary("var_mid", in(3, 4, 5, 6), func(x *t.Node) *t.Node { return t.Variance(x, []int{1, 2}, true, 0) }),
		unary("var_all", in(33, 31), func(x *t.Node) *t.Node { return t.Variance(x, nil, false, 0) }),
		unary("var_long", gen(Uniform(1, 3), 301, 997), func(x *t.Node) *t.Node { return t.Variance(x, nil, false, 1) }),

		grad(unary("sum_axis", in(2, 3, 4), red(t.OpSum, []int{1}, false))),
		grad(unary("sum_all_grad", in(2, 3, 4), red(t.OpSum, nil, false))),
		grad(unary("mean_keep", in(2, 3, 4), red(t.OpMean, []int{0, 2}, true))),
		grad(unary("max_axis", gen(Distinct(-1, 1), 2, 3, 4), red(t.OpMax, []int{1}, false))),
		grad(unary("min_keep", gen(Distinct(-1, 1), 2, 3, 4), red(t.OpMin, []int{2}, true))),
		grad(unary("prod", gen(Uniform(0.5, 1.5), 2, 3, 2), red(t.OpProd, []int{1}, false))),
		// One zero in the first row, two in the second: exact partial products.
		grad(unary("prod_zeros", Input{Shape: t.Shape{2, 3}, Values: []float64{0, 0.5, 1.5, 0, 0, 2}}, red(t.OpProd, []int{1}, false))),
		grad(unary("variance", in(2, 5), func(x *t.Node) *t.Node { return t.Variance(x, []int{1}, false, 0) })),
		grad(unary("variance_sample", in(3, 4), func(x *t.Node) *t.Node { return t.Variance(x, []int{0}, true, 1) })),
		grad(unary("cumsum_grad", in(2, 4), func(x *t.Node) *t.Node { return t.CumSum(x, 1, false, false) })),
		grad(unary("cumsum_exclusive_reverse_grad", in(3, 2), func(x *t.Node) *t.Node { return t.CumSum(x, 0, true, true) })),
		grad(unary("topk_values", gen(Distinct(-1, 1), 2, 5), func(x *t.Node) *t.Node { v, _ := t.TopK(x, 2, 1, true); return v })),
	}
	return cs
}
