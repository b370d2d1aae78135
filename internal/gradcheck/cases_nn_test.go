package gradcheck

import t "github.com/gml-dev/gml/tensor"

func convCases() []Case {
	conv := func(name string, x, w Input, at t.ConvAttr) Case {
		return binary(name, x, w, func(x, w *t.Node) *t.Node { return t.Conv(x, w, at) })
	}
	return []Case{
		conv("conv1d_stride_pad", in(2, 3, 7), in(4, 3, 3), t.ConvAttr{Stride: []int{2}, PadBegin: []int{1}, PadEnd: []int{0}}),
		conv("conv2d_groups_stride", in(1, 4, 5, 5), in(6, 2, 3, 3),
			t.ConvAttr{Stride: []int{2, 1}, PadBegin: []int{1, 0}, PadEnd: []int{1, 1}, Groups: 2}),
		conv("conv2d_dilation", in(1, 2, 6, 5), in(3, 2, 2, 2), t.ConvAttr{Dilation: []int{2, 1}, PadBegin: []int{1, 1}, PadEnd: []int{0, 1}}),
		conv("conv2d_depthwise", in(2, 3, 4, 4), in(6, 1, 3, 3), t.ConvAttr{Groups: 3, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}}),
		binary("conv_transpose2d", in(1, 4, 3, 3), in(4, 3, 3, 3), func(x, w *t.Node) *t.Node {
			return t.ConvTranspose(x, w, t.ConvAttr{Stride: []int{2, 2}, PadBegin: []int{1, 0}, PadEnd: []int{1, 1},
				OutputPadding: []int{1, 0}, Groups: 2})
		}),
		binary("conv_transpose1d_dilation", in(2, 2, 4), in(2, 3, 2), func(x, w *t.Node) *t.Node {
			return t.ConvTranspose(x, w, t.ConvAttr{Dilation: []int{2}, Stride: []int{3}, OutputPadding: []int{2}})
		}),
		// Second order: the filter gradient is linear in the input and the output gradient.
		binary("conv_filter_grad", in(1, 2, 5, 4), in(1, 4, 2, 4), func(x, gy *t.Node) *t.Node {
			return t.ConvFilterGrad(x, gy, t.ConvAttr{Stride: []int{2, 1}, PadBegin: []int{0, 1}, PadEnd: []int{1, 0},
				FilterShape: t.Shape{4, 2, 3, 2}})
		}),
		unary("im2col", in(1, 2, 4, 5), func(x *t.Node) *t.Node {
			return t.Im2Col(x, t.ConvAttr{Stride: []int{2, 1}, PadBegin: []int{1, 0}, PadEnd: []int{0, 1}, FilterShape: t.Shape{3, 2}})
		}),
		unary("max_pool", gen(Distinct(-1, 1), 2, 2, 4, 4), func(x *t.Node) *t.Node { return t.MaxPool2D(x, 2, 2) }),
		unary("max_pool_overlap_pad", gen(Distinct(-1, 1), 1, 2, 5, 4), func(x *t.Node) *t.Node {
			return t.MaxPool(x, t.PoolAttr{Kernel: []int{3, 2}, Stride: []int{1, 2}, PadBegin: []int{1, 0}, PadEnd: []int{1, 1}})
		}),
		unary("avg_pool_pad", in(1, 2, 5, 5), func(x *t.Node) *t.Node {
			return t.AvgPool(x, t.PoolAttr{Kernel: []int{3, 3}, Stride: []int{2, 2}, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}})
		}),
		unary("avg_pool_count_pad", in(1, 1, 4, 5), func(x *t.Node) *t.Node {
			return t.AvgPool(x, t.PoolAttr{Kernel: []int{2, 3}, PadBegin: []int{1, 1}, PadEnd: []int{0, 1}, CountIncludePad: true})
		}),
		unary("avg_pool_grad", in(1, 2, 2, 2), func(gy *t.Node) *t.Node {
			return t.AvgPoolGrad(gy, t.Shape{1, 2, 5, 4}, t.PoolAttr{Kernel: []int{3, 2}, Stride: []int{2, 2}, PadBegin: []int{1, 0}})
		}),
		unary("global_avg_pool", in(2, 3, 2, 3), t.GlobalAvgPool),
	}
}

