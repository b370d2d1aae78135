package tensor

// Gradient rules of the fused softmax, normalisation, attention and rotary-embedding
// ops. Each is an explicit rule in terms of the op's output (softmax) or of a few
// recomputed statistics (norms), or a fused backward op (attention), rather than the
// derivative of its decomposition: that keeps the backward graph small. Only the
// backward op itself, OpAttentionGrad, is differentiated through its decomposition,
// since second-order gradients of attention are rare and its decomposition is exact.

func init() {
	registerGrad(OpSoftmax, func(n, gy *Node) []*Node {
		at := n.attr.(SoftmaxAttr)
		return softmaxInputGrads(n, softmaxBackward(n, gy, at.Axis), at.Scale)
	})
	// log-softmax: ∂z = g - softmax(z)·Σg, with softmax(z) = exp(y).
	registerGrad(OpLogSoftmax, func(n, gy *Node) []*Node {
		at := n.attr.(SoftmaxAttr)
		dz := Sub(gy, Mul(Exp(n), Sum(gy, []int{at.Axis}, true)))
		return softmaxInputGrads(n, dz, at.Scale)
	})
	registerGrad(OpLayerNorm, func(n, gy *Node) []*Node { return normGrad(n, gy, true) })
	registerGrad(OpRMSNorm, func(n, gy *Node) []*Node { return normGrad(n, gy, false) })
	registerGrad(OpAttention, attentionGrad)
	registerGrad(OpAttentionGrad, decomposedGrad)
	// A rotation by the angle of position -p undoes the rotation by that of p exactly
	// (the angle is one float32 product, and negating the position negates it).
	registerGrad(OpRoPE, func(n, gy *Node) []*Node {
		pos := n.inputs[1]
		return []*Node{Apply(OpRoPE, n.attr, gy, Neg(pos)), nil}
	})
}

// softmaxBackward is the gradient with respect to the softmax input z of y = softmax(z)
// along axis, given y's gradient gy: y·(gy - Σ gy·y).
func softmaxBackward(y, gy *Node, axis int) *Node {
	return Mul(y, Sub(gy, Sum(Mul(gy, y), []int{axis}, true)))
}

// softmaxInputGrads turns ∂z, z = x·scale + mask, into the gradients of x and of the
// optional mask.
func softmaxInputGrads(n, dz *Node, scale float32) []*Node {
	gx := dz
	if scale != 1 {
		gx = MulScalar(dz, float64(scale))
	}
	if len(n.inputs) == 1 {
		return []*Node{gx}
	}
	return []*Node{gx, unbroadcast(dz, n.inputs[1])}
}

// normGrad differentiates LayerNorm (centred) and RMSNorm (not centred) over their
// trailing axes. With x̂ the normalised input, r the reciprocal standard deviation (or
// root mean square) and g = gy·gamma:
//
//	layer norm: ∂x = r·(g - mean(g) - x̂·mean(g·x̂))
//	rms norm:   ∂x = r·(g - x̂·mean(g·x̂))
//	∂gamma = Σ gy·x̂ and ∂beta = Σ gy over the leading axes.
func normGrad(n, gy *Node, centred bool) []*Node {
	at := n.attr.(NormAttr)
	x := n.inputs[0]
	xc := x
	if centred {
		xc = Sub(x, Mean(x, at.Axes, true))
	}
	r := Rsqrt(AddScalar(Mean(Square(xc), at.Axes, true), float64(at.Eps)))
	xhat := Mul(xc, r)
	g := gy
	if len(n.inputs) > 1 {
		g = Mul(gy, n.inputs[1])
	}
	inner := Mul(xhat, Mean(Mul(g, xhat), at.Axes, true))
	if centred {
		inner = Add(inner, Mean(g, at.Axes, true))
	}
	grads := []*Node{Mul(r, Sub(g, inner))}
	if len(n.inputs) > 1 {
		grads = append(grads, unbroadcast(Mul(gy, xhat), n.inputs[1]))
	}
	if len(n.inputs) > 2 {
		grads = append(grads, unbroadcast(gy, n.inputs[2]))
	}
	return grads
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
	_, ds := attentionScoreGrad(attentionScores(q, k, mask, at.Causal, at.Scale), v, gy, stats)
	return []*Node{dq, dk, dv, unbroadcast(ds, mask)}
}
