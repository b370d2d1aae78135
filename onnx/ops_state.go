package onnx

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Stateful sequence operators of recurrent language models (opset 27), which carry a
// state from one call to the next for incremental decoding.

func init() {
	register(27, lowerCausalConvWithState, "CausalConvWithState")
	register(27, lowerLinearAttention, "LinearAttention")
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

// lowerLinearAttention runs the recurrence of update_rule over the T steps of query
// (B, T, Hq*dk), key (B, T, Hkv*dk) and value (B, T, Hkv*dv), from past_state (B, Hkv,
// dk, dv; zeros when absent), with S the state of a key/value head:
//
//	linear:      S = S + k v^T
//	gated:       S = exp(g) S + k v^T
//	delta:       S = S + β k (v - S^T k)^T
//	gated_delta: S = exp(g) S, then as delta (the default)
//
// g (decay, per key feature (B, T, Hkv*dk) or per head (B, T, Hkv)) and β (beta, per head
// or (B, T, 1)); each step outputs scale * q^T S for every query head, a query head
// sharing the state of its group's key/value head. The steps are unrolled, in float32.
func lowerLinearAttention(c *ctx) {
	dt := c.sameTypes(0, 1, 2, 3, 4, 5)
	c.requireFloat(0)
	hq, hkv := c.attrInt("q_num_heads", 0), c.attrInt("kv_num_heads", 0)
	qs, ks, vs := c.shape(0), c.shape(1), c.shape(2)
	if len(qs) != 3 || len(ks) != 3 || len(vs) != 3 || hq < 1 || hkv < 1 || hq%hkv != 0 ||
		qs[2]%hq != 0 || ks[2]%hkv != 0 || vs[2]%hkv != 0 || ks[2]/hkv != qs[2]/hq {
		c.failf("query %v, key %v, value %v with q_num_heads %d and kv_num_heads %d: want (B, T, heads*dim), key and query dims equal, q_num_heads a multiple of kv_num_heads",
			qs, ks, vs, hq, hkv)
	}
	b, steps, dk, dv := qs[0], qs[1], qs[2]/hq, vs[2]/hkv
	rule := c.attrString("update_rule", "gated_delta")
	gated, delta := false, false
	switch rule {
	case "linear":
	case "gated":
		gated = true
	case "delta":
		delta = true
	case "gated_delta":
		gated, delta = true, true
	default:
		c.failf("update_rule %q: want linear, gated, delta or gated_delta", rule)
	}
	scale := float64(c.attrFloat("scale", float32(1/math.Sqrt(float64(dk)))))
	// heads splits (B, T, H*d) into (B, H, T, d) in float32.
	heads := func(x *tensor.Node, h int) *tensor.Node {
		s := x.Shape()
		return tensor.Permute(tensor.Reshape(toF32(x), s[0], s[1], h, s[2]/h), 0, 2, 1, 3)
	}
	q, k, v := heads(c.x(0), hq), heads(c.x(1), hkv), heads(c.x(2), hkv)
	var g, beta *tensor.Node
	if gated {
		if !c.has(4) {
			c.failf("update_rule %q needs decay (input 4)", rule)
		}
		d := c.shape(4)
		if len(d) != 3 || d[0] != b || d[1] != steps || (d[2] != hkv*dk && d[2] != hkv) {
			c.failf("decay has shape %v, want (%d, %d, %d or %d)", d, b, steps, hkv*dk, hkv)
		}
		g = tensor.Exp(heads(c.x(4), hkv)) // (B, Hkv, T, dk or 1)
	}
	if delta {
		if !c.has(5) {
			c.failf("update_rule %q needs beta (input 5)", rule)
		}
		d := c.shape(5)
		if len(d) != 3 || d[0] != b || d[1] != steps || (d[2] != hkv && d[2] != 1) {
			c.failf("beta has shape %v, want (%d, %d, %d or 1)", d, b, steps, hkv)
		}
		beta = heads(c.x(5), d[2]) // (B, Hkv or 1, T, 1)
	}
	var st *tensor.Node
	if c.has(3) {
		if !c.shape(3).Equal(tensor.Shape{b, hkv, dk, dv}) {
			c.failf("past_state has shape %v, want (%d, %d, %d, %d)", c.shape(3), b, hkv, dk, dv)
		}
		st = toF32(c.x(3))
	} else {
		st = tensor.Full(c.g, tensor.F32, tensor.Shape{b, hkv, dk, dv}, 0)
	}
	at := func(x *tensor.Node, t int) *tensor.Node { return tensor.SliceAxis(x, 2, t, t+1) } // (B, H, 1, d)
	col := func(x *tensor.Node) *tensor.Node {                                               // (B, H, 1, d) -> (B, H, d, 1)
		s := x.Shape()
		return tensor.Reshape(x, s[0], s[1], s[3], 1)
	}
	group := hq / hkv
	outs := make([]*tensor.Node, steps)
	for t := range steps {
		kt, vt := col(at(k, t)), at(v, t) // (B, Hkv, dk, 1), (B, Hkv, 1, dv)
		if gated {
			st = tensor.Mul(st, col(at(g, t)))
		}
		if delta {
			recalled := tensor.Sum(tensor.Mul(st, kt), []int{2}, true) // S^T k, (B, Hkv, 1, dv)
			vt = tensor.Mul(tensor.Sub(vt, recalled), at(beta, t))
		}
		st = tensor.Add(st, tensor.Mul(kt, vt))
		shared := st
		if group > 1 {
			shared = tensor.Reshape(tensor.Expand(tensor.Reshape(st, b, hkv, 1, dk, dv), b, hkv, group, dk, dv), b, hq, dk, dv)
		}
		outs[t] = tensor.MatMul(at(q, t), shared) // (B, Hq, 1, dv)
	}
	o := tensor.Mul(tensor.Concat(2, outs...), c.scalar(tensor.F32, scale))
	o = tensor.Reshape(tensor.Permute(o, 0, 2, 1, 3), b, steps, hq*dv)
	c.set(0, c.cast(o, Float, dt, true), dt)
	if c.wants(1) {
		c.set(1, c.cast(st, Float, dt, true), dt)
	}
}
