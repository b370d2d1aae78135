package tensor

// Gradient rules of attention and rotary embedding. Attention's is a fused backward op
// (OpAttentionGrad) rather than the derivative of its decomposition, which keeps the
// backward graph small; only that backward op itself is differentiated through its
// decomposition, since second-order gradients of attention are rare and its
// decomposition is exact.

func init() {
	registerGrad(OpAttention, attentionGrad)
	registerGrad(OpAttentionGrad, decomposedGrad)
	// A rotation by the angle of position -p undoes the rotation by that of p exactly
	// (the angle is one float32 product, and negating the position negates it).
	registerGrad(OpRoPE, func(n, gy *Node) []*Node {
		pos := n.inputs[1]
		return []*Node{Apply(OpRoPE, n.attr, gy, Neg(pos)), nil}
	})
}

// attentionGrad builds the fused backward (AttentionGrad) for q, k and v. The mask's
// gradient is the score gradient ∂S itself, a Tq×Tk matrix per head summed to the
// mask's shape; it comes from the composition, with the fused statistics, and is built
// only for the graph: the runtime computes it only when a differentiated node depends on
// the mask (a learned bias), so the usual constant mask costs nothing.
func attentionGrad(n, gy *Node) []*Node {
	at := n.attr.(AttentionAttr)
	q, k, v := n.inputs[0], n.inputs[1], n.inputs[2]
	var mask *Node
	if len(n.inputs) == 4 {
		mask = n.inputs[3]
	}
	dq, dk, dv, stats := attentionBackward(q, k, v, mask, n, gy, at)
	if mask == nil {
		return []*Node{dq, dk, dv}
	}
	l := at.Layout
	z := attentionScores(l.headsFirst(q), l.headsFirst(k), mask, at.Causal, at.Scale)
	_, ds := attentionScoreGrad(z, l.headsFirst(v), l.headsFirst(gy), stats)
	return []*Node{dq, dk, dv, unbroadcast(ds, mask)}
}
