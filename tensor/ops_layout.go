package tensor

import (
	"fmt"
	"slices"
)

// Layout ops: they move elements without arithmetic.

func init() {
	registerShape(OpReshape, reshapeRule)
	registerShape(OpDepthToSpace, depthToSpaceRule)
	registerShape(OpPermute, permuteRule)
	registerShape(OpConcat, concatRule)
	registerShape(OpSlice, sliceRule)
	registerShape(OpPad, padRule)
	registerShape(OpExpand, expandRule)
	registerShape(OpTile, tileRule)
}

func permuteRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(PermuteAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be PermuteAttr, got %T", attr)
	}
	x := in[0]
	r := x.shape.Rank()
	if len(at.Perm) != r {
		return 0, nil, nil, fmt.Errorf("permutation %v has %d axes, input %v has rank %d", at.Perm, len(at.Perm), x.shape, r)
	}
	perm := make([]int, r)
	seen := make([]bool, r)
	out := make(Shape, r)
	for i, p := range at.Perm {
		a, err := axisOf(p, r, x.shape)
		if err != nil {
			return 0, nil, nil, err
		}
		if seen[a] {
			return 0, nil, nil, fmt.Errorf("permutation %v of %v repeats axis %d", at.Perm, x.shape, a)
		}
		seen[a] = true
		perm[i] = a
		out[i] = x.shape[a]
	}
	return x.dtype, out, PermuteAttr{Perm: perm}, nil
}

func concatRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(AxisAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be AxisAttr, got %T", attr)
	}
	x := in[0]
	if x.shape.Rank() == 0 {
		return 0, nil, nil, fmt.Errorf("cannot concatenate scalars: %s", shapesOf(in))
	}
	a, err := axisOf(at.Axis, x.shape.Rank(), x.shape)
	if err != nil {
		return 0, nil, nil, err
	}
	out := x.shape.Clone()
	for _, y := range in[1:] {
		if y.dtype != x.dtype || y.shape.Rank() != x.shape.Rank() {
			return 0, nil, nil, fmt.Errorf("inputs differ in dtype or rank: %s", shapesOf(in))
		}
		for i := range out {
			if i != a && y.shape[i] != x.shape[i] {
				return 0, nil, nil, fmt.Errorf("inputs differ off axis %d: %s", a, shapesOf(in))
			}
		}
		out[a] += y.shape[a]
	}
	return x.dtype, out, AxisAttr{Axis: a}, nil
}

// sliceLen is the number of elements start:end:step selects (resolved bounds).
func sliceLen(start, end, step int) int {
	if step > 0 {
		return max(0, (end-start+step-1)/step)
	}
	return max(0, (start-end-step-1)/(-step))
}

// sliceRule validates resolved bounds: for a positive step 0 <= start, end <= dim; for a
// negative step -1 <= start, end <= dim-1 (end -1 means "through index 0").
func sliceRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(SliceAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be SliceAttr, got %T", attr)
	}
	x := in[0]
	r := x.shape.Rank()
	if len(at.Starts) != r || len(at.Ends) != r || len(at.Steps) != r {
		return 0, nil, nil, fmt.Errorf("needs starts, ends and steps for each of the %d axes of %v, have %v %v %v", r, x.shape, at.Starts, at.Ends, at.Steps)
	}
	out := make(Shape, r)
	for i, d := range x.shape {
		s, e, st := at.Starts[i], at.Ends[i], at.Steps[i]
		lo, hi := 0, d
		if st < 0 {
			lo, hi = -1, d-1
		}
		if st == 0 || s < lo || s > hi || e < lo || e > hi {
			return 0, nil, nil, fmt.Errorf("axis %d of %v: bounds %d:%d:%d unresolved or out of range (use the Slice builder)", i, x.shape, s, e, st)
		}
		out[i] = sliceLen(s, e, st)
	}
	return x.dtype, out, SliceAttr{Starts: slices.Clone(at.Starts), Ends: slices.Clone(at.Ends), Steps: slices.Clone(at.Steps)}, nil
}

func padRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(PadAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be PadAttr, got %T", attr)
	}
	x := in[0]
	r := x.shape.Rank()
	if len(at.Before) != r || len(at.After) != r {
		return 0, nil, nil, fmt.Errorf("needs before and after pads for each of the %d axes of %v, have %v and %v", r, x.shape, at.Before, at.After)
	}
	if at.Mode > PadEdge {
		return 0, nil, nil, fmt.Errorf("unknown pad mode %d", at.Mode)
	}
	out := make(Shape, r)
	for i, d := range x.shape {
		b, a := at.Before[i], at.After[i]
		switch {
		case b < 0 || a < 0:
			return 0, nil, nil, fmt.Errorf("negative pad %d/%d on axis %d of %v (use Slice to crop)", b, a, i, x.shape)
		case at.Mode == PadReflect && (b >= d || a >= d) && (b > 0 || a > 0):
			return 0, nil, nil, fmt.Errorf("reflect pad %d/%d on axis %d of %v must be smaller than the axis", b, a, i, x.shape)
		case at.Mode == PadEdge && d == 0 && (b > 0 || a > 0):
			return 0, nil, nil, fmt.Errorf("edge pad of empty axis %d of %v", i, x.shape)
		}
		out[i] = d + b + a
	}
	at.Before, at.After = slices.Clone(at.Before), slices.Clone(at.After)
	return x.dtype, out, at, nil
}

func expandRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(ReshapeAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be ReshapeAttr, got %T", attr)
	}
	x := in[0]
	if err := at.Shape.Validate(); err != nil {
		return 0, nil, nil, err
	}
	if b, ok := Broadcast(x.shape, at.Shape); !ok || !b.Equal(at.Shape) {
		return 0, nil, nil, fmt.Errorf("cannot broadcast %v to %v", x.shape, at.Shape)
	}
	return x.dtype, at.Shape.Clone(), ReshapeAttr{Shape: at.Shape.Clone()}, nil
}

func tileRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(TileAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be TileAttr, got %T", attr)
	}
	x := in[0]
	if len(at.Reps) != x.shape.Rank() {
		return 0, nil, nil, fmt.Errorf("repeats %v for input %v of rank %d", at.Reps, x.shape, x.shape.Rank())
	}
	out := make(Shape, len(at.Reps))
	for i, r := range at.Reps {
		if r < 0 {
			return 0, nil, nil, fmt.Errorf("negative repeat %d on axis %d", r, i)
		}
		out[i] = x.shape[i] * r
	}
	return x.dtype, out, TileAttr{Reps: slices.Clone(at.Reps)}, nil
}

// Permute reorders axes: output axis i is input axis perm[i] (negative axes allowed).
func Permute(x *Node, perm ...int) *Node { return Apply(OpPermute, PermuteAttr{Perm: perm}, x) }

// Transpose swaps two axes.
func Transpose(x *Node, axis1, axis2 int) *Node {
	r := x.shape.Rank()
	a, err := axisOf(axis1, r, x.shape)
	if err == nil {
		var b int
		if b, err = axisOf(axis2, r, x.shape); err == nil {
			perm := make([]int, r)
			for i := range perm {
				perm[i] = i
			}
			perm[a], perm[b] = b, a
			return Permute(x, perm...)
		}
	}
	panic(&Error{Op: "transpose", Err: err})
}

// Concat joins xs along axis; the other dimensions must match.
func Concat(axis int, xs ...*Node) *Node { return Apply(OpConcat, AxisAttr{Axis: axis}, xs...) }

// Slice selects starts[i]:ends[i]:steps[i] on axis i with NumPy semantics: negative
// indices count from the end, out-of-range bounds are clamped, steps may be negative.
// The lists may be shorter than the rank (the remaining axes are taken whole); a nil
// steps means all 1. To run a negative step through index 0, pass an end below -dim.
func Slice(x *Node, starts, ends, steps []int) *Node {
	r := x.shape.Rank()
	if len(starts) > r || len(ends) != len(starts) || (steps != nil && len(steps) != len(starts)) {
		fail(OpSlice, "starts %v, ends %v and steps %v must have the same length, at most the rank of %v", starts, ends, steps, x.shape)
	}
	at := SliceAttr{Starts: make([]int, r), Ends: make([]int, r), Steps: make([]int, r)}
	for i, d := range x.shape {
		s, e, st := 0, d, 1
		if i < len(starts) {
			s, e = starts[i], ends[i]
			if steps != nil {
				st = steps[i]
			}
		}
		if st == 0 {
			fail(OpSlice, "step 0 on axis %d of %v", i, x.shape)
		}
		at.Starts[i], at.Ends[i], at.Steps[i] = clampIndex(s, d, st), clampIndex(e, d, st), st
	}
	return Apply(OpSlice, at, x)
}

