package ag

import (
	"github.com/gml-dev/gml/tensor"
)

// Layout ops. Reshape and Flatten share their input's storage on the device; the others
// copy.

// Reshape returns x with a new shape of the same size; one dimension may be -1.
func Reshape(x *Tensor, shape ...int) *Tensor {
	shape = append([]int(nil), shape...)
	return unary("reshape", x, func(n *tensor.Node) *tensor.Node { return tensor.Reshape(n, shape...) })
}

// Flatten merges the axes from fromAxis on into one.
func Flatten(x *Tensor, fromAxis int) *Tensor {
	return unary("flatten", x, func(n *tensor.Node) *tensor.Node { return tensor.Flatten(n, fromAxis) })
}

// Transpose swaps two axes.
func Transpose(x *Tensor, axis1, axis2 int) *Tensor {
	return unary("transpose", x, func(n *tensor.Node) *tensor.Node { return tensor.Transpose(n, axis1, axis2) })
}

// Permute reorders the axes: output axis i is input axis perm[i].
func Permute(x *Tensor, perm ...int) *Tensor {
	perm = append([]int(nil), perm...)
	return unary("permute", x, func(n *tensor.Node) *tensor.Node { return tensor.Permute(n, perm...) })
}

// Slice keeps elements start..end-1 of one axis (negative values count from the end).
func Slice(x *Tensor, axis, start, end int) *Tensor {
	return unary("slice", x, func(n *tensor.Node) *tensor.Node { return tensor.SliceAxis(n, axis, start, end) })
}

// Squeeze drops the given size-1 axes (every size-1 axis when none are given).
func Squeeze(x *Tensor, axes ...int) *Tensor {
	axes = append([]int(nil), axes...)
	return unary("squeeze", x, func(n *tensor.Node) *tensor.Node { return tensor.Squeeze(n, axes...) })
}

// Unsqueeze inserts size-1 axes at the given positions of the result.
func Unsqueeze(x *Tensor, axes ...int) *Tensor {
	axes = append([]int(nil), axes...)
	return unary("unsqueeze", x, func(n *tensor.Node) *tensor.Node { return tensor.Unsqueeze(n, axes...) })
}

// Expand broadcasts x to shape.
func Expand(x *Tensor, shape ...int) *Tensor {
	shape = append([]int(nil), shape...)
	return unary("expand", x, func(n *tensor.Node) *tensor.Node { return tensor.Expand(n, shape...) })
}

// Concat joins tensors along an existing axis.
func Concat(axis int, xs ...*Tensor) *Tensor {
	if len(xs) == 0 {
		fail("concat", "no tensors")
	}
	return record("concat", func(in []*tensor.Node) *tensor.Node { return tensor.Concat(axis, in...) }, xs...)
}

// Stack joins equally shaped tensors along a new axis.
func Stack(axis int, xs ...*Tensor) *Tensor {
	if len(xs) == 0 {
		fail("stack", "no tensors")
	}
	return record("stack", func(in []*tensor.Node) *tensor.Node {
		parts := make([]*tensor.Node, len(in))
		for i, n := range in {
			a := axis
			if a < 0 {
				a += n.Shape().Rank() + 1
			}
			parts[i] = tensor.Unsqueeze(n, a)
		}
		a := axis
		if a < 0 {
			a += in[0].Shape().Rank() + 1
		}
		return tensor.Concat(a, parts...)
	}, xs...)
}

// Gather picks the slices of x along axis named by the integer indices idx: the result
// has shape x.shape[:axis] + idx.shape + x.shape[axis+1:]. Axis 0 picks rows (an
// embedding lookup); the gradient scatters back into the rows picked.
func Gather(x, idx *Tensor, axis int) *Tensor {
	if !idx.dtype.IsInt() {
		fail("gather", "indices must be integers, have %v", idx.dtype)
	}
	return binOp("gather", x, idx, func(a, b *tensor.Node) *tensor.Node { return tensor.Gather(a, b, axis) })
}

// OneHot expands integer class ids to F32 rows of n classes.
func OneHot(ids *Tensor, n int) *Tensor {
	return unary("one_hot", ids, func(x *tensor.Node) *tensor.Node { return tensor.OneHot(x, n, tensor.F32) })
}

// checkAxis resolves a possibly negative axis of a rank-r tensor.
func checkAxis(op string, axis, r int) int {
	if axis < -r || axis >= r {
		fail(op, "axis %d out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += r
	}
	return axis
}
