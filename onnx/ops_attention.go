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
// attention runs it when neither softcap nor the scores output is asked for.

func init() {
	register(23, lowerAttention, "Attention")
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
	if three {
		if qHeads < 1 || kvHeads < 1 {
			c.failf("3-D inputs need q_num_heads and kv_num_heads")
		}
		split := func(x *tensor.Node, heads int) *tensor.Node {
			s := x.Shape()
			if s[2]%heads != 0 {
				c.failf("input %v does not split into %d heads", s, heads)
			}
			return tensor.Permute(tensor.Reshape(x, s[0], s[1], heads, s[2]/heads), 0, 2, 1, 3)
		}
		q, k, v = split(q, qHeads), split(k, kvHeads), split(v, kvHeads)
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
	c.set(1, k, dt)
	c.set(2, v, dt)
	b, hq, lq, e := q.Shape()[0], q.Shape()[1], q.Shape()[2], q.Shape()[3]
	hkv, total := k.Shape()[1], k.Shape()[2]
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
		y = tensor.Attention(q, k, v, mask, tensor.AttentionAttr{Scale: float32(scale)})
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
	if three {
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
