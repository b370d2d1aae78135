package tensor

import "fmt"

// Indexing ops: Gather (embedding lookup), TakeAlong, Scatter, ScatterAdd and OneHot. Index tensors are I32 or I64; negative indices count from the end of
// the axis, and an index out of range is a run-time error from the backend.

func init() {
	registerShape(OpGather, gatherRule)
	registerShape(OpTakeAlong, takeAlongRule)
	registerShape(OpScatter, scatterRule)
	registerShape(OpScatterAdd, scatterAddRule)
	registerShape(OpOneHot, oneHotRule)
}

func checkIndex(idx *Node, in []*Node) error {
	if !idx.dtype.IsInt() {
		return fmt.Errorf("indices must be i32 or i64, have %s", shapesOf(in))
	}
	return nil
}

// gatherShape is x.shape[:a] + idx.shape + x.shape[a+1:].
func gatherShape(x, idx Shape, a int) Shape {
	out := append(x[:a].Clone(), idx...)
	return append(out, x[a+1:]...)
}

func gatherRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(AxisAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be AxisAttr, got %T", attr)
	}
	x, idx := in[0], in[1]
	if err := checkIndex(idx, in); err != nil {
		return 0, nil, nil, err
	}
	a, err := axisOf(at.Axis, x.shape.Rank(), x.shape)
	if err != nil {
		return 0, nil, nil, err
	}
	return x.dtype, gatherShape(x.shape, idx.shape, a), AxisAttr{Axis: a}, nil
}

// elementIndexShape checks that idx has x's rank and fits inside x off the axis.
func elementIndexShape(x, idx *Node, axis int, in []*Node) (int, error) {
	if err := checkIndex(idx, in); err != nil {
		return 0, err
	}
	a, err := axisOf(axis, x.shape.Rank(), x.shape)
	if err != nil {
		return 0, err
	}
	if idx.shape.Rank() != x.shape.Rank() {
		return 0, fmt.Errorf("indices must have the data's rank: %s", shapesOf(in))
	}
	for i := range x.shape {
		if i != a && idx.shape[i] > x.shape[i] {
			return 0, fmt.Errorf("indices exceed the data off axis %d: %s", a, shapesOf(in))
		}
	}
	return a, nil
}

func takeAlongRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(AxisAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be AxisAttr, got %T", attr)
	}
	a, err := elementIndexShape(in[0], in[1], at.Axis, in)
	if err != nil {
		return 0, nil, nil, err
	}
	return in[0].dtype, in[1].shape, AxisAttr{Axis: a}, nil
}

func scatterRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(ScatterAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be ScatterAttr, got %T", attr)
	}
	x, idx, upd := in[0], in[1], in[2]
	a, err := elementIndexShape(x, idx, at.Axis, in)
	if err != nil {
		return 0, nil, nil, err
	}
	if upd.dtype != x.dtype || !upd.shape.Equal(idx.shape) {
		return 0, nil, nil, fmt.Errorf("updates must have the data's dtype and the indices' shape: %s", shapesOf(in))
	}
	if at.Reduce > ScatterReduceAdd {
		return 0, nil, nil, fmt.Errorf("unknown scatter reduction %d", at.Reduce)
	}
	if at.Reduce == ScatterReduceAdd && x.dtype == Bool {
		return 0, nil, nil, fmt.Errorf("cannot add bool updates: %s", shapesOf(in))
	}
	return x.dtype, x.shape, ScatterAttr{Axis: a, Reduce: at.Reduce}, nil
}

func scatterAddRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(AxisAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be AxisAttr, got %T", attr)
	}
	x, idx, upd := in[0], in[1], in[2]
	if err := checkIndex(idx, in); err != nil {
		return 0, nil, nil, err
	}
	a, err := axisOf(at.Axis, x.shape.Rank(), x.shape)
	if err != nil {
		return 0, nil, nil, err
	}
	if x.dtype == Bool || upd.dtype != x.dtype || !upd.shape.Equal(gatherShape(x.shape, idx.shape, a)) {
		return 0, nil, nil, fmt.Errorf("updates must be numeric with the data's dtype and shape %v: %s", gatherShape(x.shape, idx.shape, a), shapesOf(in))
	}
	return x.dtype, x.shape, AxisAttr{Axis: a}, nil
}

func oneHotRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(OneHotAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be OneHotAttr, got %T", attr)
	}
	if err := checkIndex(in[0], in); err != nil {
		return 0, nil, nil, err
	}
	if at.Depth <= 0 || !at.DType.Valid() {
		return 0, nil, nil, fmt.Errorf("needs a positive depth and a valid dtype, have %d and %v", at.Depth, at.DType)
	}
	return at.DType, append(in[0].shape.Clone(), at.Depth), at, nil
}

// Gather takes the slices of x at positions idx along axis: the result has shape
// x.shape[:axis] + idx.shape + x.shape[axis+1:].
func Gather(x, idx *Node, axis int) *Node { return Apply(OpGather, AxisAttr{Axis: axis}, x, idx) }

// Embedding looks up the rows of table at ids: Gather on axis 0.
func Embedding(table, ids *Node) *Node { return Gather(table, ids, 0) }

// TakeAlong picks along axis, for every position of idx (which has x's rank), the
// element of x at index idx: out[i][j] = x[idx[i][j]][j] for axis 0.
func TakeAlong(x, idx *Node, axis int) *Node { return Apply(OpTakeAlong, AxisAttr{Axis: axis}, x, idx) }

// Scatter returns x with the elements at idx along axis replaced by (ScatterReduceNone) or
// increased by (ScatterReduceAdd) updates, which has idx's shape: TakeAlong's inverse.
func Scatter(x, idx, updates *Node, axis int, reduce ScatterReduce) *Node {
	return Apply(OpScatter, ScatterAttr{Axis: axis, Reduce: reduce}, x, idx, updates)
}

// ScatterAdd returns x with the slices of updates added at positions idx along axis;
// updates has Gather(x, idx, axis)'s shape. Repeated indices accumulate.
func ScatterAdd(x, idx, updates *Node, axis int) *Node {
	return Apply(OpScatterAdd, AxisAttr{Axis: axis}, x, idx, updates)
}

// OneHot expands integer labels to depth classes of dtype dt along a new last axis.
func OneHot(idx *Node, depth int, dt DType) *Node {
	return Apply(OpOneHot, OneHotAttr{Depth: depth, DType: dt}, idx)
}
