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
// v (..., Tk, Dv) with equal leading (batch, head) axes; the output is (..., Tq, Dv). mask
// (nil for none) is additive and broadcasts to (..., Tq, Tk); a query whose keys are all
// masked gets NaN. With Causal, query i sees keys j <= i (the upper-left-aligned
// triangle of PyTorch's is_causal and ONNX's Attention, also when Tq != Tk; decoding
// against a key/value cache passes an explicit mask instead), and a mask may be given
// as well. A Scale of 0 means 1/sqrt(D).
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
	lead, tq, tk, d, err := attentionQK(q, k, v)
	if err != nil {
		return 0, nil, nil, err
	}
	if err := attentionOperand("v", v, lead, tk, -1); err != nil {
		return 0, nil, nil, err
	}
	if len(in) == 4 {
		if err := checkMask(in[3], q.dtype, append(lead.Clone(), tq, tk)); err != nil {
			return 0, nil, nil, err
		}
	}
	at.Scale = attentionScale(at.Scale, d)
	return q.dtype, append(lead.Clone(), tq, v.shape[q.shape.Rank()-1]), at, nil
}

// attentionQK checks q (..., Tq, D) and k (..., Tk, D) and returns their leading axes,
// lengths and feature size; other (the third input) must share q's float dtype.
func attentionQK(q, k, other *Node) (lead Shape, tq, tk, d int, err error) {
	if !q.dtype.IsFloat() || k.dtype != q.dtype || other.dtype != q.dtype {
		return nil, 0, 0, 0, fmt.Errorf("needs inputs of one float dtype, have %s", shapesOf([]*Node{q, k, other}))
	}
	r := q.shape.Rank()
	if r < 2 || k.shape.Rank() != r {
		return nil, 0, 0, 0, fmt.Errorf("needs q (..., Tq, D) and k (..., Tk, D) of one rank, have %v and %v", q.shape, k.shape)
	}
	lead = q.shape[:r-2]
	if !k.shape[:r-2].Equal(lead) {
		return nil, 0, 0, 0, fmt.Errorf("q %v and k %v must share their leading (batch, head) axes", q.shape, k.shape)
	}
	if k.shape[r-1] != q.shape[r-1] {
		return nil, 0, 0, 0, fmt.Errorf("q and k feature sizes differ: %v and %v", q.shape, k.shape)
	}
	return lead, q.shape[r-2], k.shape[r-2], q.shape[r-1], nil
}

// attentionOperand checks that x has q's dtype and the shape lead + (rows, cols), any
// number of columns when cols is -1.
func attentionOperand(name string, x *Node, lead Shape, rows, cols int) error {
	r := len(lead) + 2
	if x.shape.Rank() != r || !x.shape[:r-2].Equal(lead) || x.shape[r-2] != rows || (cols >= 0 && x.shape[r-1] != cols) {
		want := fmt.Sprint(append(lead.Clone(), rows))
		if cols >= 0 {
			want = fmt.Sprint(append(lead.Clone(), rows, cols))
		}
		return fmt.Errorf("%s %v must have the leading axes and length %s (the last axis free when omitted)", name, x.shape, want)
	}
	return nil
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
		return Apply(OpAttentionGrad, AttentionGradAttr{Causal: attr.Causal, Scale: attr.Scale, Output: out}, in...)
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
	lead, tq, tk, d, err := attentionQK(q, k, in[2])
	if err != nil {
		return 0, nil, nil, err
	}
	for _, x := range in[2:] {
		if x.dtype != q.dtype {
			return 0, nil, nil, fmt.Errorf("needs inputs of one float dtype, have %s", shapesOf(in))
		}
	}
	third, rows := "v", tk
	if at.Output == AttentionStats {
		third, rows = "o", tq
	}
	if err := attentionOperand(third, in[2], lead, rows, -1); err != nil {
		return 0, nil, nil, err
	}
	dv := in[2].shape[q.shape.Rank()-1]
	if err := attentionOperand("gy", in[3], lead, tq, dv); err != nil {
		return 0, nil, nil, err
	}
	if at.Output != AttentionStats {
		if err := attentionOperand("stats", in[4], lead, tq, 2); err != nil {
			return 0, nil, nil, err
		}
	}
	if len(in) == n+1 {
		if err := checkMask(in[n], q.dtype, append(lead.Clone(), tq, tk)); err != nil {
			return 0, nil, nil, err
		}
	}
	at.Scale = attentionScale(at.Scale, d)
	switch at.Output {
	case AttentionStats:
		return q.dtype, append(lead.Clone(), tq, 2), at, nil
	case AttentionGradQ:
		return q.dtype, q.shape, at, nil
	}
	return q.dtype, append(lead.Clone(), tk, d+dv), at, nil
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
