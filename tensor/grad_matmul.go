package tensor

// The gradient rule of matrix multiplication.

func init() { registerGrad(OpMatMul, matMulGrad) }

// matMulGrad differentiates C = op(A)·op(B) for each combination of transposes, then
// sums over batch dimensions that were broadcast.
//
//	∂op(A) = G·op(B)ᵀ    ∂op(B) = op(A)ᵀ·G
func matMulGrad(n, gy *Node) []*Node {
	at := n.attr.(MatMulAttr)
	a, b := n.inputs[0], n.inputs[1]
	// Quantised weights are frozen: no gradient reaches them, and the gradient of the
	// other operand multiplies by their decoded values, since the backward products
	// reduce along the axis the blocks do not run along.
	switch {
	case a.dtype.IsQuantized():
		return []*Node{nil, matMulGrads(at, Cast(a, F32), b, gy)[1]}
	case b.dtype.IsQuantized():
		return []*Node{matMulGrads(at, a, Cast(b, F32), gy)[0], nil}
	}
	return matMulGrads(at, a, b, gy)
}

// matMulGrads returns the gradients of op(a) @ op(b) with respect to a and b.
func matMulGrads(at MatMulAttr, a, b, gy *Node) []*Node {
	// The gradient products keep the forward's precision.
	mm := func(x, y *Node, tx, ty bool) *Node {
		return MatMulWith(x, y, MatMulAttr{TransA: tx, TransB: ty, Precision: at.Precision, TF32: at.TF32})
	}
	var ga, gb *Node
	switch {
	case !at.TransA && !at.TransB:
		ga, gb = mm(gy, b, false, true), mm(a, gy, true, false)
	case !at.TransA && at.TransB:
		ga, gb = mm(gy, b, false, false), mm(gy, a, true, false)
	case at.TransA && !at.TransB:
		ga, gb = mm(b, gy, false, true), mm(a, gy, false, false)
	default:
		ga, gb = mm(b, gy, true, true), mm(gy, a, true, true)
	}
	if !at.TransA && b.shape.Rank() == 2 && a.shape.Rank() > 2 {
		// A matrix applied to every row of a batch (a Dense layer on a sequence): its
		// gradient is one product over all the rows, not a product per batch entry
		// and a sum.
		a2 := Reshape(a, -1, a.shape[a.shape.Rank()-1])
		gy2 := Reshape(gy, -1, gy.shape[gy.shape.Rank()-1])
		if at.TransB {
			gb = mm(gy2, a2, true, false)
		} else {
			gb = mm(a2, gy2, true, false)
		}
	}
	return []*Node{unbroadcast(ga, a), unbroadcast(gb, b)}
}
