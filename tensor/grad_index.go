package tensor

// Gradient rules of the index ops: each is the adjoint of a linear map, so what was
// gathered is scatter-added back and what was scattered is gathered.

func init() {
	registerGrad(OpGather, func(n, gy *Node) []*Node {
		x, idx := n.inputs[0], n.inputs[1]
		return []*Node{Apply(OpScatterAdd, n.attr, ZerosLike(x), idx, gy), nil}
	})
	registerGrad(OpTakeAlong, func(n, gy *Node) []*Node {
		x, idx := n.inputs[0], n.inputs[1]
		at := ScatterAttr{Axis: n.attr.(AxisAttr).Axis, Reduce: ScatterReduceAdd}
		return []*Node{Apply(OpScatter, at, ZerosLike(x), idx, gy), nil}
	})
	// Scatter: positions that were overwritten pass no gradient to x; each update gets the
	// gradient at the position it was written to. With duplicate indices and no reduction
	// the result depends on which write wins, and so is undefined as in ONNX.
	registerGrad(OpScatter, func(n, gy *Node) []*Node {
		at := n.attr.(ScatterAttr)
		idx, upd := n.inputs[1], n.inputs[2]
		gx := gy
		if at.Reduce == ScatterReduceNone {
			gx = Apply(OpScatter, at, gy, idx, ZerosLike(upd))
		}
		return []*Node{gx, nil, Apply(OpTakeAlong, AxisAttr{Axis: at.Axis}, gy, idx)}
	})
	registerGrad(OpScatterAdd, func(n, gy *Node) []*Node {
		idx := n.inputs[1]
		return []*Node{gy, nil, Apply(OpGather, n.attr, gy, idx)}
	})
}