func normCases() []Case {
	return []Case{
		unary("softmax", in(3, 4), func(x *t.Node) *t.Node { return t.Softmax(x, -1) }),
		unary("softmax_axis0", in(3, 4), func(x *t.Node) *t.Node { return t.Softmax(x, 0) }),
		binary("softmax_masked_scaled", in(2, 3, 4), in(1, 4), func(x, m *t.Node) *t.Node {
			return t.SoftmaxMasked(x, m, -1, 0.7)
		}),
		unary("log_softmax", in(3, 4), func(x *t.Node) *t.Node { return t.LogSoftmax(x, 1) }),
		binary("log_softmax_masked_scaled", in(3, 4), in(3, 1), func(x, m *t.Node) *t.Node {
			return t.Apply(t.OpLogSoftmax, t.SoftmaxAttr{Axis: 0, Scale: 1.5}, x, m)
		}),
		{Name: "layer_norm", Inputs: []Input{in(3, 5), in(5), in(5)},
			Build: func(x []*t.Node) *t.Node { return t.LayerNorm(x[0], x[1], x[2], nil, 1e-5) }},
		unary("layer_norm_two_axes", in(2, 3, 4), func(x *t.Node) *t.Node { return t.LayerNorm(x, nil, nil, []int{-2, -1}, 1e-5) }),
		binary("layer_norm_gamma", in(4, 3), in(3), func(x, g *t.Node) *t.Node { return t.LayerNorm(x, g, nil, nil, 1e-3) }),
		binary("rms_norm", in(3, 5), in(5), func(x, g *t.Node) *t.Node { return t.RMSNorm(x, g, nil, 1e-5) }),
		unary("rms_norm_plain", in(2, 2, 3), func(x *t.Node) *t.Node { return t.RMSNorm(x, nil, []int{-2, -1}, 1e-5) }),
		{Name: "attention", Inputs: []Input{in(1, 2, 3, 4), in(1, 2, 5, 4), in(1, 2, 5, 3)},
			Build: func(x []*t.Node) *t.Node { return t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{}) }},
		{Name: "attention_causal_masked", Inputs: []Input{in(2, 1, 3, 2), in(2, 1, 4, 2), in(2, 1, 4, 3), in(1, 1, 3, 4)},
			Build: func(x []*t.Node) *t.Node {
				return t.Attention(x[0], x[1], x[2], x[3], t.AttentionAttr{Causal: true, Scale: 0.8})
			}},
		// The fused backward (OpAttentionGrad): cross attention with a feature size that is
		// not a multiple of four, and causal cross attention with more keys than queries
		// under a learned mask broadcast over the queries.
		{Name: "attention_cross_odd_features", Inputs: []Input{in(2, 1, 3, 5), in(2, 1, 6, 5), in(2, 1, 6, 3)},
			Build: func(x []*t.Node) *t.Node { return t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{Scale: 0.7}) }},
		{Name: "attention_causal_cross_masked", Inputs: []Input{in(1, 2, 4, 3), in(1, 2, 6, 3), in(1, 2, 6, 5), in(2, 1, 6)},
			Build: func(x []*t.Node) *t.Node {
				return t.Attention(x[0], x[1], x[2], x[3], t.AttentionAttr{Causal: true})
			}},
		{Name: "attention_causal_tall", Inputs: []Input{in(1, 5, 3), in(1, 3, 3), in(1, 3, 2)},
			Build: func(x []*t.Node) *t.Node { return t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{Causal: true}) }},
		{Name: "rope_partial", Inputs: []Input{in(1, 2, 3, 6), ints([]float64{0, 5, 2}, 3)},
			Build: func(x []*t.Node) *t.Node { return t.RoPE(x[0], x[1], t.RoPEAttr{Dims: 4, Base: 100}) }},
		{Name: "rope_i32_positions", Inputs: []Input{in(2, 4), {Shape: t.Shape{2}, DType: t.I32, Values: []float64{3, 1}}},
			Build: func(x []*t.Node) *t.Node { return t.RoPE(x[0], x[1], t.RoPEAttr{}) }},
	}
}

