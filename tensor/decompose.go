package tensor

import "math"

// Decompositions of the fused ops into primitives. They define what the fused ops
// compute (internal/backendtest's reference evaluates the fused ops through them, so
// every backend kernel is tested against them), the runtime's scheduler computes a
// fused op through its decomposition on a backend that lacks a kernel for it but runs
// the primitives (runtime's lower pass), and autodiff differentiates them for
// second-order gradients of attention.

// CanDecompose reports whether Decompose accepts nodes of op.
func CanDecompose(op Op) bool {
	switch op {
	case OpSoftmax, OpLogSoftmax, OpLayerNorm, OpRMSNorm, OpAttention, OpAttentionGrad, OpRoPE:
		return true
	}
	return false
}

// Decompose rebuilds node n of a fused op (Softmax, LogSoftmax, LayerNorm, RMSNorm,
// Attention, AttentionGrad, RoPE) from primitive ops in n's graph, from n's inputs, and
// returns the node that computes the same value. The nodes are built once per node:
// later calls return the same result. It panics with *Error for other ops (see
// CanDecompose).
func Decompose(n *Node) *Node {
	if n.decomposed == nil {
		n.decomposed = decompose(n)
	}
	return n.decomposed
}

func decompose(n *Node) *Node {
	in := n.inputs
	switch n.op {
	case OpSoftmax, OpLogSoftmax:
		at := n.attr.(SoftmaxAttr)
		var mask *Node
		if len(in) == 2 {
			mask = in[1]
		}
		return softmaxOf(in[0], mask, at.Axis, at.Scale, n.op == OpLogSoftmax)
	case OpLayerNorm:
		at := n.attr.(NormAttr)
		x := in[0]
		mean := Mean(x, at.Axes, true)
		d := Sub(x, mean)
		variance := Mean(Mul(d, d), at.Axes, true)
		y := Mul(d, Rsqrt(AddScalar(variance, float64(at.Eps))))
		return normAffine(y, in[1:])
	case OpRMSNorm:
		at := n.attr.(NormAttr)
		x := in[0]
		ms := Mean(Mul(x, x), at.Axes, true)
		return normAffine(Mul(x, Rsqrt(AddScalar(ms, float64(at.Eps)))), in[1:])
	case OpAttention:
		return attentionOf(n)
	case OpAttentionGrad:
		return attentionGradOf(n)
	case OpRoPE:
		return ropeOf(n)
	}
	fail(n.op, "has no decomposition (node %v)", n)
	return nil
}

// normAffine multiplies by gamma and adds beta when present.
func normAffine(y *Node, params []*Node) *Node {
	if len(params) > 0 {
		y = Mul(y, params[0])
	}
	if len(params) > 1 {
		y = Add(y, params[1])
	}
	return y
}

// softmaxOf is softmax (or log-softmax) of x*scale + mask along axis, stabilised by
// subtracting the maximum.
func softmaxOf(x, mask *Node, axis int, scale float32, log bool) *Node {
	z := x
	if scale != 1 {
		z = Scale(z, scale)
	}
	if mask != nil {
		z = Add(z, mask)
	}
	z = Sub(z, Max(z, []int{axis}, true))
	e := Exp(z)
	s := Sum(e, []int{axis}, true)
	if log {
		return Sub(z, Log(s))
	}
	return Div(e, s)
}

// attentionOf decomposes OpAttention: scores = q kᵀ * scale (+ mask) (+ causal -Inf above
// the diagonal), softmax over keys, times v.
func attentionOf(n *Node) *Node {
	at := n.attr.(AttentionAttr)
	l := at.Layout
	q, k, v := l.headsFirst(n.inputs[0]), l.headsFirst(n.inputs[1]), l.headsFirst(n.inputs[2])
	var mask *Node
	if len(n.inputs) == 4 {
		mask = n.inputs[3]
	}
	mask = withCausal(q, k, mask, at.Causal)
	p := softmaxOf(MatMulT(q, k, false, true), mask, q.shape.Rank()-1, at.Scale, false)
	return l.headsFirst(MatMul(p, v))
}

// headsFirst swaps the time and head axes of an AttentionBTHD operand, which turns it
// into its AttentionBHTD form and back; other layouts' operands pass through.
func (l AttentionLayout) headsFirst(x *Node) *Node {
	if l != AttentionBTHD {
		return x
	}
	r := x.shape.Rank()
	return Transpose(x, r-3, r-2)
}

// withCausal returns mask (nil for none) with causal attention's -Inf above the diagonal
// added when causal is set.
func withCausal(q, k, mask *Node, causal bool) *Node {
	if !causal {
		return mask
	}
	r := q.shape.Rank()
	cm := q.graph.Const(CausalMask(q.dtype, q.shape[r-2], k.shape[r-2]))
	if mask == nil {
		return cm
	}
	return Add(mask, cm)
}

