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
	// The gradient products keep the forward's precision.
	mm := func(x, y *Node, tx, ty bool) *Node {
		return MatMulWith(x, y, MatMulAttr{TransA: tx, TransB: ty, Precision: at.Precision})
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
