package backendtest

import (
	"fmt"

	t "github.com/gml-dev/gml/tensor"
)

// Cases of convolution and pooling: strides, asymmetric padding, dilation, groups,
// depthwise and pointwise filters, 1-D, shapes that take the GPU's split-K path, empty
// batches, and pooling windows with ties (the max gradient goes to the first maximum).

func convCases() []Case {
	convs := []struct {
		name string
		x, w t.Shape
		at   t.ConvAttr
	}{
		{"plain", t.Shape{2, 3, 7, 9}, t.Shape{5, 3, 3, 3}, t.ConvAttr{}},
		{"stride_pad_dilation", t.Shape{3, 4, 11, 10}, t.Shape{6, 4, 3, 2}, t.ConvAttr{Stride: []int{2, 3}, PadBegin: []int{1, 0}, PadEnd: []int{2, 1}, Dilation: []int{2, 1}}},
		{"groups", t.Shape{2, 6, 9, 8}, t.Shape{8, 3, 3, 3}, t.ConvAttr{Groups: 2, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}}},
		{"depthwise", t.Shape{2, 5, 10, 7}, t.Shape{10, 1, 3, 3}, t.ConvAttr{Groups: 5, Stride: []int{2, 2}, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}}},
		{"conv1d", t.Shape{3, 4, 17}, t.Shape{7, 4, 5}, t.ConvAttr{Stride: []int{2}, Dilation: []int{2}, PadBegin: []int{3}, PadEnd: []int{1}}},
		{"conv1d_groups", t.Shape{2, 4, 9}, t.Shape{4, 1, 3}, t.ConvAttr{Groups: 4, PadBegin: []int{2}, PadEnd: []int{2}}},
		{"pointwise", t.Shape{2, 40, 6, 6}, t.Shape{70, 40, 1, 1}, t.ConvAttr{}},
		{"wide", t.Shape{2, 19, 13, 13}, t.Shape{33, 19, 3, 3}, t.ConvAttr{PadBegin: []int{1, 1}, PadEnd: []int{1, 1}}},
		// Long reductions over few filter-gradient outputs take the GPU's split-K path.
		{"split_k", t.Shape{4, 3, 20, 19}, t.Shape{8, 3, 3, 3}, t.ConvAttr{}},
		{"split_k_depthwise", t.Shape{3, 6, 24, 25}, t.Shape{6, 1, 3, 3}, t.ConvAttr{Groups: 6, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}}},
		{"empty_batch", t.Shape{0, 2, 1, 1}, t.Shape{3, 2, 1, 1}, t.ConvAttr{}},
	}
	var cs []Case
	for _, c := range convs {
		at := c.at
		cs = append(cs, binary("conv_"+c.name, in(c.x...), in(c.w...), func(x, w *t.Node) *t.Node { return t.Conv(x, w, at) }).in(t.F32, t.F16, t.BF16))
		// The transposed convolution and the filter gradient of the same geometry, fed
		// an output gradient of the forward output's shape.
		y := forwardShape(c.x, c.w, at)
		full := at
		full.FilterShape = c.w
		tat := normalised(c.x, c.w, at)
		tat.OutputPadding = make([]int, len(tat.Stride))
		for i := range tat.Stride {
			natural := (y[2+i]-1)*tat.Stride[i] - tat.PadBegin[i] - tat.PadEnd[i] + tat.Dilation[i]*(c.w[2+i]-1) + 1
			tat.OutputPadding[i] = c.x[2+i] - natural
		}
		if ok := tat.OutputPadding[0] < tat.Stride[0] && tat.OutputPadding[len(tat.Stride)-1] < tat.Stride[len(tat.Stride)-1]; ok {
			cs = append(cs, binary("conv_transpose_"+c.name, in(y...), in(c.w...), func(gy, w *t.Node) *t.Node { return t.ConvTranspose(gy, w, tat) }))
		}
		cs = append(cs, binary("conv_filter_grad_"+c.name, in(c.x...), in(y...), func(x, gy *t.Node) *t.Node { return t.ConvFilterGrad(x, gy, full) }).in(t.F32, t.F16, t.BF16))
		if at.Groups <= 1 {
			iat := at
			iat.FilterShape = c.w[2:]
			cs = append(cs, unary("im2col_"+c.name, in(c.x...), func(x *t.Node) *t.Node { return t.Im2Col(x, iat) }).in(t.F32, t.F16, t.BF16))
		}
	}
	cs = append(cs,
		binary("conv_transpose_same_stride2", in(2, 6, 5, 7), in(6, 3, 3, 3), func(x, w *t.Node) *t.Node {
			return t.ConvTranspose2D(x, w, t.ConvOptions{Stride: []int{2}, Padding: t.ConvPadding{Mode: t.PaddingSame}})
		}).in(t.F32, t.F16, t.BF16),
		grad(binary("conv_transpose_output_padding_groups", in(1, 4, 6, 3), in(4, 5, 4, 2), func(x, w *t.Node) *t.Node {
			return t.ConvTranspose2D(x, w, t.ConvOptions{Stride: []int{3, 2}, OutputPadding: []int{2, 1}, Groups: 2, Dilation: []int{1, 2}})
		})),
		grad(binary("conv1d_stride_pad", in(2, 3, 7), in(4, 3, 3), func(x, w *t.Node) *t.Node {
			return t.Conv(x, w, t.ConvAttr{Stride: []int{2}, PadBegin: []int{1}, PadEnd: []int{0}})
		})),
		grad(binary("conv2d_groups_stride", in(1, 4, 5, 5), in(6, 2, 3, 3), func(x, w *t.Node) *t.Node {
			return t.Conv(x, w, t.ConvAttr{Stride: []int{2, 1}, PadBegin: []int{1, 0}, PadEnd: []int{1, 1}, Groups: 2})
		})),
		grad(binary("conv2d_dilation", in(1, 2, 6, 5), in(3, 2, 2, 2), func(x, w *t.Node) *t.Node {
			return t.Conv(x, w, t.ConvAttr{Dilation: []int{2, 1}, PadBegin: []int{1, 1}, PadEnd: []int{0, 1}})
		})),
		grad(binary("conv2d_depthwise", in(2, 3, 4, 4), in(6, 1, 3, 3), func(x, w *t.Node) *t.Node {
			return t.Conv(x, w, t.ConvAttr{Groups: 3, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}})
		})),
		grad(binary("conv_transpose1d_dilation", in(2, 2, 4), in(2, 3, 2), func(x, w *t.Node) *t.Node {
			return t.ConvTranspose(x, w, t.ConvAttr{Dilation: []int{2}, Stride: []int{3}, OutputPadding: []int{2}})
		})),
		// Second order: the filter gradient is linear in the input and the output gradient.
		grad(binary("conv_filter_grad_grad", in(1, 2, 5, 4), in(1, 4, 2, 4), func(x, gy *t.Node) *t.Node {
			return t.ConvFilterGrad(x, gy, t.ConvAttr{Stride: []int{2, 1}, PadBegin: []int{0, 1}, PadEnd: []int{1, 0}, FilterShape: t.Shape{4, 2, 3, 2}})
		})),
		grad(unary("im2col_grad", in(1, 2, 4, 5), func(x *t.Node) *t.Node {
			return t.Im2Col(x, t.ConvAttr{Stride: []int{2, 1}, PadBegin: []int{1, 0}, PadEnd: []int{0, 1}, FilterShape: t.Shape{3, 2}})
		})),
	)
	pools := []struct {
		name string
		x    t.Shape
		at   t.PoolAttr
	}{
		{"k2s2", t.Shape{2, 3, 8, 8}, t.PoolAttr{Kernel: []int{2, 2}}},
		{"k3s2_pad", t.Shape{2, 3, 9, 10}, t.PoolAttr{Kernel: []int{3, 3}, Stride: []int{2, 2}, PadBegin: []int{1, 1}, PadEnd: []int{1, 0}}},
		{"include_pad", t.Shape{1, 4, 7, 5}, t.PoolAttr{Kernel: []int{3, 2}, Stride: []int{1, 2}, PadBegin: []int{1, 1}, PadEnd: []int{2, 1}, CountIncludePad: true}},
		{"overlap", t.Shape{3, 2, 11, 6}, t.PoolAttr{Kernel: []int{4, 3}, Stride: []int{1, 1}}},
		{"pool1d", t.Shape{2, 5, 23}, t.PoolAttr{Kernel: []int{5}, Stride: []int{3}, PadBegin: []int{2}, PadEnd: []int{2}}},
		{"unit", t.Shape{0, 2, 1, 1}, t.PoolAttr{Kernel: []int{1, 1}}},
	}
	// Small whole numbers: windows hold ties, so the max gradient must take the first.
	ties := Ints(0, 3)
	for _, p := range pools {
		at := p.at
		y := poolShape(p.x, at)
		cs = append(cs,
			unary("max_pool_"+p.name, gen(ties, p.x...), func(x *t.Node) *t.Node { return t.MaxPool(x, at) }).in(t.F32, t.F16, t.BF16),
			unary("avg_pool_"+p.name, in(p.x...), func(x *t.Node) *t.Node { return t.AvgPool(x, at) }).in(t.F32, t.F16, t.BF16),
			binary("max_pool_grad_"+p.name, gen(ties, p.x...), in(y...), func(x, gy *t.Node) *t.Node { return t.MaxPoolGrad(x, gy, at) }).in(t.F32, t.F16, t.BF16),
			unary("avg_pool_grad_"+p.name, in(y...), func(gy *t.Node) *t.Node { return t.AvgPoolGrad(gy, p.x, at) }).in(t.F32, t.F16, t.BF16),
		)
	}
	return append(cs,
		grad(unary("max_pool_distinct", gen(Distinct(-1, 1), 2, 2, 4, 4), func(x *t.Node) *t.Node { return t.MaxPool2D(x, 2, 2) })),
		grad(unary("max_pool_overlap_pad", gen(Distinct(-1, 1), 1, 2, 5, 4), func(x *t.Node) *t.Node {
			return t.MaxPool(x, t.PoolAttr{Kernel: []int{3, 2}, Stride: []int{1, 2}, PadBegin: []int{1, 0}, PadEnd: []int{1, 1}})
		})),
		grad(unary("avg_pool_pad", in(1, 2, 5, 5), func(x *t.Node) *t.Node {
			return t.AvgPool(x, t.PoolAttr{Kernel: []int{3, 3}, Stride: []int{2, 2}, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}})
		})),
		grad(unary("avg_pool_count_pad", in(1, 1, 4, 5), func(x *t.Node) *t.Node {
			return t.AvgPool(x, t.PoolAttr{Kernel: []int{2, 3}, PadBegin: []int{1, 1}, PadEnd: []int{0, 1}, CountIncludePad: true})
		})),
		grad(unary("avg_pool_grad_grad", in(1, 2, 2, 2), func(gy *t.Node) *t.Node {
			return t.AvgPoolGrad(gy, t.Shape{1, 2, 5, 4}, t.PoolAttr{Kernel: []int{3, 2}, Stride: []int{2, 2}, PadBegin: []int{1, 0}})
		})),
		grad(unary("global_avg_pool", in(2, 3, 2, 3), t.GlobalAvgPool)),
	)
}