// attentionScores returns attention's scores q kᵀ·scale + mask, -Inf where causal hides
// a key.
func attentionScores(q, k, mask *Node, causal bool, scale float32) *Node {
	z := MatMulT(q, k, false, true)
	if scale != 1 {
		z = Scale(z, scale)
	}
	if mask = withCausal(q, k, mask, causal); mask != nil {
		z = Add(z, mask)
	}
	return z
}

// attentionScoreGrad returns the probabilities p = exp(z - lse) of scores z and the
// gradient with respect to z, ∂S = p·(gy vᵀ - δ), from the (lse, δ) pairs of an
// AttentionStats node.
func attentionScoreGrad(z, v, gy, stats *Node) (p, ds *Node) {
	r := z.shape.Rank()
	p = Exp(Sub(z, SliceAxis(stats, r-1, 0, 1)))
	ds = Mul(p, Sub(MatMulT(gy, v, false, true), SliceAxis(stats, r-1, 1, 2)))
	return p, ds
}

// attentionGradOf decomposes OpAttentionGrad with the T×T matrices the fused kernels
// avoid: the statistics are lse = m + log Σ exp(z - m) with m the row maximum, and
// δ = Σ gy·o; then ∂q = s·∂S k, ∂k = s·∂Sᵀ q and ∂v = pᵀ gy.
func attentionGradOf(n *Node) *Node {
	at := n.attr.(AttentionGradAttr)
	in, l := n.inputs, at.Layout
	q, k, x, gy := l.headsFirst(in[0]), l.headsFirst(in[1]), l.headsFirst(in[2]), l.headsFirst(in[3])
	r := q.shape.Rank()
	var mask *Node
	if mi := at.MaskInput(); len(in) > mi {
		mask = in[mi]
	}
	z := attentionScores(q, k, mask, at.Causal, at.Scale)
	if at.Output == AttentionStats {
		m := Max(z, []int{r - 1}, true)
		lse := Add(m, Log(Sum(Exp(Sub(z, m)), []int{r - 1}, true)))
		return Concat(r-1, lse, Sum(Mul(gy, x), []int{r - 1}, true)) // x is o here
	}
	p, ds := attentionScoreGrad(z, x, gy, in[4])
	if at.Output == AttentionGradQ {
		return l.headsFirst(MulScalar(MatMul(ds, k), float64(at.Scale)))
	}
	dk := MulScalar(MatMulT(ds, q, true, false), float64(at.Scale))
	return l.headsFirst(Concat(r-1, dk, MatMulT(p, gy, true, false)))
}

// CausalMask returns the additive (tq, tk) mask of causal attention: 0 where key j is
// visible to query i (j <= i), -Inf elsewhere.
func CausalMask(dt DType, tq, tk int) *Tensor {
	t := New(dt, tq, tk)
	for i := 0; i < tq; i++ {
		for j := i + 1; j < tk; j++ {
			t.SetFloat(i*tk+j, math.Inf(-1))
		}
	}
	return t
}

// RoPEFrequencies returns the dims/2 rotation frequencies base^(-2i/dims) in float32,
// computed in float64 and rounded once, so every backend uses the same values.
func RoPEFrequencies(base float32, dims int) []float32 {
	f := make([]float32, dims/2)
	for i := range f {
		f[i] = float32(math.Pow(float64(base), -2*float64(i)/float64(dims)))
	}
	return f
}

// ropeOf decomposes OpRoPE: the angle of position p and pair i is float32(p)*freq[i]
// (one float32 product), and its cosine and sine are taken in F32 whatever x's dtype;
// pairs (x0, x1) become (x0 cos - x1 sin, x0 sin + x1 cos).
func ropeOf(n *Node) *Node {
	at := n.attr.(RoPEAttr)
	x, pos := n.inputs[0], n.inputs[1]
	r := x.shape.Rank()
	t, d, half := x.shape[r-2], x.shape[r-1], at.Dims/2
	freqT := New(F32, 1, half)
	copy(freqT.Float32s(), RoPEFrequencies(at.Base, at.Dims))
	theta := Mul(Reshape(Cast(pos, F32), t, 1), x.graph.Const(freqT)) // (T, half), in F32
	cos, sin := Cos(theta), Sin(theta)
	if x.dtype != F32 {
		cos, sin = Cast(cos, x.dtype), Cast(sin, x.dtype)
	}
	rot := x
	if at.Dims < d {
		rot = SliceAxis(x, r-1, 0, at.Dims)
	}
	pairs := append(x.shape[:r-1].Clone(), half, 2)
	rp := Reshape(rot, pairs...)
	x0 := Reshape(SliceAxis(rp, r, 0, 1), pairs[:r]...)
	x1 := Reshape(SliceAxis(rp, r, 1, 2), pairs[:r]...)
	y0 := Sub(Mul(x0, cos), Mul(x1, sin))
	y1 := Add(Mul(x0, sin), Mul(x1, cos))
	y := Reshape(Concat(r, Unsqueeze(y0, r), Unsqueeze(y1, r)), rot.shape...)
	if at.Dims < d {
		y = Concat(r-1, y, SliceAxis(x, r-1, at.Dims, d))
	}
	return y
}
