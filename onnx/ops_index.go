package onnx

import (
	"math"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// Indexing: gathers, scatters, one-hot, top-k, arg-reductions, cumulative sums and
// NonZero, whose output size depends on the data.

func init() {
	register(7, lowerGather, "Gather")
	register(11, lowerGatherElements, "GatherElements")
	register(11, lowerGatherND, "GatherND")
	register(11, lowerScatterElements, "ScatterElements")
	register(9, lowerScatterElements, "Scatter") // ScatterElements' name before opset 11
	register(11, lowerScatterND, "ScatterND")
	register(9, lowerOneHot, "OneHot")
	register(7, lowerTopK, "TopK")
	register(7, lowerArgReduce, "ArgMax", "ArgMin")
	register(11, lowerCumSum, "CumSum")
	register(9, lowerNonZero, "NonZero")
}

// indices returns input i as an index node with negative entries counted from the end
// of an axis of size dim.
func (c *ctx) indices(i, dim int) *tensor.Node {
	if dt := c.dtype(i); dt != Int64 && dt != Int32 {
		c.failf("indices are %v, want int32 or int64", dt)
	}
	if v := c.in(i); v.isHost() {
		// Known indices are resolved now rather than by nodes in every run.
		t := v.host.Clone()
		if t.DType() == tensor.I64 {
			for k, x := range t.Int64s() {
				if x < 0 {
					t.Int64s()[k] = x + int64(dim)
				}
			}
		} else {
			for k, x := range t.Int32s() {
				if x < 0 {
					t.Int32s()[k] = x + int32(dim)
				}
			}
		}
		return c.constant(t)
	}
	idx := c.x(i)
	zero := c.scalar(idx.DType(), 0)
	return tensor.Where(tensor.Less(idx, zero), tensor.Add(idx, c.scalar(idx.DType(), float64(dim))), idx)
}

func lowerGather(c *ctx) {
	s := c.shape(0)
	axis := c.axis(c.attrInt("axis", 0), len(s))
	c.set(0, tensor.Gather(c.x(0), c.indices(1, s[axis]), axis), c.dtype(0))
}

func lowerGatherElements(c *ctx) {
	s := c.shape(0)
	axis := c.axis(c.attrInt("axis", 0), len(s))
	c.set(0, tensor.TakeAlong(c.x(0), c.indices(1, s[axis]), axis), c.dtype(0))
}

// linearIndex turns index tuples idx (..., k) into row numbers of data's axes
// [batch, batch+k) flattened, with the batch axes (the leading batch of idx and data)
// folded in front: the rows of data reshaped to (prod(shape[:batch+k]), rest...).
func linearIndex(c *ctx, idx *tensor.Node, data tensor.Shape, batch int) *tensor.Node {
	is := idx.Shape()
	k := is[len(is)-1]
	dims := data[batch : batch+k]
	strides := tensor.New(tensor.I64, k)
	acc := int64(1)
	for j := k - 1; j >= 0; j-- {
		strides.Int64s()[j] = acc
		acc *= int64(dims[j])
	}
	// Negative indices count from the end of their axis.
	size := tensor.New(tensor.I64, k)
	for j := range k {
		size.Int64s()[j] = int64(dims[j])
	}
	idx = tensor.Cast(idx, tensor.I64)
	zero := c.scalar(tensor.I64, 0)
	idx = tensor.Where(tensor.Less(idx, zero), tensor.Add(idx, c.constant(size)), idx)
	lin := tensor.Sum(tensor.Mul(idx, c.constant(strides)), []int{len(is) - 1}, false)
	if batch > 0 {
		// Row offset of each batch element: its flat batch number times the rows per
		// batch element.
		nb := data[:batch].Size()
		off := tensor.New(tensor.I64, data[:batch]...)
		for b := range nb {
			off.Int64s()[b] = int64(b) * acc
		}
		shape := append(data[:batch].Clone(), make([]int, len(is)-1-batch)...)
		for j := batch; j < len(shape); j++ {
			shape[j] = 1
		}
		lin = tensor.Add(lin, tensor.Reshape(c.constant(off), shape...))
	}
	return lin
}

func lowerGatherND(c *ctx) {
	data := c.shape(0)
	is := c.shape(1)
	batch := c.attrInt("batch_dims", 0)
	if len(is) < 1 || batch < 0 || batch >= len(is) || batch+is[len(is)-1] > len(data) {
		c.failf("data %v, indices %v and batch_dims %d do not fit", data, is, batch)
	}
	k := is[len(is)-1]
	lin := linearIndex(c, c.x(1), data, batch)
	rows := tensor.Reshape(c.x(0), append([]int{data[:batch+k].Size()}, data[batch+k:]...)...)
	c.set(0, tensor.Gather(rows, lin, 0), c.dtype(0))
}

// scatter scatters updates into data along axis at idx (normalised, updates' shape)
// with the node's reduction: none and add are the engine's Scatter; mul, max and min
// are compositions (reduceScatter).
func (c *ctx) scatter(data, idx, upd *tensor.Node, axis int) *tensor.Node {
	switch r := c.attrString("reduction", "none"); r {
	case "none":
		return tensor.Scatter(data, idx, upd, axis, tensor.ScatterReduceNone)
	case "add":
		return tensor.Scatter(data, idx, upd, axis, tensor.ScatterReduceAdd)
	case "mul", "max", "min":
		return reduceScatter(c, data, idx, upd, axis, r)
	default:
		c.failf("reduction %q", r)
	}
	return nil
}

// reduceScatter combines every update with its target by mul, max or min. Each update
// is compared with every position of the target axis (one extra axis of that size),
// the matches are reduced over the updates' axis, and the result, shaped like the
// data, is combined where some update landed.
func reduceScatter(c *ctx, data, idx, upd *tensor.Node, axis int, mode string) *tensor.Node {
	ds, us := data.Shape(), upd.Shape()
	r := len(ds)
	dim := ds[axis]
	iota := tensor.New(idx.DType(), dim)
	for j := range dim {
		iota.SetFloat(j, float64(j))
	}
	// hit (..., u_axis, ..., j): update p lands on position j of the axis.
	hit := tensor.Equal(tensor.Unsqueeze(idx, r), c.constant(iota))
	var identity float64
	var reduce func(x *tensor.Node, axes []int, keep bool) *tensor.Node
	var combine func(a, b *tensor.Node) *tensor.Node
	switch mode {
	case "mul":
		identity, reduce, combine = 1, tensor.Prod, tensor.Mul
	case "max":
		identity, reduce, combine = math.Inf(-1), tensor.Max, tensor.Maximum
		if !data.DType().IsFloat() {
			identity, _ = intLimits(fromEngine(data.DType()))
		}
	default:
		identity, reduce, combine = math.Inf(1), tensor.Min, tensor.Minimum
		if !data.DType().IsFloat() {
			_, identity = intLimits(fromEngine(data.DType()))
		}
	}
	vals := tensor.Where(hit, tensor.Unsqueeze(upd, r), c.scalar(upd.DType(), identity))
	red := reduce(vals, []int{axis}, false) // (other axes of the updates..., dim)
	landed := tensor.Max(tensor.Cast(hit, tensor.I32), []int{axis}, false)
	// Move the position axis back into place and pad the other axes to the data's.
	perm := make([]int, 0, r)
	for i := range r - 1 {
		if i == axis {
			perm = append(perm, r-1)
		}
		perm = append(perm, i)
	}
	if axis == r-1 {
		perm = append(perm, r-1)
	}
	red, landed = tensor.Permute(red, perm...), tensor.Permute(landed, perm...)
	before, after := make([]int, r), make([]int, r)
	for i := range r {
		if i != axis {
			after[i] = ds[i] - us[i]
		}
	}
	if slices.Max(after) > 0 {
		red = tensor.Pad(red, before, after, tensor.PadConstant, 0)
		landed = tensor.Pad(landed, before, after, tensor.PadConstant, 0)
	}
	return tensor.Where(tensor.NotEqual(landed, c.scalar(tensor.I32, 0)), combine(data, red), data)
}

func lowerScatterElements(c *ctx) {
	dt := c.sameTypes(0, 2)
	s := c.shape(0)
	axis := c.axis(c.attrInt("axis", 0), len(s))
	y := c.scatter(c.x(0), c.indices(1, s[axis]), c.x(2), axis)
	c.set(0, c.wrap(y, dt), dt)
}

// lowerScatterND scatters rows of the data flattened over its indexed axes.
func lowerScatterND(c *ctx) {
	dt := c.sameTypes(0, 2)
	data := c.shape(0)
	is := c.shape(1)
	if len(is) < 1 || is[len(is)-1] > len(data) {
		c.failf("indices %v do not fit data %v", is, data)
	}
	k := is[len(is)-1]
	rest := data[k:]
	m := is[:len(is)-1].Size()
	lin := tensor.Reshape(linearIndex(c, c.x(1), data, 0), append([]int{m}, onesOf(len(rest))...)...)
	rows := tensor.Reshape(c.x(0), append([]int{data[:k].Size()}, rest...)...)
	upd := tensor.Reshape(c.x(2), append([]int{m}, rest...)...)
	idx := tensor.Expand(lin, upd.Shape()...)
	y := tensor.Reshape(c.scatter(rows, idx, upd, 0), data...)
	c.set(0, c.wrap(y, dt), dt)
}

func onesOf(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

// lowerOneHot: indices may be negative (counted from depth); values holds (off, on).
func lowerOneHot(c *ctx) {
	depth := int(c.floats(1)[0])
	dt := c.dtype(2)
	if depth < 1 {
		c.failf("depth %d", depth)
	}
	s := c.shape(0)
	axis := c.attrInt("axis", -1)
	if axis < 0 {
		axis += len(s) + 1
	}
	if axis < 0 || axis > len(s) {
		c.failf("axis %d for indices %v", c.attrInt("axis", -1), s)
	}
	idx := c.x(0)
	if !idx.DType().IsInt() {
		idx = tensor.Cast(idx, tensor.I64)
	}
	zero := c.scalar(idx.DType(), 0)
	idx = tensor.Where(tensor.Less(idx, zero), tensor.Add(idx, c.scalar(idx.DType(), float64(depth))), idx)
	hot := tensor.OneHot(idx, depth, tensor.I32)
	if axis != len(s) {
		perm := make([]int, 0, len(s)+1)
		for i := range len(s) {
			if i == axis {
				perm = append(perm, len(s))
			}
			perm = append(perm, i)
		}
		hot = tensor.Permute(hot, perm...)
	}
	vals := c.x(2)
	off := tensor.Reshape(tensor.SliceAxis(vals, 0, 0, 1))
	on := tensor.Reshape(tensor.SliceAxis(vals, 0, 1, 2))
	y := tensor.Where(tensor.NotEqual(hot, c.scalar(tensor.I32, 0)), on, off)
	c.set(0, y, dt)
}

func lowerTopK(c *ctx) {
	s := c.shape(0)
	axis := c.axis(c.attrInt("axis", -1), len(s))
	var k int
	if c.opset() < 10 {
		k = c.attrInt("k", 0)
	} else {
		k = c.scalarInt(1)
	}
	largest := c.attrInt("largest", 1) != 0
	c.ignore("sorted")
	if k < 0 || k > s[axis] {
		c.failf("k %d for axis %d of %v", k, axis, s)
	}
	c.requireNumeric(0)
	vals, idx := tensor.TopK(c.x(0), k, axis, largest)
	c.set(0, vals, c.dtype(0))
	c.set(1, idx, Int64)
}

func lowerArgReduce(c *ctx) {
	c.requireNumeric(0)
	s := c.shape(0)
	axis := c.axis(c.attrInt("axis", 0), len(s))
	keep := c.attrInt("keepdims", 1) != 0
	last := c.attrInt("select_last_index", 0) != 0
	x := c.x(0)
	f := tensor.ArgMax
	if c.n.op == "ArgMin" {
		f = tensor.ArgMin
	}
	if !last {
		c.set(0, f(x, axis, keep), Int64)
		return
	}
	// The last extremum is the first of the reversed axis.
	st, en, sp := make([]int, len(s)), slices.Clone([]int(s)), onesOf(len(s))
	st[axis], en[axis], sp[axis] = s[axis]-1, -s[axis]-1, -1
	r := f(tensor.Slice(x, st, en, sp), axis, keep)
	c.set(0, tensor.Sub(c.scalar(tensor.I64, float64(s[axis]-1)), r), Int64)
}

func lowerCumSum(c *ctx) {
	dt := c.dtype(0)
	c.requireNumeric(0)
	axis := c.axis(c.scalarInt(1), c.rank(0))
	ex, rev := c.attrInt("exclusive", 0) != 0, c.attrInt("reverse", 0) != 0
	c.set(0, c.wrap(tensor.CumSum(c.x(0), axis, ex, rev), dt), dt)
}

// lowerNonZero lists the coordinates of the non-zero elements, (rank, count), in
// row-major order. The count is measured first (a stage boundary); then each non-zero
// element writes its coordinates into column (number of non-zero elements before it),
// and zero elements into a spare last column that is cut off.
func lowerNonZero(c *ctx) {
	x := c.x(0)
	s := x.Shape()
	r := len(s)
	nz := x
	if x.DType() != tensor.Bool {
		nz = tensor.NotEqual(x, c.scalar(x.DType(), 0))
	}
	flat := tensor.Reshape(tensor.Cast(nz, tensor.I64), s.Size())
	count := int(c.measure("count", tensor.Sum(flat, nil, false)).Int64s()[0])
	n := s.Size()
	if r == 0 {
		c.setHost(0, tensor.New(tensor.I64, 0, count), Int64)
		return
	}
	coords := tensor.New(tensor.I64, r, n)
	strides := s.Strides()
	for e := range n {
		for a := range r {
			coords.Int64s()[a*n+e] = int64(e / strides[a] % s[a])
		}
	}
	slot := tensor.CumSum(flat, 0, true, false)
	slot = tensor.Where(tensor.Reshape(nz, n), slot, c.scalar(tensor.I64, float64(count)))
	idx := tensor.Expand(tensor.Reshape(slot, 1, n), r, n)
	out := tensor.Full(c.g, tensor.I64, tensor.Shape{r, count + 1}, 0)
	y := tensor.Scatter(out, idx, c.constant(coords), 1, tensor.ScatterReduceNone)
	c.set(0, tensor.SliceAxis(y, 1, 0, count), Int64)
}
