package tensor

// The gradient rule of dropout (the other training ops are side effects, without one).

func init() {
	// The same seed draws the same mask, so dropout's adjoint is dropout of the gradient.
	registerGrad(OpDropout, func(n, gy *Node) []*Node {
		return []*Node{Apply(OpDropout, n.attr, gy, n.inputs[1]), nil}
	})
}
