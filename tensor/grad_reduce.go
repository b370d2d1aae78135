package tensor

// Gradient rules of the reductions and the cumulative sum.

func init() {
	registerGrad(OpSum, func(n, gy *Node) []*Node {
		return []*Node{Expand(keepReduced(n, gy), n.inputs[0].shape...)}
	})
	registerGrad(OpMean, func(n, gy *Node) []*Node {
		x := n.inputs[0]
		scale := float64(n.shape.Size()) / float64(x.shape.Size())
		return []*Node{Expand(keepReduced(n, MulScalar(gy, scale)), x.shape...)}
	})
	registerGrad(OpMax, extremumGrad)
	registerGrad(OpMin, extremumGrad)
	registerGrad(OpProd, prodGrad)
	// var = Σ(x-μ)²/(N-c): ∂/∂x = 2(x-μ)/(N-c); the mean's own dependence cancels.
	registerGrad(OpVar, func(n, gy *Node) []*Node {
		at := n.attr.(ReduceAttr)
		x := n.inputs[0]
		count := x.shape.Size() / max(n.shape.Size(), 1)
		centred := Sub(x, Mean(x, at.Axes, true))
		scale := 2 / float64(count-at.Correction)
		return []*Node{Mul(centred, keepReduced(n, MulScalar(gy, scale)))}
	})
	// The adjoint of a running sum is the running sum in the other direction.
	registerGrad(OpCumSum, func(n, gy *Node) []*Node {
		at := n.attr.(CumSumAttr)
		at.Reverse = !at.Reverse
		return []*Node{Apply(OpCumSum, at, gy)}
	})
}

// keepReduced reshapes the gradient of a reduction node n to n's shape with the reduced
// axes kept as size 1, ready to broadcast against the input.
func keepReduced(n, gy *Node) *Node {
	at := n.attr.(ReduceAttr)
	if at.KeepDims {
		return gy
	}
	in := n.inputs[0].shape
	kept := in.Clone()
	for i := range kept {
		if len(at.Axes) == 0 || containsInt(at.Axes, i) {
			kept[i] = 1
		}
	}
	return Reshape(gy, kept...)
}

// extremumGrad routes the gradient of Max or Min to the positions that attain the
// extremum, split evenly among ties.
func extremumGrad(n, gy *Node) []*Node {
	at := n.attr.(ReduceAttr)
	x := n.inputs[0]
	hit := Cast(Equal(x, keepReduced(n, n)), x.dtype)
	count := Sum(hit, at.Axes, true)
	return []*Node{Mul(hit, Div(keepReduced(n, gy), count))}
}

// prodGrad: ∂Πx/∂xᵢ is the product of the other elements. Computed without dividing by
// zero: with no zero in the group it is Π/xᵢ; with exactly one zero only that element
// gets the product of the non-zero elements; with two or more it is 0 everywhere.
func prodGrad(n, gy *Node) []*Node {
	at := n.attr.(ReduceAttr)
	x := n.inputs[0]
	zero := scalarLike(n, 0)
	isZero := Equal(x, zero)
	nonZero := Where(isZero, scalarLike(n, 1), x)
	prodNonZero := Prod(nonZero, at.Axes, true)
	zeros := Sum(Cast(isZero, x.dtype), at.Axes, true)
	noZero := Div(prodNonZero, nonZero)
	oneZero := Where(And(isZero, Equal(zeros, scalarLike(n, 1))), prodNonZero, zero)
	others := Where(Equal(zeros, zero), noZero, oneZero)
	return []*Node{Mul(others, keepReduced(n, gy))}
}

func containsInt(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}
