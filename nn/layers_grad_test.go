package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/internal/backendtest"
	"github.com/gml-dev/gml/tensor"
)

// layerCase applies a layer to inputs of the given sample specs with a batch of 2.
type layerCase struct {
	name     string
	layer    func() Layer
	in       []Spec
	values   [][]float64                         // fixed values for int inputs (nil: drawn)
	gen      func(r *rand.Rand, n int) []float64 // draws the float inputs (nil: uniform)
	training bool
}

func f32(shape ...int) Spec { return Spec{DType: tensor.F32, Shape: shape} }

// TestLayerGradients checks every layer's gradient, with respect to its inputs and its
// weights, against central finite differences, both in float64 (internal/backendtest).
// The weights are fed as graph inputs in place of the runtime variables.
func TestLayerGradients(t *testing.T) {
	cases := []layerCase{
		{name: "dense_relu", layer: func() Layer { return Dense(3, Activation("relu")) }, in: []Spec{f32(4)}},
		{name: "dense_softmax_seq", layer: func() Layer { return Dense(3, Activation("softmax")) }, in: []Spec{f32(2, 4)}},
		{name: "dense_gelu", layer: func() Layer { return Dense(3, Activation("gelu")) }, in: []Spec{f32(4)}},
		{name: "dense_tanh", layer: func() Layer { return Dense(3, Activation("tanh")) }, in: []Spec{f32(4)}},
		{name: "dense_sigmoid", layer: func() Layer { return Dense(3, Activation("sigmoid")) }, in: []Spec{f32(4)}},
		{name: "dense_silu", layer: func() Layer { return Dense(3, Activation("silu")) }, in: []Spec{f32(4)}},
		{name: "dense_elu", layer: func() Layer { return Dense(3, Activation("elu")) }, in: []Spec{f32(4)}},
		{name: "dense_leaky", layer: func() Layer { return Dense(3, Activation("leaky_relu")) }, in: []Spec{f32(4)}},
		{name: "conv2d_same_stride2", layer: func() Layer { return Conv2D(2, 3, Padding("same"), Strides(2)) }, in: []Spec{f32(2, 5, 5)}},
		{name: "conv2d_valid", layer: func() Layer { return Conv2D(2, 2) }, in: []Spec{f32(1, 4, 4)}},
		{name: "conv1d", layer: func() Layer { return Conv1D(2, 3, Padding("same")) }, in: []Spec{f32(2, 6)}},
		{name: "conv2d_channels_last", layer: func() Layer { return Conv2D(2, 3, Padding("same"), Strides(2), ChannelsLast()) }, in: []Spec{f32(5, 5, 2)}},
		{name: "conv1d_channels_last_softmax", layer: func() Layer { return Conv1D(3, 2, ChannelsLast(), Activation("softmax")) }, in: []Spec{f32(5, 2)}},
		{name: "max_pool", layer: func() Layer { return MaxPooling2D(2) }, in: []Spec{f32(1, 4, 4)}},
		{name: "max_pool_channels_last", layer: func() Layer { return MaxPooling2D(2, ChannelsLast()) }, in: []Spec{f32(4, 4, 2)},
			gen: backendtest.Distinct(-2, 2)},
		{name: "avg_pool_channels_last", layer: func() Layer { return AveragePooling2D(2, Padding("same"), ChannelsLast()) }, in: []Spec{f32(3, 5, 2)}},
		{name: "global_avg_pool_channels_last", layer: func() Layer { return GlobalAveragePooling2D(ChannelsLast()) }, in: []Spec{f32(3, 3, 2)}},
		{name: "custom_gated_dense", layer: func() Layer { return Custom("gated_dense", gatedDense{Units: 3}) }, in: []Spec{f32(4)}},
		{name: "custom_bilinear_two_inputs", layer: func() Layer { return Custom("bilinear", bilinear{}) }, in: []Spec{f32(3), f32(2)}},
		{name: "lambda", layer: func() Layer {
			return Lambda(func(x *tensor.Node) *tensor.Node { return tensor.Mul(x, tensor.Sigmoid(x)) })
		}, in: []Spec{f32(2, 3)}},
		{name: "avg_pool", layer: func() Layer { return AveragePooling2D(2) }, in: []Spec{f32(2, 4, 4)}},
		{name: "global_avg_pool", layer: func() Layer { return GlobalAveragePooling2D() }, in: []Spec{f32(2, 3, 3)}},
		{name: "batch_norm_train", layer: func() Layer { return BatchNorm() }, in: []Spec{f32(2, 3, 3)}, training: true},
		{name: "batch_norm_infer", layer: func() Layer { return BatchNorm() }, in: []Spec{f32(3)}},
		{name: "layer_norm", layer: func() Layer { return LayerNorm() }, in: []Spec{f32(2, 4)}},
		{name: "rms_norm", layer: func() Layer { return RMSNorm() }, in: []Spec{f32(4)}},
		{name: "flatten", layer: func() Layer { return Flatten() }, in: []Spec{f32(2, 3)}},
		{name: "reshape", layer: func() Layer { return Reshape([]int{3, -1}) }, in: []Spec{f32(2, 3)}},
		{name: "permute", layer: func() Layer { return Permute([]int{1, 0}) }, in: []Spec{f32(2, 3)}},
		{name: "add", layer: func() Layer { return Add() }, in: []Spec{f32(3), f32(3)}},
		{name: "concatenate", layer: func() Layer { return Concatenate() }, in: []Spec{f32(2), f32(3)}},
		{name: "embedding", layer: func() Layer { return Embedding(5, 3) }, in: []Spec{{DType: tensor.I64, Shape: tensor.Shape{3}}},
			values: [][]float64{{0, 4, 2, 1, 1, 3}}},
		{name: "positional_embedding", layer: func() Layer { return PositionalEmbedding(MaxLen(5)) }, in: []Spec{f32(3, 2)}},
		{name: "lstm", layer: func() Layer { return LSTM(3) }, in: []Spec{f32(3, 2)}},
		{name: "lstm_sequences", layer: func() Layer { return LSTM(2, ReturnSequences()) }, in: []Spec{f32(3, 2)}},
		{name: "gru", layer: func() Layer { return GRU(3, ReturnSequences()) }, in: []Spec{f32(3, 2)}},
		{name: "attention", layer: func() Layer { return Attention(Heads(2)) }, in: []Spec{f32(3, 4)}},
		{name: "attention_causal_rotary", layer: func() Layer { return Attention(Heads(2), Causal(), Rotary()) }, in: []Spec{f32(3, 4)}},
		{name: "cross_attention_masked", layer: func() Layer { return Attention(Heads(1)) }, in: []Spec{f32(2, 4), f32(3, 2), f32(2, 3)}},
		{name: "mamba_block", layer: func() Layer { return MambaBlock(3, 3, 2) }, in: []Spec{f32(5, 4)}},
		{name: "rwkv6_block", layer: func() Layer { return RWKVBlock(6, Heads(1), FeedForward(6)) }, in: []Spec{f32(5, 4)}},
		{name: "rwkv7_block", layer: func() Layer { return RWKVBlock(7, Heads(2), FeedForward(6)) }, in: []Spec{f32(5, 8)}},
		{name: "transformer_block_rms", layer: func() Layer { return TransformerBlock(Heads(2), FeedForward(6), Norm("rms")) }, in: []Spec{f32(3, 4)}},
		{name: "sequence_pooling_mean", layer: func() Layer { return SequencePooling() }, in: []Spec{f32(3, 2)}},
		{name: "sequence_pooling_first", layer: func() Layer { return SequencePooling(Pooling("first")) }, in: []Spec{f32(3, 2)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.layer()
			nodes := make([]*Node, len(tc.in))
			for i, s := range tc.in {
				nodes[i] = Input(s.Shape, DType(s.DType.String()))
			}
			if out := l.Apply(nodes...); out.Err() != nil {
				t.Fatal(out.Err())
			}
			vars := l.Params()
			var inputs []backendtest.Input
			for i, s := range tc.in {
				in := backendtest.Input{Shape: append(tensor.Shape{2}, s.Shape...), DType: s.DType, Own: true}
				if i < len(tc.values) {
					in.Values = tc.values[i]
				}
				in.Gen = tc.gen
				inputs = append(inputs, in)
			}
			for _, v := range vars {
				inputs = append(inputs, backendtest.Input{Shape: v.Shape(), Gen: backendtest.Uniform(-0.8, 0.8)})
			}
			c := backendtest.Case{Name: tc.name, Inputs: inputs, Build: func(x []*tensor.Node) *tensor.Node {
				c := newFwd(x[0].Graph(), tc.training)
				c.vars = map[*tensor.Variable]*tensor.Node{}
				for i, v := range vars {
					c.vars[v] = x[len(tc.in)+i]
				}
				// Squaring keeps linear layers' outputs dependent on the harness's seed.
				return tensor.Square(l.forward(c, x[:len(tc.in)]))
			}}
			res, err := c.CheckRules()
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Mismatches) > 0 {
				t.Fatalf("%d of %d elements differ (max error %.3g), first: %v", len(res.Mismatches), res.Checked, res.MaxErr, res.Mismatches[0])
			}
		})
	}
}

