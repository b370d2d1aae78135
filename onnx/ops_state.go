package onnx

import (
	"github.com/gml-dev/gml/tensor"
)

// Stateful sequence operators of recurrent language models (opset 27), which carry a
// state from one call to the next for incremental decoding.

func init() {
	register(27, lowerCausalConvWithState, "CausalConvWithState")
}

// lowerCausalConvWithState: a causal depthwise 1-D convolution of input (B, C, L) with
// weight (C, 1, K) over the input preceded by past_state (B, C, K-1; zeros when absent),
// plus bias, then the optional SiLU; present_state is the last K-1 positions of that
// extended input. The K taps are K shifted slices, weighted and summed.
func lowerCausalConvWithState(c *ctx) {
	dt := c.sameTypes(0, 1, 2, 3)
	c.requireFloat(0)
	x, w := c.x(0), c.x(1)
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 3 || len(ws) != 3 || ws[0] != xs[1] || ws[1] != 1 || ws[2] < 1 {
		c.failf("input %v and weight %v: want (B, C, L) and (C, 1, K)", xs, ws)
	}
	b, ch, l, k := xs[0], xs[1], xs[2], ws[2]
	ext := x
	if k > 1 {
		var past *tensor.Node
		if c.has(3) {
			if !c.shape(3).Equal(tensor.Shape{b, ch, k - 1}) {
				c.failf("past_state has shape %v, want (%d, %d, %d)", c.shape(3), b, ch, k-1)
			}
			past = c.x(3)
		} else {
			past = tensor.Full(c.g, x.DType(), tensor.Shape{b, ch, k - 1}, 0)
		}
		ext = tensor.Concat(2, past, x)
	}
	var y *tensor.Node
	for j := range k {
		term := tensor.Mul(tensor.SliceAxis(ext, 2, j, j+l), tensor.Reshape(tensor.SliceAxis(w, 2, j, j+1), 1, ch, 1))
		if y == nil {
			y = term
		} else {
			y = tensor.Add(y, term)
		}
	}
	if c.has(2) {
		if !c.shape(2).Equal(tensor.Shape{ch}) {
			c.failf("bias has shape %v, want (%d)", c.shape(2), ch)
		}
		y = tensor.Add(y, tensor.Reshape(c.x(2), 1, ch, 1))
	}
	switch act := c.attrString("activation", "none"); act {
	case "none":
	case "silu", "swish":
		y = tensor.Silu(y)
	default:
		c.failf("activation %q: want none, silu or swish", act)
	}
	c.set(0, y, dt)
	if c.wants(1) {
		if k > 1 {
			c.set(1, tensor.SliceAxis(ext, 2, l, l+k-1), dt)
		} else {
			c.setHost(1, tensor.New(x.DType(), b, ch, 0), dt)
		}
	}
}
