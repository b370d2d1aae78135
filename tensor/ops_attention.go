package tensor

import (
	"fmt"
	"math"
)

// Attention, its fused backward and rotary embedding: fused ops whose semantics
// Decompose (decompose.go) defines.

func init() {
	registerShape(OpAttention, attentionRule)
	registerShape(OpAttentionGrad, attentionGradRule)
	registerShape(OpRoPE, ropeRule)
}

// Attention returns softmax(q kᵀ * scale + mask) v for q (..., Tq, D), k (..., Tk, D) and
// v (..., Tk, Dv) with equal leading (batch, head) axes; the output is (..., Tq, Dv). With
// Layout AttentionBTHD the head axis comes after time instead: q (..., Tq, H, D), k
// (..., Tk, H, D), v (..., Tk, H, Dv) and the output (..., Tq, H, Dv). mask (nil for
// none) is additive and broadcasts to the scores' (..., H, Tq, Tk) in either layout; a
// query whose keys are all masked gets NaN. With Causal, query i sees keys j <= i (the
// upper-left-aligned triangle of PyTorch's is_causal and ONNX's Attention, also when
// Tq != Tk; decoding against a key/value cache passes an explicit mask instead), and a
// mask may be given as well. A Scale of 0 means 1/sqrt(D).
func Attention(q, k, v, mask *Node, attr AttentionAttr) *Node {
	if mask == nil {
		return Apply(OpAttention, attr, q, k, v)
	}
	return Apply(OpAttention, attr, q, k, v, mask)
}

func attentionRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(AttentionAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be AttentionAttr, got %T", attr)
	}
	if len(in) < 3 || len(in) > 4 {
		return 0, nil, nil, fmt.Errorf("takes q, k, v and an optional mask, got %d inputs", len(in))
	}
	q, k, v := in[0], in[1], in[2]
	g, err := attentionQK(at.Layout, q, k, v)
	if err != nil {
		return 0, nil, nil, err
	}
	dv, err := g.operand("v", v, g.tk, -1)
	if err != nil {
		return 0, nil, nil, err
	}
	if len(in) == 4 {
		if err := checkMask(in[3], q.dtype, append(g.lead.Clone(), g.tq, g.tk)); err != nil {
			return 0, nil, nil, err
		}
	}
	at.Scale = attentionScale(at.Scale, g.d)
	return q.dtype, g.shape(g.tq, dv), at, nil
}

// attnShapes is the geometry of an attention node's operands in its layout.
type attnShapes struct {
	layout    AttentionLayout
	lead      Shape // in the scores' order: batch axes, then heads
	tq, tk, d int
}

// attentionQK checks q and k ((..., T, D), or (..., T, H, D) with AttentionBTHD) and
// returns their geometry; other (the third input) must share q's float dtype.
func attentionQK(l AttentionLayout, q, k, other *Node) (attnShapes, error) {
	if !q.dtype.IsFloat() || k.dtype != q.dtype || other.dtype != q.dtype {
		return attnShapes{}, fmt.Errorf("needs inputs of one float dtype, have %s", shapesOf([]*Node{q, k, other}))
	}
	if l > AttentionBTHD {
		return attnShapes{}, fmt.Errorf("unknown layout %v", l)
	}
	r := q.shape.Rank()
	if r < l.rank() || k.shape.Rank() != r {
		return attnShapes{}, fmt.Errorf("needs q %s and k %s of one rank, have %v and %v",
			l.form("Tq", "D"), l.form("Tk", "D"), q.shape, k.shape)
	}
	lead, _, tq, d := l.Split(q.shape)
	klead, _, tk, kd := l.Split(k.shape)
	if !klead.Equal(lead) {
		return attnShapes{}, fmt.Errorf("q %v and k %v must share their batch and head axes (layout %v)", q.shape, k.shape, l)
	}
	if kd != d {
		return attnShapes{}, fmt.Errorf("q and k feature sizes differ: %v and %v", q.shape, k.shape)
	}
	return attnShapes{layout: l, lead: lead, tq: tq, tk: tk, d: d}, nil
}

// form names an operand's axes in layout l, e.g. (..., T, H, D).
func (l AttentionLayout) form(t, d string) string {
	if l == AttentionBTHD {
		return fmt.Sprintf("(..., %s, H, %s)", t, d)
	}
	return fmt.Sprintf("(..., %s, %s)", t, d)
}

// shape is the shape of an operand of the given rows and features in g's layout.
func (g attnShapes) shape(rows, features int) Shape {
	lead := g.lead.Clone()
	if g.layout == AttentionBTHD {
		h := lead[len(lead)-1]
		return append(lead[:len(lead)-1], rows, h, features)
	}
	return append(lead, rows, features)
}

// operand checks that x has q's dtype and the shape of rows and cols features in g's
// layout, any number of features when cols is -1, and returns its features.
func (g attnShapes) operand(name string, x *Node, rows, cols int) (int, error) {
	r := g.shape(rows, 0).Rank()
	if x.shape.Rank() == r {
		lead, _, n, c := g.layout.Split(x.shape)
		if lead.Equal(g.lead) && n == rows && (cols < 0 || c == cols) {
			return c, nil
		}
	}
	want := fmt.Sprint(g.shape(rows, cols))
	if cols < 0 {
		want = fmt.Sprint(g.shape(rows, 0)[:r-1])
		want = want[:len(want)-1] + " *]" // any number of features
	}
	return 0, fmt.Errorf("%s %v must have the shape %s (layout %v)", name, x.shape, want, g.layout)
}

// attentionScale resolves a Scale of 0 to 1/sqrt(d).
func attentionScale(scale float32, d int) float32 {
	if scale == 0 {
		return float32(1 / math.Sqrt(float64(max(d, 1))))
	}
	return scale
}

