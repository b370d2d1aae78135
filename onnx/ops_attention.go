package onnx

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Attention (opset 23): scaled dot-product attention over 4-D (batch, heads, seq, dim)
// or 3-D (batch, seq, heads*dim) inputs, with grouped key/value heads, a boolean or
// additive mask (shorter masks are padded with -inf to the full key length), a causal
// mask aligned to the end of the past keys, past and present keys and values, softcap,
// and the optional output of the scores at one of four stages. The engine's fused
// attention runs it when neither softcap nor the scores output is asked for, on 3-D
// inputs without permutes (AttentionBTHD) when there are no past keys or grouped heads.

func init() {
	register(23, lowerAttention, "Attention")
	register(23, lowerRotaryEmbedding, "RotaryEmbedding")
}

func lowerAttention(c *ctx) {
	dt := c.sameTypes(0, 1, 2)
	c.requireFloat(0)
	q, k, v := c.x(0), c.x(1), c.x(2)
	qs := q.Shape()
	three := qs.Rank() == 3
	qHeads, kvHeads := c.attrInt("q_num_heads", 0), c.attrInt("kv_num_heads", 0)
	causal := c.attrInt("is_causal", 0) != 0
	mode := c.attrInt("qk_matmul_output_mode", 0)
	softcap := c.attrFloat("softcap", 0)
	c.ignore("softmax_precision")
	// The fused op reads 3-D inputs' heads in place, (batch, seq, heads, dim), unless
	// past keys, grouped heads, softcap or the scores output need them first.
	inRows := three && !c.has(4) && !c.has(5) && qHeads == kvHeads && softcap == 0 && !c.wants(3)
	if three {
		if qHeads < 1 || kvHeads < 1 {
			c.failf("3-D inputs need q_num_heads and kv_num_heads")
		}
		split := func(x *tensor.Node, heads int) *tensor.Node {
			s := x.Shape()
			if s[2]%heads != 0 {
				c.failf("input %v does not split into %d heads", s, heads)
			}
			x = tensor.Reshape(x, s[0], s[1], heads, s[2]/heads)
			if inRows {
				return x
			}
			return tensor.Permute(x, 0, 2, 1, 3)
		}
		q, k, v = split(q, qHeads), split(k, kvHeads), split(v, kvHeads)
	}
	layout := tensor.AttentionBHTD
	if inRows {
		layout = tensor.AttentionBTHD
	}
	if q.Shape().Rank() != 4 || k.Shape().Rank() != 4 || v.Shape().Rank() != 4 {
		c.failf("Q %v, K %v and V %v must all be 3-D or 4-D", c.shape(0), c.shape(1), c.shape(2))
	}
	if c.has(4) {
		k = tensor.Concat(2, c.x(4), k)
	}
	if c.has(5) {
		v = tensor.Concat(2, c.x(5), v)
	}
	if inRows { // present_key and present_value are (batch, heads, seq, dim)
		c.set(1, tensor.Permute(k, 0, 2, 1, 3), dt)
		c.set(2, tensor.Permute(v, 0, 2, 1, 3), dt)
	} else {
		c.set(1, k, dt)
		c.set(2, v, dt)
	}
	lead, _, lq, e := layout.Split(q.Shape())
	b, hq := lead[0], lead[1]
	klead, _, total, _ := layout.Split(k.Shape())
	hkv := klead[1]
	if hkv != hq {
		if hkv == 0 || hq%hkv != 0 {
			c.failf("%d query heads do not group over %d key/value heads", hq, hkv)
		}
		rep := hq / hkv
		group := func(x *tensor.Node) *tensor.Node {
			s := x.Shape()
			x = tensor.Expand(tensor.Reshape(x, s[0], s[1], 1, s[2], s[3]), s[0], s[1], rep, s[2], s[3])
			return tensor.Reshape(x, s[0], s[1]*rep, s[2], s[3])
		}
		k, v = group(k), group(v)
	}
	scale := float64(c.attrFloat("scale", 0))
	if scale == 0 {
		scale = 1 / math.Sqrt(float64(e))
	}
	fdt := q.DType()
	negInf := c.scalar(fdt, math.Inf(-1))
	zero := c.scalar(fdt, 0)
	// The additive mask: the given one, padding, causality.
	var mask *tensor.Node
	if c.has(3) {
		m := c.x(3)
		if m.DType() == tensor.Bool {
			m = tensor.Where(m, zero, negInf)
		} else if m.DType() != fdt {
			m = tensor.Cast(m, fdt)
		}
		if ms := m.Shape(); ms[len(ms)-1] < total {
			before, after := make([]int, len(ms)), make([]int, len(ms))
			after[len(ms)-1] = total - ms[len(ms)-1]
			m = tensor.Pad(m, before, after, tensor.PadConstant, float32(math.Inf(-1)))
		}
		mask = m
	}
	if c.has(6) {
		// nonpad_kv_seqlen (B): keys at or past a sequence's length are masked.
		lens := tensor.Reshape(c.x(6), b, 1, 1, 1)
		pos := tensor.New(lens.DType(), total)
		for j := range total {
			pos.SetFloat(j, float64(j))
		}
		pad := tensor.Where(tensor.Less(c.constant(pos), lens), zero, negInf)
		mask = addMask(mask, pad)
	}
	past := 0 // keys before this call's: the causal diagonal starts after them
	if c.has(4) {
		past = c.shape(4)[2]
	}
	if causal {
		cm := tensor.New(fdt, lq, total)
		for i := range lq {
			for j := range total {
				if j > i+past {
					cm.SetFloat(i*total+j, math.Inf(-1))
				}
			}
		}
		mask = addMask(mask, c.constant(cm))
	}
	var y *tensor.Node
	if softcap == 0 && !c.wants(3) {
		if mask != nil {
			if _, ok := tensor.Broadcast(mask.Shape(), tensor.Shape{b, hq, lq, total}); !ok {
				c.failf("mask %v does not broadcast to %v", mask.Shape(), tensor.Shape{b, hq, lq, total})
			}
		}
		y = tensor.Attention(q, k, v, mask, tensor.AttentionAttr{Scale: float32(scale), Layout: layout})
	} else {
		s := tensor.Scale(tensor.MatMulT(q, k, false, true), float32(scale))
		stages := []*tensor.Node{s}
		if softcap != 0 {
			cap := c.scalar(fdt, float64(softcap))
			s = tensor.Mul(tensor.Tanh(tensor.Div(s, cap)), cap)
		}
		stages = append(stages, s)
		if mask != nil {
			s = tensor.Add(s, mask)
		}
		stages = append(stages, s)
		p := tensor.Softmax(s, 3)
		stages = append(stages, p)
		if mode < 0 || mode > 3 {
			c.failf("qk_matmul_output_mode %d", mode)
		}
		c.set(3, stages[mode], dt)
		y = tensor.MatMul(p, v)
	}
	if inRows {
		ys := y.Shape()
		y = tensor.Reshape(y, ys[0], ys[1], ys[2]*ys[3])
	} else if three {
		ys := y.Shape()
		y = tensor.Reshape(tensor.Permute(y, 0, 2, 1, 3), ys[0], ys[2], ys[1]*ys[3])
	}
	c.set(0, y, dt)
}