// forwardShape is the output shape of Conv(x, w, at).
func forwardShape(x, w t.Shape, at t.ConvAttr) t.Shape {
	var s t.Shape
	build(func(g *t.Graph) { s = t.Conv(g.Input("x", t.F32, x...), g.Input("w", t.F32, w...), at).Shape() })
	return s
}

// normalised is at with its defaults filled in, as Conv stores it.
func normalised(x, w t.Shape, at t.ConvAttr) t.ConvAttr {
	var n t.ConvAttr
	build(func(g *t.Graph) {
		n = t.Conv(g.Input("x", t.F32, x...), g.Input("w", t.F32, w...), at).Attr().(t.ConvAttr)
	})
	return n
}

// poolShape is the output shape of MaxPool(x, at).
func poolShape(x t.Shape, at t.PoolAttr) t.Shape {
	var s t.Shape
	build(func(g *t.Graph) { s = t.MaxPool(g.Input("x", t.F32, x...), at).Shape() })
	return s
}

// build runs f on a new graph; the case tables only build valid graphs, so a failure is
// a bug in the table.
func build(f func(g *t.Graph)) {
	if err := t.Catch(func() { f(t.NewGraph()) }); err != nil {
		panic(fmt.Sprint("backendtest: a case table builds an invalid graph: ", err))
	}
}
