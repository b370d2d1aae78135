package tensor

// Gradient rules of the layout ops. Each is the adjoint of a linear map: reshape back,
// permute inversely, slice out what was concatenated, sum what was tiled or broadcast.

func init() {
	registerGrad(OpReshape, func(n, gy *Node) []*Node { return []*Node{Reshape(gy, n.inputs[0].shape...)} })
	registerGrad(OpPermute, func(n, gy *Node) []*Node {
		perm := n.attr.(PermuteAttr).Perm
		inv := make([]int, len(perm))
		for i, p := range perm {
			inv[p] = i
		}
		return []*Node{Apply(OpPermute, PermuteAttr{Perm: inv}, gy)}
	})
	registerGrad(OpConcat, func(n, gy *Node) []*Node {
		axis := n.attr.(AxisAttr).Axis
		grads := make([]*Node, len(n.inputs))
		off := 0
		for i, in := range n.inputs {
			grads[i] = sliceAxis(gy, axis, off, off+in.shape[axis])
			off += in.shape[axis]
		}
		return grads
	})
	registerGrad(OpSlice, sliceGrad)
	registerGrad(OpPad, padGrad)
	registerGrad(OpExpand, func(n, gy *Node) []*Node { return []*Node{unbroadcast(gy, n.inputs[0])} })
	registerGrad(OpTile, tileGrad)
	registerGrad(OpDepthToSpace, depthToSpaceGrad)
}

// sliceAxis takes elements [start, end) of axis, keeping the other axes whole.
func sliceAxis(x *Node, axis, start, end int) *Node {
	if start == 0 && end == x.shape[axis] {
		return x
	}
	r := x.shape.Rank()
	at := SliceAttr{Starts: make([]int, r), Ends: x.shape.Clone(), Steps: make([]int, r)}
	for i := range at.Steps {
		at.Steps[i] = 1
	}
	at.Starts[axis], at.Ends[axis] = start, end
	return Apply(OpSlice, at, x)
}

// padAxis pads axis with before and after zeros (both non-negative).
func padAxis(x *Node, axis, before, after int) *Node {
	if before == 0 && after == 0 {
		return x
	}
	r := x.shape.Rank()
	at := PadAttr{Before: make([]int, r), After: make([]int, r), Mode: PadConstant}
	at.Before[axis], at.After[axis] = before, after
	return Apply(OpPad, at, x)
}

// scatterAxis returns a tensor like g but with size `size` on axis, where element j of g
// on that axis is added at position src[j]: the adjoint of gathering src along axis.
func scatterAxis(g *Node, axis, size int, src []int) *Node {
	shape := g.shape.Clone()
	shape[axis] = size
	idx, err := FromInts(Shape{len(src)}, src)
	if err != nil {
		panic(err)
	}
	zeros := Full(g.graph, g.dtype, shape, 0)
	return Apply(OpScatterAdd, AxisAttr{Axis: axis}, zeros, g.graph.Const(idx), g)
}

// sliceGrad places the gradient back at the selected positions, axis by axis: a pad
// for unit steps, a scatter-add for other steps.
func sliceGrad(n, gy *Node) []*Node {
	at := n.attr.(SliceAttr)
	in := n.inputs[0].shape
	g := gy
	for axis := range in {
		start, step, m := at.Starts[axis], at.Steps[axis], n.shape[axis]
		switch {
		case m == in[axis] && start == 0 && step == 1:
		case step == 1:
			g = padAxis(g, axis, start, in[axis]-start-m)
		default:
			src := make([]int, m)
			for j := range src {
				src[j] = start + j*step
			}
			g = scatterAxis(g, axis, in[axis], src)
		}
	}
	return []*Node{g}
}

// padGrad is the adjoint of padding, axis by axis. Constant padding drops the padded
// borders; reflect and edge padding add each border element's gradient to the element
// it copied.
func padGrad(n, gy *Node) []*Node {
	at := n.attr.(PadAttr)
	in := n.inputs[0].shape
	g := gy
	for axis := range in {
		before, after, size := at.Before[axis], at.After[axis], in[axis]
		if before == 0 && after == 0 {
			continue
		}
		if at.Mode == PadConstant {
			g = sliceAxis(g, axis, before, before+size)
			continue
		}
		src := make([]int, g.shape[axis])
		for o := range src {
			src[o] = padSource(o-before, size, at.Mode)
		}
		g = scatterAxis(g, axis, size, src)
	}
	return []*Node{g}
}

// padSource maps a position i (possibly outside [0, size)) of a padded axis to the input
// element it copies under reflect or edge padding.
func padSource(i, size int, mode PadMode) int {
	if mode == PadEdge || size == 1 {
		return min(max(i, 0), size-1)
	}
	period := 2 * (size - 1)
	i %= period
	if i < 0 {
		i += period
	}
	if i >= size {
		i = period - i
	}
	return i
}

// tileGrad sums the copies: the gradient [r0·d0, r1·d1, ...] is viewed as
// [r0, d0, r1, d1, ...] and summed over the repeat axes.
func tileGrad(n, gy *Node) []*Node {
	x := n.inputs[0]
	reps := n.attr.(TileAttr).Reps
	split := make([]int, 0, 2*len(reps))
	axes := make([]int, 0, len(reps))
	for i, r := range reps {
		axes = append(axes, 2*i)
		split = append(split, r, x.shape[i])
	}
	return []*Node{Reshape(Sum(Reshape(gy, split...), axes, false), x.shape...)}
}

// depthToSpaceGrad inverts the rearrangement: DepthToSpace is a reshape to six axes, a
// permutation and a reshape, so its adjoint is the reshape, inverse permutation, reshape.
func depthToSpaceGrad(n, gy *Node) []*Node {
	at := n.attr.(DepthToSpaceAttr)
	x := n.inputs[0]
	b := at.Block
	N, C, H, W := x.shape[0], x.shape[1]/(b*b), x.shape[2], x.shape[3]
	// Forward: DCR views x as [N, b, b, C, H, W] and permutes (0, 3, 4, 1, 5, 2);
	// CRD views it as [N, C, b, b, H, W] and permutes (0, 1, 4, 2, 5, 3). Both give
	// [N, C, H, b, W, b].
	perm := []int{0, 3, 4, 1, 5, 2}
	if at.Mode == "CRD" {
		perm = []int{0, 1, 4, 2, 5, 3}
	}
	inv := make([]int, 6)
	for i, p := range perm {
		inv[p] = i
	}
	g := Reshape(gy, N, C, H, b, W, b)
	g = Apply(OpPermute, PermuteAttr{Perm: inv}, g)
	return []*Node{Reshape(g, x.shape...)}
}
