package backendtest

import t "github.com/gml-dev/gml/tensor"

// Cases of the composite builders (losses, batch and group norm, recurrent cells) and
// of second-order gradients: their results come from the ops they are made of, so
// checking them checks those ops working together, and the backward graphs of
// backward graphs.

func compositeCases() []Case {
	oneHot := Input{Shape: t.Shape{3, 4}, Values: []float64{0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1}, Fixed: true}
	targets := Input{Shape: t.Shape{3, 4}, Gen: Uniform(0.25, 0.9), Fixed: true}
	extreme := Input{Shape: t.Shape{4, 4}, Values: extremeLogits}
	extremeOneHot := Input{Shape: t.Shape{4, 4}, Values: []float64{0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1}, Fixed: true}
	gradOf := func(loss func(x []*t.Node) *t.Node, wrt int) func(x []*t.Node) *t.Node {
		return func(x []*t.Node) *t.Node { return t.Grad(loss(x), []*t.Node{x[wrt]})[0] }
	}
	return []Case{
		// Cross-entropy of logits far beyond exp's range stays finite: log-sum-exp
		// after the max subtraction.
		binary("softmax_cross_entropy_extreme_logits", extreme, extremeOneHot, func(l, y *t.Node) *t.Node {
			return t.SoftmaxCrossEntropyPerSample(l, y, -1)
		}),
		binary("sparse_softmax_cross_entropy_extreme_logits", extreme, idx([]float64{2, 1, 0, 3}, 4), t.SparseSoftmaxCrossEntropyPerSample),
		grad(binary("softmax_cross_entropy_extreme_logits_grad", gen(extremeRows, 3, 4), oneHot, func(l, y *t.Node) *t.Node {
			return t.SoftmaxCrossEntropy(l, y, -1)
		})),
		grad(binary("softmax_cross_entropy", in(3, 4), oneHot, func(l, y *t.Node) *t.Node { return t.SoftmaxCrossEntropy(l, y, -1) })),
		grad(binary("sparse_softmax_cross_entropy", in(3, 4), idx([]float64{1, 0, 3}, 3), t.SparseSoftmaxCrossEntropy)),
		grad(binary("cross_entropy", gen(Uniform(0.25, 0.9), 3, 4), oneHot, t.CrossEntropy)),
		grad(binary("binary_cross_entropy", gen(Uniform(0.25, 0.9), 3, 4), targets, t.BinaryCrossEntropy)),
		grad(binary("binary_cross_entropy_logits", in(3, 4), targets, t.BinaryCrossEntropyWithLogits)),
		binary("binary_cross_entropy_logits_extreme", Input{Shape: t.Shape{2, 4}, Values: []float64{100, -100, 1000, -1000, 30, -30, 0, 1}}, gen(Uniform(0, 1), 2, 4),
			t.BinaryCrossEntropyWithLogitsPerSample),
		grad(binary("mse", in(3, 4), in(3, 4), t.MSE)),
		grad(binary("mae", in(3, 4), Input{Shape: t.Shape{3, 4}, Gen: Uniform(2, 3)}, t.MAE)),
		grad(binary("huber", gen(Away(-3, 3, 0.05, -1, 1), 3, 4), Input{Shape: t.Shape{3, 4}, Values: make([]float64, 12), Fixed: true},
			func(p, y *t.Node) *t.Node { return t.Huber(p, y, 1) })),
		grad(Case{Name: "batch_norm_train", Inputs: []Input{in(4, 2, 3), in(2), in(2)},
			Build: func(x []*t.Node) *t.Node {
				_, _, y := t.BatchNormTrain(x[0], x[1], x[2], []int{0, 2}, 1e-5)
				return y
			}}),
		grad(Case{Name: "group_norm", Inputs: []Input{in(2, 4, 3), in(4), in(4)},
			Build: func(x []*t.Node) *t.Node { return t.GroupNorm(x[0], 2, x[1], x[2], 1e-5) }}),
		grad(Case{Name: "lstm_cell", Inputs: []Input{in(2, 3), in(2, 2), in(2, 2), in(3, 8), in(2, 8), in(8)},
			Build: func(x []*t.Node) *t.Node {
				h, c := t.LSTMCell(x[0], x[1], x[2], x[3], x[4], x[5])
				return t.Concat(1, h, c)
			}}),
		grad(Case{Name: "gru_cell", Inputs: []Input{in(2, 3), in(2, 2), in(3, 6), in(2, 6), in(6), in(6)},
			Build: func(x []*t.Node) *t.Node { return t.GRUCell(x[0], x[1], x[2], x[3], x[4], x[5]) }}),

		// Second order: each output is itself a gradient built by tensor.Grad.
		grad(Case{Name: "second_order_mlp", Inputs: []Input{in(2, 3), in(3, 4)}, Build: gradOf(func(x []*t.Node) *t.Node {
			return t.Sum(t.Tanh(t.MatMul(x[0], x[1])), nil, false)
		}, 1)}),
		grad(Case{Name: "second_order_softmax_norm", Inputs: []Input{in(2, 4), in(4)}, Build: gradOf(func(x []*t.Node) *t.Node {
			y := t.LayerNorm(x[0], x[1], nil, nil, 1e-5)
			return t.Sum(t.Mul(t.LogSoftmax(y, -1), t.Softmax(x[0], -1)), nil, false)
		}, 0)}),
		grad(Case{Name: "second_order_conv_pool", Inputs: []Input{in(1, 2, 5, 5), in(3, 2, 3, 3)}, Build: gradOf(func(x []*t.Node) *t.Node {
			y := t.Conv(x[0], x[1], t.ConvAttr{Stride: []int{2, 2}, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}})
			return t.Sum(t.Square(t.AvgPool(y, t.PoolAttr{Kernel: []int{2, 2}, Stride: []int{1, 1}})), nil, false)
		}, 0)}),
		// Attention's backward op differentiated through its decomposition: ∂q under a
		// causal mask, ∂k of cross attention, and self-attention, where one node fills
		// the q, k and v slots.
		grad(Case{Name: "second_order_attention_q", Inputs: []Input{in(1, 2, 3, 3), in(1, 2, 4, 3), in(1, 2, 4, 2), in(3, 4)},
			Build: gradOf(func(x []*t.Node) *t.Node {
				return t.Sum(t.Square(t.Attention(x[0], x[1], x[2], x[3], t.AttentionAttr{Causal: true})), nil, false)
			}, 0)}),
		grad(Case{Name: "second_order_attention_k", Inputs: []Input{in(2, 2, 3), in(2, 4, 3), in(2, 4, 2)},
			Build: gradOf(func(x []*t.Node) *t.Node {
				return t.Sum(t.Square(t.Attention(x[0], x[1], x[2], nil, t.AttentionAttr{Scale: 0.8})), nil, false)
			}, 1)}),
		grad(Case{Name: "second_order_self_attention", Inputs: []Input{in(1, 3, 2)}, Build: gradOf(func(x []*t.Node) *t.Node {
			return t.Sum(t.Square(t.Attention(x[0], x[0], x[0], nil, t.AttentionAttr{Causal: true})), nil, false)
		}, 0)}),
		grad(Case{Name: "second_order_elementwise", Inputs: []Input{gen(positive, 2, 3), in(3)}, Build: gradOf(func(x []*t.Node) *t.Node {
			return t.Sum(t.Mul(t.Pow(x[0], x[1]), t.Gelu(x[1], t.GeluTanh)), nil, false)
		}, 0)}),
	}
}