// clampIndex resolves one NumPy slice bound on an axis of size d.
func clampIndex(i, d, step int) int {
	if i < 0 {
		i += d
	}
	if step > 0 {
		return min(max(i, 0), d)
	}
	return min(max(i, -1), d-1)
}

// SliceAxis selects start:end (NumPy semantics) on one axis.
func SliceAxis(x *Node, axis, start, end int) *Node {
	a, err := axisOf(axis, x.shape.Rank(), x.shape)
	if err != nil {
		panic(&Error{Op: "slice", Err: err})
	}
	starts, ends := make([]int, a+1), make([]int, a+1)
	for i := 0; i < a; i++ {
		ends[i] = x.shape[i]
	}
	starts[a], ends[a] = start, end
	return Slice(x, starts, ends, nil)
}

// Split cuts x along axis into pieces of the given sizes, which must sum to the axis.
func Split(x *Node, axis int, sizes ...int) []*Node {
	a, err := axisOf(axis, x.shape.Rank(), x.shape)
	if err != nil {
		panic(&Error{Op: "split", Err: err})
	}
	total := 0
	for _, s := range sizes {
		if s < 0 {
			panic(&Error{Op: "split", Err: fmt.Errorf("negative size in %v", sizes)})
		}
		total += s
	}
	if total != x.shape[a] {
		panic(&Error{Op: "split", Err: fmt.Errorf("sizes %v sum to %d, axis %d of %v has %d", sizes, total, a, x.shape, x.shape[a])})
	}
	out := make([]*Node, len(sizes))
	at := 0
	for i, s := range sizes {
		out[i] = SliceAxis(x, a, at, at+s)
		at += s
	}
	return out
}

// Chunk cuts x along axis into parts pieces of equal size.
func Chunk(x *Node, parts, axis int) []*Node {
	a, err := axisOf(axis, x.shape.Rank(), x.shape)
	if err != nil {
		panic(&Error{Op: "chunk", Err: err})
	}
	if parts <= 0 || x.shape[a]%parts != 0 {
		panic(&Error{Op: "chunk", Err: fmt.Errorf("axis %d of %v does not divide into %d parts", a, x.shape, parts)})
	}
	sizes := make([]int, parts)
	for i := range sizes {
		sizes[i] = x.shape[a] / parts
	}
	return Split(x, a, sizes...)
}

// Pad adds before[i] and after[i] elements on axis i, filled with value (PadConstant),
// by mirroring without repeating the edge (PadReflect) or by repeating the edge (PadEdge).
func Pad(x *Node, before, after []int, mode PadMode, value float32) *Node {
	return Apply(OpPad, PadAttr{Before: before, After: after, Mode: mode, Value: value}, x)
}

// Expand broadcasts x to shape (NumPy rules: x's dimensions align right and are 1 or equal).
func Expand(x *Node, shape ...int) *Node { return Apply(OpExpand, ReshapeAttr{Shape: Shape(shape)}, x) }

// Tile repeats x reps[i] times along axis i.
func Tile(x *Node, reps ...int) *Node { return Apply(OpTile, TileAttr{Reps: reps}, x) }

// Squeeze removes the listed size-1 axes, or every size-1 axis when none are listed.
func Squeeze(x *Node, axes ...int) *Node {
	var drop []int
	if len(axes) == 0 {
		for i, d := range x.shape {
			if d == 1 {
				drop = append(drop, i)
			}
		}
	} else {
		var err error
		if drop, err = axesOf(axes, x.shape.Rank(), x.shape); err != nil {
			panic(&Error{Op: "squeeze", Err: err})
		}
		for _, a := range drop {
			if x.shape[a] != 1 {
				panic(&Error{Op: "squeeze", Err: fmt.Errorf("axis %d of %v has size %d, not 1", a, x.shape, x.shape[a])})
			}
		}
	}
	return Reshape(x, reducedShape(x.shape, drop, false)...)
}