// TestLossGradients checks each loss, weighted per sample, against finite differences.
func TestLossGradients(t *testing.T) {
	for _, name := range []string{"categorical_crossentropy", "sparse_categorical_crossentropy", "binary_crossentropy", "mse", "mae", "huber"} {
		for _, act := range []string{"", "softmax", "sigmoid"} {
			li, _ := lossByName(name)
			label := backendtest.Input{Shape: tensor.Shape{3, 4}, Gen: backendtest.Uniform(0, 1), Fixed: true}
			if li.sparse {
				label = backendtest.Input{Shape: tensor.Shape{3}, DType: tensor.I64, Own: true, Values: []float64{0, 3, 2}}
			}
			if name == "mae" || name == "huber" {
				act = "" // kinks at pred == label
			}
			pred := backendtest.Input{Shape: tensor.Shape{3, 4}, Gen: backendtest.Uniform(-2, 2)}
			if name == "mae" || name == "huber" {
				pred.Gen = backendtest.Away(-3, 3, 0.1, 0, 1, -1, 2, -2)
				label = backendtest.Input{Shape: tensor.Shape{3, 4}, Values: make([]float64, 12), Fixed: true}
			}
			if act == "" && (li.classify) {
				pred.Gen = backendtest.Uniform(0.05, 0.95)
			}
			c := backendtest.Case{Name: name + "_" + act, Inputs: []backendtest.Input{pred, label,
				{Shape: tensor.Shape{3}, Values: []float64{1, 0.5, 2}, Fixed: true}},
				Build: func(x []*tensor.Node) *tensor.Node {
					c := newFwd(x[0].Graph(), false)
					p := x[0]
					if act != "" {
						p = c.activate(act, x[0])
					}
					return weightedMean(elementLoss(li, p, c.logits[p], x[1]), x[2])
				}}
			t.Run(c.Name, func(t *testing.T) {
				res, err := c.CheckRules()
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Mismatches) > 0 {
					t.Fatalf("%d of %d elements differ, first: %v", len(res.Mismatches), res.Checked, res.Mismatches[0])
				}
			})
		}
	}
}