// AttentionGrad returns the gradients of o = Attention(q, k, v, mask, attr) with respect
// to q, k and v given gy, the gradient with respect to o, as FlashAttention-2 computes
// them: three OpAttentionGrad nodes that never hold a Tq×Tk matrix in memory. The first
// (AttentionStats) computes each query's log-sum-exp and Σ gy·o, from which the other two
// recompute the probabilities tile by tile: one walks the keys (∂k and ∂v, returned as
// slices of its output), the other the queries (∂q). A mask (nil for none) enters as in
// the forward; its own gradient is not computed here (see attentionGrad).
func AttentionGrad(q, k, v, mask, o, gy *Node, attr AttentionAttr) (dq, dk, dv *Node) {
	dq, dk, dv, _ = attentionBackward(q, k, v, mask, o, gy, attr)
	return dq, dk, dv
}

// attentionBackward is AttentionGrad that also returns the statistics node.
func attentionBackward(q, k, v, mask, o, gy *Node, attr AttentionAttr) (dq, dk, dv, stats *Node) {
	with := func(out AttentionGradOutput, in ...*Node) *Node {
		if mask != nil {
			in = append(in, mask)
		}
		return Apply(OpAttentionGrad, AttentionGradAttr{Causal: attr.Causal, Scale: attr.Scale, Layout: attr.Layout, Output: out}, in...)
	}
	stats = with(AttentionStats, q, k, o, gy)
	dq = with(AttentionGradQ, q, k, v, gy, stats)
	dkv := with(AttentionGradKV, q, k, v, gy, stats)
	r, d := q.shape.Rank(), q.shape[q.shape.Rank()-1]
	dk = SliceAxis(dkv, r-1, 0, d)
	dv = SliceAxis(dkv, r-1, d, dkv.shape[r-1])
	return dq, dk, dv, stats
}

func attentionGradRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(AttentionGradAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be AttentionGradAttr, got %T", attr)
	}
	if at.Output > AttentionGradKV {
		return 0, nil, nil, fmt.Errorf("unknown output %d", at.Output)
	}
	n := at.MaskInput()
	if len(in) != n && len(in) != n+1 {
		names := "q, k, v, gy, stats"
		if at.Output == AttentionStats {
			names = "q, k, o, gy"
		}
		return 0, nil, nil, fmt.Errorf("output %d takes %s and an optional mask, got %d inputs", at.Output, names, len(in))
	}
	q, k := in[0], in[1]
	g, err := attentionQK(at.Layout, q, k, in[2])
	if err != nil {
		return 0, nil, nil, err
	}
	for _, x := range in[2:] {
		if x.dtype != q.dtype {
			return 0, nil, nil, fmt.Errorf("needs inputs of one float dtype, have %s", shapesOf(in))
		}
	}
	third, rows := "v", g.tk
	if at.Output == AttentionStats {
		third, rows = "o", g.tq
	}
	dv, err := g.operand(third, in[2], rows, -1)
	if err != nil {
		return 0, nil, nil, err
	}
	if _, err := g.operand("gy", in[3], g.tq, dv); err != nil {
		return 0, nil, nil, err
	}
	// The statistics are per (batch, head, query), in the scores' order in any layout.
	stats := append(g.lead.Clone(), g.tq, 2)
	if at.Output != AttentionStats && !in[4].shape.Equal(stats) {
		return 0, nil, nil, fmt.Errorf("stats %v must have the shape %v", in[4].shape, stats)
	}
	if len(in) == n+1 {
		if err := checkMask(in[n], q.dtype, append(g.lead.Clone(), g.tq, g.tk)); err != nil {
			return 0, nil, nil, err
		}
	}
	at.Scale = attentionScale(at.Scale, g.d)
	switch at.Output {
	case AttentionStats:
		return q.dtype, stats, at, nil
	case AttentionGradQ:
		return q.dtype, q.shape, at, nil
	}
	return q.dtype, g.shape(g.tk, g.d+dv), at, nil
}

// RoPE applies rotary position embedding to x (..., T, D) with positions (I32 or I64, shape
// [T]): feature pairs (2i, 2i+1) for 2i < Dims are rotated by the angle
// position * Base^(-2i/Dims); features from Dims on pass through. Dims 0 means D; Base 0
// means 10000.
func RoPE(x, positions *Node, attr RoPEAttr) *Node { return Apply(OpRoPE, attr, x, positions) }

func ropeRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(RoPEAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be RoPEAttr, got %T", attr)
	}
	x, pos := in[0], in[1]
	if !x.dtype.IsFloat() || x.shape.Rank() < 2 {
		return 0, nil, nil, fmt.Errorf("needs a float input (..., T, D), have %v%v", x.dtype, x.shape)
	}
	r := x.shape.Rank()
	if !pos.dtype.IsInt() || pos.shape.Rank() != 1 || pos.shape[0] != x.shape[r-2] {
		return 0, nil, nil, fmt.Errorf("positions must be I32 or I64 of shape [%d] for input %v, have %v%v",
			x.shape[r-2], x.shape, pos.dtype, pos.shape)
	}
	d := x.shape[r-1]
	if at.Dims == 0 {
		at.Dims = d
	}
	if at.Dims < 0 || at.Dims%2 != 0 || at.Dims > d {
		return 0, nil, nil, fmt.Errorf("rotated dims %d must be even and at most the feature size %d", at.Dims, d)
	}
	if at.Base == 0 {
		at.Base = 10000
	}
	if at.Base < 0 || math.IsNaN(float64(at.Base)) {
		return 0, nil, nil, fmt.Errorf("base %v must be positive", at.Base)
	}
	return x.dtype, x.shape, at, nil
}