// Unsqueeze inserts size-1 axes at the listed positions of the result (negative
// positions count from the end of the result).
func Unsqueeze(x *Node, axes ...int) *Node {
	r := x.shape.Rank() + len(axes)
	at, err := axesOf(axes, r, x.shape)
	if err != nil {
		panic(&Error{Op: "unsqueeze", Err: err})
	}
	out := make([]int, 0, r)
	j := 0
	for i := 0; i < r; i++ {
		if slices.Contains(at, i) {
			out = append(out, 1)
		} else {
			out = append(out, x.shape[j])
			j++
		}
	}
	return Reshape(x, out...)
}

// Flatten keeps the axes before fromAxis and merges the rest into one:
// Flatten(x [N, C, H, W], 1) is [N, C*H*W].
func Flatten(x *Node, fromAxis int) *Node {
	r := x.shape.Rank()
	if fromAxis < 0 {
		fromAxis += r
	}
	if fromAxis < 0 || fromAxis > r {
		panic(&Error{Op: "flatten", Err: fmt.Errorf("axis %d out of range for %v", fromAxis, x.shape)})
	}
	out := append(x.shape[:fromAxis].Clone(), x.shape[fromAxis:].Size())
	return Reshape(x, out...)
}

// SumTo sums x over the axes along which shape was broadcast to x's shape, the adjoint
// of broadcasting: SumTo(Expand(y, s...), y.Shape()) has y's shape.
func SumTo(x *Node, shape Shape) *Node {
	if b, ok := Broadcast(shape, x.shape); !ok || !b.Equal(x.shape) {
		panic(&Error{Op: "sum_to", Err: fmt.Errorf("%v does not broadcast to %v", shape, x.shape)})
	}
	if x.shape.Equal(shape) {
		return x
	}
	lead := x.shape.Rank() - shape.Rank()
	var axes []int
	// Axes of extent 1 need no sum, only the reshape.
	for i, d := range x.shape {
		if d != 1 && (i < lead || shape[i-lead] == 1) {
			axes = append(axes, i)
		}
	}
	s := x
	if len(axes) > 0 {
		s = Sum(x, axes, true)
	}
	return Reshape(s, shape...)
}

// Reshape returns x with a new shape of the same size; one dimension may be -1.
// The result shares x's storage on every backend.
func Reshape(x *Node, shape ...int) *Node {
	s, err := ResolveReshape(x.shape, shape)
	if err != nil {
		panic(&Error{Op: "reshape", Err: err})
	}
	return Apply(OpReshape, ReshapeAttr{Shape: s}, x)
}

func reshapeRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(ReshapeAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be ReshapeAttr, got %T", attr)
	}
	s, err := ResolveReshape(in[0].shape, at.Shape)
	if err != nil {
		return 0, nil, nil, err
	}
	if err := in[0].dtype.CheckShape(s); err != nil {
		return 0, nil, nil, err
	}
	return in[0].dtype, s, ReshapeAttr{Shape: s}, nil
}

func depthToSpaceRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(DepthToSpaceAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be DepthToSpaceAttr, got %T", attr)
	}
	x := in[0]
	if at.Mode == "" {
		at.Mode = "DCR"
	}
	if at.Mode != "DCR" && at.Mode != "CRD" {
		return 0, nil, nil, fmt.Errorf("mode %q is neither DCR nor CRD", at.Mode)
	}
	b := at.Block
	if x.shape.Rank() != 4 || b <= 0 || x.shape[1]%(b*b) != 0 {
		return 0, nil, nil, fmt.Errorf("needs (N, C*%d*%d, H, W) input, have %v", b, b, x.shape)
	}
	s := x.shape
	return x.dtype, Shape{s[0], s[1] / (b * b), s[2] * b, s[3] * b}, at, nil
}

// DepthToSpace moves blocks of channels into block×block spatial tiles, as ONNX
// DepthToSpace: mode "DCR" (the default when empty) or "CRD".
func DepthToSpace(x *Node, block int, mode string) *Node {
	return Apply(OpDepthToSpace, DepthToSpaceAttr{Block: block, Mode: mode}, x)
}
