package tensor

import (
	"fmt"
	"slices"
)

func init() {
	for _, op := range []Op{OpSum, OpMean, OpMax, OpMin, OpProd, OpVar} {
		registerShape(op, reduceRule(op))
	}
	registerShape(OpArgMax, argReduceRule)
	registerShape(OpArgMin, argReduceRule)
	registerShape(OpCumSum, cumSumRule)
	registerShape(OpTopK, topKRule)
}

// ResolveAxes resolves possibly negative axes against rank and returns them sorted and
// unique; an empty list means every axis. The error names op.
func ResolveAxes(op string, axes []int, rank int) ([]int, error) {
	out, err := axesOf(axes, rank, nil)
	if err != nil {
		return nil, fmt.Errorf("tensor: %s: %w", op, err)
	}
	return out, nil
}

// axisOf resolves a possibly negative axis against rank; the error names the shape s the
// axis refers to (the op name is added by Apply or the builder's *Error).
func axisOf(axis, rank int, s Shape) (int, error) {
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		if s == nil || s.Rank() == rank {
			return 0, fmt.Errorf("axis %d out of range for rank %d (shape %v)", axis, rank, s)
		}
		return 0, fmt.Errorf("axis %d out of range for rank %d (input shape %v)", axis, rank, s)
	}
	return a, nil
}

// axesOf resolves a list of axes (empty means all) to sorted, unique, non-negative axes.
func axesOf(axes []int, rank int, s Shape) ([]int, error) {
	if len(axes) == 0 {
		all := make([]int, rank)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	out := make([]int, 0, len(axes))
	for _, a := range axes {
		r, err := axisOf(a, rank, s)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, r) {
			return nil, fmt.Errorf("axis %d given twice in %v", a, axes)
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return out, nil
}

// reducedShape drops (or keeps as 1) the axes of s listed in sorted axes.
func reducedShape(s Shape, axes []int, keep bool) Shape {
	out := Shape{}
	for i, d := range s {
		switch {
		case !slices.Contains(axes, i):
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

func reduceRule(op Op) shapeRule {
	return func(attr any, in []*Node) (DType, Shape, any, error) {
		at, ok := attr.(ReduceAttr)
		if !ok {
			return 0, nil, nil, fmt.Errorf("attribute must be ReduceAttr, got %T", attr)
		}
		x := in[0]
		axes, err := axesOf(at.Axes, x.shape.Rank(), x.shape)
		if err != nil {
			return 0, nil, nil, err
		}
		if op != OpVar && at.Correction != 0 {
			return 0, nil, nil, fmt.Errorf("correction %d is only meaningful for var", at.Correction)
		}
		if at.Correction < 0 {
			return 0, nil, nil, fmt.Errorf("negative correction %d", at.Correction)
		}
		if op == OpMax || op == OpMin {
			for _, a := range axes {
				if x.shape[a] == 0 {
					return 0, nil, nil, fmt.Errorf("reduces empty axis %d of %v, which has no %v", a, x.shape, op)
				}
			}
		}
		return x.dtype, reducedShape(x.shape, axes, at.KeepDims), ReduceAttr{Axes: axes, KeepDims: at.KeepDims, Correction: at.Correction}, nil
	}
}

func argReduceRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(ArgReduceAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be ArgReduceAttr, got %T", attr)
	}
	x := in[0]
	a, err := axisOf(at.Axis, x.shape.Rank(), x.shape)
	if err != nil {
		return 0, nil, nil, err
	}
	if x.shape[a] == 0 {
		return 0, nil, nil, fmt.Errorf("axis %d of %v is empty", a, x.shape)
	}
	return I64, reducedShape(x.shape, []int{a}, at.KeepDims), ArgReduceAttr{Axis: a, KeepDims: at.KeepDims}, nil
}

func cumSumRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(CumSumAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be CumSumAttr, got %T", attr)
	}
	x := in[0]
	a, err := axisOf(at.Axis, x.shape.Rank(), x.shape)
	if err != nil {
		return 0, nil, nil, err
	}
	at.Axis = a
	return x.dtype, x.shape, at, nil
}

func topKRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(TopKAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be TopKAttr, got %T", attr)
	}
	x := in[0]
	a, err := axisOf(at.Axis, x.shape.Rank(), x.shape)
	if err != nil {
		return 0, nil, nil, err
	}
	if at.K < 0 || at.K > x.shape[a] {
		return 0, nil, nil, fmt.Errorf("k=%d out of range for axis %d of %v", at.K, a, x.shape)
	}
	at.Axis = a
	s := x.shape.Clone()
	s[a] = at.K
	return I64, s, at, nil
}

func reduce(op Op, x *Node, axes []int, keepDims bool) *Node {
	return Apply(op, ReduceAttr{Axes: axes, KeepDims: keepDims}, x)
}

// Sum adds x over axes (all axes when empty), keeping them as size 1 when keepDims.
func Sum(x *Node, axes []int, keepDims bool) *Node { return reduce(OpSum, x, axes, keepDims) }

// Mean averages x over axes (all axes when empty).
func Mean(x *Node, axes []int, keepDims bool) *Node { return reduce(OpMean, x, axes, keepDims) }

// Max takes the largest element over axes (all axes when empty).
func Max(x *Node, axes []int, keepDims bool) *Node { return reduce(OpMax, x, axes, keepDims) }

// Min takes the smallest element over axes (all axes when empty).
func Min(x *Node, axes []int, keepDims bool) *Node { return reduce(OpMin, x, axes, keepDims) }

// Prod multiplies x over axes (all axes when empty).
func Prod(x *Node, axes []int, keepDims bool) *Node { return reduce(OpProd, x, axes, keepDims) }

// Variance is the variance over axes (all when empty): the mean squared deviation,
// divided by N-correction instead of N (0: population, 1: sample variance).
func Variance(x *Node, axes []int, keepDims bool, correction int) *Node {
	return Apply(OpVar, ReduceAttr{Axes: axes, KeepDims: keepDims, Correction: correction}, x)
}

// ArgMax returns the I64 index of the largest element along axis (the first on ties).
func ArgMax(x *Node, axis int, keepDims bool) *Node {
	return Apply(OpArgMax, ArgReduceAttr{Axis: axis, KeepDims: keepDims}, x)
}

// ArgMin returns the I64 index of the smallest element along axis (the first on ties).
func ArgMin(x *Node, axis int, keepDims bool) *Node {
	return Apply(OpArgMin, ArgReduceAttr{Axis: axis, KeepDims: keepDims}, x)
}

// CumSum returns running sums along axis; exclusive starts each run at zero (element i
// sums the elements before i), reverse runs from the end.
func CumSum(x *Node, axis int, exclusive, reverse bool) *Node {
	return Apply(OpCumSum, CumSumAttr{Axis: axis, Exclusive: exclusive, Reverse: reverse}, x)
}

// TopK returns the k largest (or smallest) elements along axis, sorted (ties keep the
// lower index first), and their I64 indices.
func TopK(x *Node, k, axis int, largest bool) (values, indices *Node) {
	indices = Apply(OpTopK, TopKAttr{K: k, Axis: axis, Largest: largest}, x)
	return TakeAlong(x, indices, axis), indices
}
