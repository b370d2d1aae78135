package tensor

// Gradient rules of softmax, log-softmax and the norms. Each is an explicit rule in
// terms of the op's output (softmax) or of a few recomputed statistics (norms), rather
// than the derivative of its decomposition: that keeps the backward graph small.

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
