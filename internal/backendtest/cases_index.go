package backendtest

import t "github.com/gml-dev/gml/tensor"

// Cases of the index ops, in every dtype they take, with I32 and I64 indices, negative
// indices (counting from the end of the axis) and repeated ones.

func indexCases() []Case {
	ix := func(dt t.DType, lo, hi int, shape ...int) Input {
		return Input{Shape: shape, DType: dt, Own: true, Gen: Ints(lo, hi)}
	}
	var cs []Case
	for _, it := range []t.DType{t.I32, t.I64} {
		s := "_" + it.String()
		cs = append(cs,
			binary("embedding"+s, in(11, 7), ix(it, -11, 10, 3, 5), t.Embedding).in(allTypes...),
			binary("gather_axis1"+s, in(3, 6, 5), ix(it, -6, 5, 9), func(x, i *t.Node) *t.Node { return t.Gather(x, i, 1) }).in(allTypes...),
			binary("gather_index_matrix"+s, in(4, 3, 2), ix(it, -3, 2, 5, 1), func(x, i *t.Node) *t.Node { return t.Gather(x, i, 1) }),
			binary("take_along"+s, in(4, 7, 3), ix(it, -7, 6, 4, 5, 2), func(x, i *t.Node) *t.Node { return t.TakeAlong(x, i, 1) }).in(allTypes...),
			Case{Name: "scatter" + s, Inputs: []Input{in(5, 6), ix(it, -5, 4, 3, 4), in(3, 4)},
				Build: func(x []*t.Node) *t.Node { return t.Scatter(x[0], x[1], x[2], 0, t.ScatterReduceNone) }, DTypes: allTypes},
			Case{Name: "scatter_reduce_add" + s, Inputs: []Input{in(5, 6), ix(it, -5, 4, 7, 6), in(7, 6)},
				Build: func(x []*t.Node) *t.Node { return t.Scatter(x[0], x[1], x[2], 0, t.ScatterReduceAdd) }, DTypes: []t.DType{t.F32, t.I32, t.I64}},
			Case{Name: "scatter_add" + s, Inputs: []Input{in(4, 3, 2), ix(it, -4, 3, 5), in(5, 3, 2)},
				Build: func(x []*t.Node) *t.Node { return t.ScatterAdd(x[0], x[1], x[2], 0) }, DTypes: []t.DType{t.F32, t.F16, t.BF16, t.I32, t.I64}},
			Case{Name: "scatter_reduce_add_axis1" + s, Inputs: []Input{in(4, 9, 3), ix(it, -4, 3, 4, 5, 3), in(4, 5, 3)},
				Build: func(x []*t.Node) *t.Node { return t.Scatter(x[0], x[1], x[2], 1, t.ScatterReduceAdd) }, DTypes: []t.DType{t.F32, t.I32, t.I64}},
			Case{Name: "scatter_add_axis1" + s, Inputs: []Input{in(2, 6, 5), ix(it, -6, 5, 3, 4), in(2, 3, 4, 5)},
				Build: func(x []*t.Node) *t.Node { return t.ScatterAdd(x[0], x[1], x[2], 1) }, DTypes: []t.DType{t.F32, t.I32, t.I64}},
			// An embedding gradient: more indices than a workgroup, rows wider than one.
			Case{Name: "scatter_add_embedding_grad" + s, Inputs: []Input{in(50, 300), ix(it, 0, 49, 7, 101), in(7, 101, 300)},
				Build: func(x []*t.Node) *t.Node { return t.ScatterAdd(x[0], x[1], x[2], 0) }, DTypes: []t.DType{t.F32, t.I32, t.I64}},
			Case{Name: "scatter_add_large" + s, Inputs: []Input{in(50, 300), ix(it, 0, 49, 400), in(400, 300)},
				Build: func(x []*t.Node) *t.Node { return t.ScatterAdd(x[0], x[1], x[2], 0) }, Tol: 1e-5},
			// Labels outside [0, depth) give all-zero rows.
			unary("one_hot"+s, ix(it, -2, 9, 4, 3), func(i *t.Node) *t.Node { return t.OneHot(i, 7, t.F32) }),
		)
		for _, dt := range allTypes[1:] {
			cs = append(cs, unary("one_hot"+s+"_to_"+dt.String(), ix(it, -2, 9, 5), func(i *t.Node) *t.Node { return t.OneHot(i, 4, dt) }))
		}
	}
	return append(cs,
		grad(Case{Name: "gather_duplicates", Inputs: []Input{in(3, 4), idx([]float64{2, 0, 2, 3}, 2, 2)},
			Build: func(x []*t.Node) *t.Node { return t.Gather(x[0], x[1], 1) }}),
		grad(Case{Name: "embedding_grad", Inputs: []Input{in(5, 3), idx([]float64{4, 1, 4}, 3)},
			Build: func(x []*t.Node) *t.Node { return t.Embedding(x[0], x[1]) }}),
		grad(Case{Name: "take_along_grad", Inputs: []Input{in(3, 4), idx([]float64{1, 1, 0, 3, 2, 2}, 3, 2)},
			Build: func(x []*t.Node) *t.Node { return t.TakeAlong(x[0], x[1], 1) }}),
		grad(Case{Name: "scatter_grad", Inputs: []Input{in(3, 4), idx([]float64{1, 3, 0, 2, 3, 0}, 3, 2), in(3, 2)},
			Build: func(x []*t.Node) *t.Node { return t.Scatter(x[0], x[1], x[2], 1, t.ScatterReduceNone) }}),
		grad(Case{Name: "scatter_reduce_add_grad", Inputs: []Input{in(3, 4), idx([]float64{1, 1, 0, 2, 3, 0}, 3, 2), in(3, 2)},
			Build: func(x []*t.Node) *t.Node { return t.Scatter(x[0], x[1], x[2], 1, t.ScatterReduceAdd) }}),
		grad(Case{Name: "scatter_add_grad", Inputs: []Input{in(4, 3), idx([]float64{3, 0, 3}, 3), in(3, 3)},
			Build: func(x []*t.Node) *t.Node { return t.ScatterAdd(x[0], x[1], x[2], 0) }}),
	)
}