// addMask adds two additive masks, either of which may be nil.
func addMask(a, b *tensor.Node) *tensor.Node {
	if a == nil {
		return b
	}
	return tensor.Add(a, b)
}

// lowerRotaryEmbedding rotates pairs of each head's first rotary_embedding_dim
// features (the two halves, or even and odd features when interleaved) by the angles
// whose cosines and sines the caches hold, picked by position_ids when given. Input
// (batch, heads, seq, dim), or (batch, seq, heads*dim) with num_heads.
func lowerRotaryEmbedding(c *ctx) {
	dt := c.sameTypes(0, 1, 2)
	c.requireFloat(0)
	x, cos, sin := c.x(0), c.x(1), c.x(2)
	xs := x.Shape()
	interleaved := c.attrInt("interleaved", 0) != 0
	var b, seq, heads, dim int
	switch len(xs) {
	case 4: // (batch, heads, seq, dim)
		b, heads, seq, dim = xs[0], xs[1], xs[2], xs[3]
		x = tensor.Permute(x, 0, 2, 1, 3)
		c.ignore("num_heads")
	case 3:
		heads = c.attrInt("num_heads", 0)
		if heads < 1 || xs[2]%heads != 0 {
			c.failf("3-D input %v needs num_heads dividing %d, have %d", xs, xs[2], heads)
		}
		b, seq, dim = xs[0], xs[1], xs[2]/heads
		x = tensor.Reshape(x, b, seq, heads, dim)
	default:
		c.failf("input has shape %v, want 3-D or 4-D", xs)
	}
	rot := c.attrInt("rotary_embedding_dim", 0)
	if rot == 0 {
		rot = dim
	}
	if rot%2 != 0 || rot > dim {
		c.failf("rotary_embedding_dim %d: want an even number up to the head size %d", rot, dim)
	}
	half := rot / 2
	if c.has(3) {
		ids := c.x(3)
		if !c.shape(3).Equal(tensor.Shape{b, seq}) {
			c.failf("position_ids has shape %v, want (%d, %d)", c.shape(3), b, seq)
		}
		cos, sin = tensor.Gather(cos, ids, 0), tensor.Gather(sin, ids, 0)
	}
	for _, t := range []*tensor.Node{cos, sin} {
		if s := t.Shape(); len(s) != 3 || s[0] != b || s[1] != seq || s[2] < half {
			c.failf("cos and sin caches give %v per position, want (%d, %d, %d or more)", s, b, seq, half)
		}
	}
	cos = tensor.Reshape(tensor.SliceAxis(cos, 2, 0, half), b, seq, 1, half)
	sin = tensor.Reshape(tensor.SliceAxis(sin, 2, 0, half), b, seq, 1, half)
	xr := tensor.SliceAxis(x, 3, 0, rot)
	var x1, x2 *tensor.Node
	if interleaved {
		x1 = tensor.Slice(xr, []int{0, 0, 0, 0}, []int{b, seq, heads, rot}, []int{1, 1, 1, 2})
		x2 = tensor.Slice(xr, []int{0, 0, 0, 1}, []int{b, seq, heads, rot}, []int{1, 1, 1, 2})
	} else {
		x1, x2 = tensor.SliceAxis(xr, 3, 0, half), tensor.SliceAxis(xr, 3, half, rot)
	}
	re := tensor.Sub(tensor.Mul(cos, x1), tensor.Mul(sin, x2))
	im := tensor.Add(tensor.Mul(sin, x1), tensor.Mul(cos, x2))
	if interleaved {
		xr = tensor.Reshape(tensor.Concat(4, tensor.Unsqueeze(re, 4), tensor.Unsqueeze(im, 4)), b, seq, heads, rot)
	} else {
		xr = tensor.Concat(3, re, im)
	}
	if rot < dim {
		xr = tensor.Concat(3, xr, tensor.SliceAxis(x, 3, rot, dim))
	}
	if len(xs) == 4 {
		c.set(0, tensor.Permute(xr, 0, 2, 1, 3), dt)
	} else {
		c.set(0, tensor.Reshape(xr, xs...), dt)
	}
}