// compositeCases are builders made of other ops: their gradients come from the rules of
// the parts, and checking them checks the parts working together.
func compositeCases() []Case {
	oneHot := Input{Shape: t.Shape{3, 4}, Values: []float64{0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1}, Fixed: true}
	targets := Input{Shape: t.Shape{3, 4}, Gen: Uniform(0.25, 0.9), Fixed: true}
	return []Case{
		binary("softmax_cross_entropy", in(3, 4), oneHot, func(l, y *t.Node) *t.Node { return t.SoftmaxCrossEntropy(l, y, -1) }),
		{Name: "sparse_softmax_cross_entropy", Inputs: []Input{in(3, 4), ints([]float64{1, 0, 3}, 3)},
			Build: func(x []*t.Node) *t.Node { return t.SparseSoftmaxCrossEntropy(x[0], x[1]) }},
		binary("cross_entropy", gen(Uniform(0.25, 0.9), 3, 4), oneHot, t.CrossEntropy),
		binary("binary_cross_entropy", gen(Uniform(0.25, 0.9), 3, 4), targets, t.BinaryCrossEntropy),
		binary("binary_cross_entropy_logits", in(3, 4), targets, t.BinaryCrossEntropyWithLogits),
		binary("mse", in(3, 4), in(3, 4), t.MSE),
		binary("mae", in(3, 4), Input{Shape: t.Shape{3, 4}, Gen: Uniform(2, 3)}, t.MAE),
		binary("huber", gen(Away(-3, 3, 0.05, -1, 1), 3, 4), Input{Shape: t.Shape{3, 4}, Values: make([]float64, 12), Fixed: true},
			func(p, y *t.Node) *t.Node { return t.Huber(p, y, 1) }),
		{Name: "batch_norm_train", Inputs: []Input{in(4, 2, 3), in(2), in(2)},
			Build: func(x []*t.Node) *t.Node {
				_, _, y := t.BatchNormTrain(x[0], x[1], x[2], []int{0, 2}, 1e-5)
				return y
			}},
		{Name: "group_norm", Inputs: []Input{in(2, 4, 3), in(4), in(4)},
			Build: func(x []*t.Node) *t.Node { return t.GroupNorm(x[0], 2, x[1], x[2], 1e-5) }},
		{Name: "lstm_cell", Inputs: []Input{in(2, 3), in(2, 2), in(2, 2), in(3, 8), in(2, 8), in(8)},
			Build: func(x []*t.Node) *t.Node {
				h, c := t.LSTMCell(x[0], x[1], x[2], x[3], x[4], x[5])
				return t.Concat(1, h, c)
			}},
		{Name: "gru_cell", Inputs: []Input{in(2, 3), in(2, 2), in(3, 6), in(2, 6), in(6), in(6)},
			Build: func(x []*t.Node) *t.Node { return t.GRUCell(x[0], x[1], x[2], x[3], x[4], x[5]) }},
	}
}

// secondOrderCases differentiate gradients: each output is itself a gradient built by
// tensor.Grad, so the check exercises the rules of the ops backward graphs are made of.
func secondOrderCases() []Case {
	gradOf := func(loss func(x []*t.Node) *t.Node, wrt int) func(x []*t.Node) *t.Node {
		return func(x []*t.Node) *t.Node { return t.Grad(loss(x), []*t.Node{x[wrt]})[0] }
	}
	return []Case{
		{Name: "second_order_mlp", Inputs: []Input{in(2, 3), in(3, 4)}, Build: gradOf(func(x []*t.Node) *t.Node {
			return t.Sum(t.Tanh(t.MatMul(x[0], x[1])), nil, false)
		}, 1)},
		{Name: "second_order_softmax_norm", Inputs: []Input{in(2, 4), in(4)}, Build: gradOf(func(x []*t.Node) *t.Node {
			y := t.LayerNorm(x[0], x[1], nil, nil, 1e-5)
			return t.Sum(t.Mul(t.LogSoftmax(y, -1), t.Softmax(x[0], -1)), nil, false)
		}, 0)},
		{Name: "second_order_conv_pool", Inputs: []Input{in(1, 2, 5, 5), in(3, 2, 3, 3)}, Build: gradOf(func(x []*t.Node) *t.Node {
			y := t.Conv(x[0], x[1], t.ConvAttr{Stride: []int{2, 2}, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}})
			return t.Sum(t.Square(t.AvgPool(y, t.PoolAttr{Kernel: []int{2, 2}, Stride: []int{1, 1}})), nil, false)
		}, 0)},
		// Attention's backward op differentiated through its decomposition: ∂q (statistics
		// and the query pass) under a causal mask, ∂k (the key pass) of cross attention,
		// and self-attention, where one node fills the q, k and v slots.
		{Name: "second_order_attention_q", Inputs: []Input{in(1, 2, 3, 3), in(1, 2, 4, 3), in(1, 2, 4, 2), in(3, 4)},
			Build: gradOf(func(x []*t.Node) *t.Node {
				return t.Sum(t.Square(t.Attention(x[0], x[1], x[2], x[3], t.AttentionAttr{Causal: true})), nil, false)
			}, 0)},
		{Name: "second_order_attention_k", Inputs: []Input{in(2, 2, 3), in(2, 4, 3), in(2, 4, 2)},
			Build: gradOf(func(x []*t.Node) *t.Node {
				return t.Sum(t.Square(t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{Scale: 0.8})), nil, false)
			}, 1)},
		{Name: "second_order_self_attention", Inputs: []Input{in(1, 3, 2)}, Build: gradOf(func(x []*t.Node) *t.Node {
			return t.Sum(t.Square(t.Attention(x[0], x[0], x[0], nil, t.AttentionAttr{Causal: true})), nil, false)
		}, 0)},
		{Name: "second_order_elementwise", Inputs: []Input{gen(positive, 2, 3), in(3)}, Build: gradOf(func(x []*t.Node) *t.Node {
			return t.Sum(t.Mul(t.Pow(x[0], x[1]), t.Gelu(x[1], t.GeluTanh)), nil, false)
		}, 0)},
	}
}
