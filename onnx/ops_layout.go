package onnx

import (
	"math"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// Layout and shape operators: constants, reshapes, transposes, slicing, padding, and
// the shape queries (folded at load, since every shape is static).

func init() {
	register(7, lowerConstant, "Constant")
	register(7, lowerReshape, "Reshape")
	register(7, lowerTranspose, "Transpose")
	register(7, lowerConcat, "Concat")
	register(7, lowerFlatten, "Flatten")
	register(7, lowerSqueeze, "Squeeze", "Unsqueeze")
	register(8, lowerExpand, "Expand")
	register(7, lowerSlice, "Slice")
	register(7, lowerSplit, "Split")
	register(7, lowerTile, "Tile")
	register(7, lowerPad, "Pad")
	register(7, lowerShape, "Shape")
	register(7, func(c *ctx) {
		c.setHost(0, tensor.Scalar(tensor.I64, float64(c.shape(0).Size())), Int64)
	}, "Size")
	register(9, lowerConstantOfShape, "ConstantOfShape")
	register(18, lowerCenterCropPad, "CenterCropPad")
	register(11, lowerRange, "Range")
	register(9, lowerEyeLike, "EyeLike")
	register(14, lowerTrilu, "Trilu")
	register(7, lowerDepthToSpace, "DepthToSpace")
	register(7, lowerSpaceToDepth, "SpaceToDepth")
	register(7, lowerDropout, "Dropout")
}

func lowerConstant(c *ctx) {
	var t *tensor.Tensor
	dt := Float
	set := 0
	if a := c.attrTensor("value"); a != nil {
		t, dt = a.t, a.dtype
		set++
	}
	if a := c.attr("value_float"); a != nil {
		t, dt = tensor.Scalar(tensor.F32, float64(a.GetF())), Float
		set++
	}
	if v, ok := c.attrFloats("value_floats"); ok {
		t, _ = tensor.FromFloat32s(tensor.Shape{len(v)}, v)
		dt = Float
		set++
	}
	if a := c.attr("value_int"); a != nil {
		t, dt = tensor.Scalar(tensor.I64, 0), Int64
		t.Int64s()[0] = a.GetI()
		set++
	}
	if a := c.attr("value_ints"); a != nil {
		t, dt = tensor.New(tensor.I64, len(a.Ints)), Int64
		copy(t.Int64s(), a.Ints)
		set++
	}
	if c.attr("value_string") != nil || c.attr("value_strings") != nil {
		c.unsupported("string constants")
	}
	if c.attr("sparse_value") != nil {
		c.unsupported("sparse constants")
	}
	if set != 1 {
		c.failf("needs exactly one value attribute, has %d", set)
	}
	c.setHost(0, t, dt)
}

// reshapeTarget resolves an ONNX shape (0 copies the input's dimension unless
// allowzero, -1 is inferred).
func (c *ctx) reshapeTarget(in tensor.Shape, want []int, allowZero bool) tensor.Shape {
	out := make([]int, len(want))
	for i, d := range want {
		if d == 0 && !allowZero {
			if i >= len(in) {
				c.failf("shape %v copies dimension %d of %v, which has none", want, i, in)
			}
			d = in[i]
		}
		out[i] = d
	}
	s, err := tensor.ResolveReshape(in, out)
	if err != nil {
		c.failf("%v", err)
	}
	return s
}

func lowerReshape(c *ctx) {
	var want []int
	if c.opset() < 5 {
		want, _ = c.attrInts("shape")
	} else {
		want = c.ints(1)
	}
	s := c.reshapeTarget(c.shape(0), want, c.attrInt("allowzero", 0) != 0)
	c.set(0, tensor.Reshape(c.x(0), s...), c.dtype(0))
}

func lowerTranspose(c *ctx) {
	r := c.rank(0)
	perm, ok := c.attrInts("perm")
	if !ok {
		perm = make([]int, r)
		for i := range perm {
			perm[i] = r - 1 - i
		}
	}
	c.set(0, tensor.Permute(c.x(0), c.axes(perm, r)...), c.dtype(0))
}

func lowerConcat(c *ctx) {
	idx := make([]int, c.nin())
	for i := range idx {
		idx[i] = i
	}
	dt := c.sameTypes(idx...)
	axis := c.axis(c.attrInt("axis", 0), c.rank(0))
	var xs []*tensor.Node
	for i := range c.nin() {
		if c.shape(i).Size() > 0 {
			xs = append(xs, c.x(i))
		}
	}
	if len(xs) == 0 {
		s := c.shape(0).Clone()
		s[axis] = 0
		for i := 1; i < c.nin(); i++ {
			s[axis] += c.shape(i)[axis]
		}
		c.setHost(0, tensor.New(dt.Carrier(), s...), dt)
		return
	}
	c.set(0, tensor.Concat(axis, xs...), dt)
}

func lowerFlatten(c *ctx) {
	s := c.shape(0)
	a := c.attrInt("axis", 1)
	if a < 0 {
		a += len(s)
	}
	if a < 0 || a > len(s) {
		c.failf("axis %d out of range for %v", c.attrInt("axis", 1), s)
	}
	c.set(0, tensor.Reshape(c.x(0), s[:a].Size(), s[a:].Size()), c.dtype(0))
}

// axesArg reads the axes of Squeeze, Unsqueeze and the reductions: an attribute before
// opset since, then optional input i.
func (c *ctx) axesArg(since, i int) ([]int, bool) {
	if c.opset() < since {
		return c.attrInts("axes")
	}
	if !c.has(i) {
		return nil, false
	}
	return c.ints(i), true
}

func lowerSqueeze(c *ctx) {
	axes, _ := c.axesArg(13, 1)
	s := c.shape(0)
	if c.n.op == "Squeeze" {
		drop := c.axes(axes, len(s))
		if len(axes) == 0 {
			for i, d := range s {
				if d == 1 {
					drop = append(drop, i)
				}
			}
		}
		out := tensor.Shape{}
		for i, d := range s {
			if slices.Contains(drop, i) {
				if d != 1 {
					c.failf("axis %d of %v has size %d, not 1", i, s, d)
				}
				continue
			}
			out = append(out, d)
		}
		c.set(0, tensor.Reshape(c.x(0), out...), c.dtype(0))
		return
	}
	r := len(s) + len(axes)
	at := c.axes(axes, r)
	out := make(tensor.Shape, 0, r)
	j := 0
	for i := range r {
		if slices.Contains(at, i) {
			out = append(out, 1)
		} else {
			if j >= len(s) {
				c.failf("axes %v repeat an axis", axes)
			}
			out = append(out, s[j])
			j++
		}
	}
	c.set(0, tensor.Reshape(c.x(0), out...), c.dtype(0))
}

func lowerExpand(c *ctx) {
	want := tensor.Shape(c.ints(1))
	out, ok := tensor.Broadcast(c.shape(0), want)
	if !ok {
		c.failf("shape %v does not broadcast with %v", c.shape(0), want)
	}
	if out.Equal(c.shape(0)) {
		c.pass(0, 0)
		return
	}
	c.set(0, tensor.Expand(c.x(0), out...), c.dtype(0))
}

func lowerSlice(c *ctx) {
	s := c.shape(0)
	var starts, ends, axes, steps []int
	if c.opset() < 10 {
		starts, _ = c.attrInts("starts")
		ends, _ = c.attrInts("ends")
		axes, _ = c.attrInts("axes")
	} else {
		starts, ends = c.ints(1), c.ints(2)
		if c.has(3) {
			axes = c.ints(3)
		}
		if c.has(4) {
			steps = c.ints(4)
		}
	}
	if len(ends) != len(starts) {
		c.failf("starts %v and ends %v differ in length", starts, ends)
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, i)
		}
	}
	if len(axes) != len(starts) || (steps != nil && len(steps) != len(starts)) {
		c.failf("starts, ends, axes and steps differ in length")
	}
	full := func(v int) []int {
		out := make([]int, len(s))
		for i := range out {
			out[i] = v
		}
		return out
	}
	st, en, sp := full(0), slices.Clone([]int(s)), full(1)
	for k, a := range c.axes(axes, len(s)) {
		st[a], en[a] = starts[k], ends[k]
		if steps != nil {
			sp[a] = steps[k]
		}
		if sp[a] == 0 {
			c.failf("step 0 on axis %d", a)
		}
		// Beyond-range bounds (often INT64_MAX) clamp; keep them in int range first.
		st[a] = max(min(st[a], math.MaxInt32), math.MinInt32)
		en[a] = max(min(en[a], math.MaxInt32), math.MinInt32)
	}
	c.set(0, tensor.Slice(c.x(0), st, en, sp), c.dtype(0))
}

func lowerSplit(c *ctx) {
	s := c.shape(0)
	axis := c.axis(c.attrInt("axis", 0), len(s))
	var sizes []int
	switch {
	case c.opset() < 13:
		sizes, _ = c.attrInts("split")
	case c.has(1):
		sizes = c.ints(1)
	}
	n := len(c.n.outputs)
	if k := c.attrInt("num_outputs", 0); k > 0 {
		n = k
	}
	if sizes == nil {
		per := (s[axis] + n - 1) / n
		for i := range n {
			sizes = append(sizes, max(min(per, s[axis]-i*per), 0))
		}
	}
	if len(sizes) != len(c.n.outputs) {
		c.failf("%d sizes for %d outputs", len(sizes), len(c.n.outputs))
	}
	start := 0
	for i, sz := range sizes {
		if sz < 0 || start+sz > s[axis] {
			c.failf("sizes %v do not fit axis %d of %v", sizes, axis, s)
		}
		c.set(i, tensor.SliceAxis(c.x(0), axis, start, start+sz), c.dtype(0))
		start += sz
	}
}

func lowerTile(c *ctx) {
	reps := c.ints(1)
	if len(reps) != c.rank(0) {
		c.failf("repeats %v for rank %d", reps, c.rank(0))
	}
	c.set(0, tensor.Tile(c.x(0), reps...), c.dtype(0))
}

// lowerPad: pads and value are attributes before opset 11, inputs from it; negative
// pads crop.
func lowerPad(c *ctx) {
	s := c.shape(0)
	r := len(s)
	dt := c.dtype(0)
	var pads []int
	value := 0.0
	var axes []int
	if c.opset() < 11 {
		pads, _ = c.attrInts("pads")
		value = float64(c.attrFloat("value", 0))
	} else {
		pads = c.ints(1)
		if c.has(2) && c.shape(2).Size() > 0 {
			value = c.floats(2)[0]
		}
		if c.has(3) {
			axes = c.axes(c.ints(3), r)
		}
	}
	if axes == nil {
		for i := range r {
			axes = append(axes, i)
		}
	}
	if len(pads) != 2*len(axes) {
		c.failf("%d pads for %d axes", len(pads), len(axes))
	}
	before, after := make([]int, r), make([]int, r)
	for k, a := range axes {
		before[a], after[a] = pads[k], pads[k+len(axes)]
	}
	x := c.x(0)
	// Crop first (negative pads), then pad.
	st, en := make([]int, r), slices.Clone([]int(s))
	crop := false
	for i := range r {
		if before[i] < 0 {
			st[i], before[i], crop = -before[i], 0, true
		}
		if after[i] < 0 {
			en[i], after[i], crop = s[i]+after[i], 0, true
		}
	}
	if crop {
		x = tensor.Slice(x, st, en, nil)
	}
	mode := c.attrString("mode", "constant")
	var pm tensor.PadMode
	switch mode {
	case "constant":
		pm = tensor.PadConstant
	case "reflect":
		pm = tensor.PadReflect
	case "edge":
		pm = tensor.PadEdge
	case "wrap":
		c.set(0, padWrap(x, before, after), dt)
		return
	default:
		c.unsupported("mode %q", mode)
	}
	if slices.Max(append(slices.Clone(before), after...)) == 0 {
		c.set(0, x, dt)
		return
	}
	if pm == tensor.PadConstant && (value != float64(float32(value)) || !dt.IsFloat() && value != 0) {
		// The engine's pad value is a float32: pad with zeros, then set the border.
		c.set(0, padValue(c, x, before, after, value), dt)
		return
	}
	c.set(0, tensor.Pad(x, before, after, pm, float32(value)), dt)
}

// padValue pads with a value the engine's float32 attribute cannot hold exactly.
func padValue(c *ctx, x *tensor.Node, before, after []int, v float64) *tensor.Node {
	y := tensor.Pad(x, before, after, tensor.PadConstant, 0)
	inside := tensor.Pad(tensor.Full(c.g, tensor.Bool, x.Shape(), 1), before, after, tensor.PadConstant, 0)
	return tensor.Where(inside, y, c.scalar(x.DType(), v))
}

// padWrap pads each axis with the elements from its other end.
func padWrap(x *tensor.Node, before, after []int) *tensor.Node {
	for a := range before {
		d := x.Shape()[a]
		var parts []*tensor.Node
		if b := before[a]; b > 0 {
			for k := b; k > 0; k -= min(k, d) {
				n := min(k, d)
				parts = append(parts, tensor.SliceAxis(x, a, d-n, d))
			}
		}
		parts = append(parts, x)
		if e := after[a]; e > 0 {
			for k := e; k > 0; k -= min(k, d) {
				parts = append(parts, tensor.SliceAxis(x, a, 0, min(k, d)))
			}
		}
		if len(parts) > 1 {
			x = tensor.Concat(a, parts...)
		}
	}
	return x
}

func lowerShape(c *ctx) {
	s := c.shape(0)
	r := len(s)
	start, end := c.attrInt("start", 0), c.attrInt("end", r)
	clamp := func(i int) int {
		if i < 0 {
			i += r
		}
		return min(max(i, 0), r)
	}
	start, end = clamp(start), clamp(end)
	out := tensor.New(tensor.I64, max(end-start, 0))
	for i := start; i < end; i++ {
		out.Int64s()[i-start] = int64(s[i])
	}
	c.setHost(0, out, Int64)
}

func lowerConstantOfShape(c *ctx) {
	shape := tensor.Shape(c.ints(0))
	if _, err := checkedSize(shape); err != nil {
		c.failf("%v", err)
	}
	dt, v := Float, 0.0
	if a := c.attrTensor("value"); a != nil {
		if a.Len() != 1 {
			c.failf("value must hold one element, has %d", a.Len())
		}
		dt, v = a.dtype, a.At(0)
		if a.t.DType() == tensor.I64 {
			t := tensor.New(tensor.I64, shape...)
			for i := range t.Int64s() {
				t.Int64s()[i] = a.t.Int64s()[0]
			}
			c.setHost(0, t, dt)
			return
		}
	}
	t := tensor.New(dt.Carrier(), shape...)
	if v != 0 {
		for i := range t.Len() {
			t.SetFloat(i, v)
		}
	}
	c.setHost(0, t, dt)
}

func lowerRange(c *ctx) {
	dt := c.sameTypes(0, 1, 2)
	start, limit, delta := c.floats(0), c.floats(1), c.floats(2)
	if len(start) != 1 || len(limit) != 1 || len(delta) != 1 {
		c.failf("start, limit and delta must be scalars")
	}
	if delta[0] == 0 {
		c.failf("delta is 0")
	}
	n := int(max(math.Ceil((limit[0]-start[0])/delta[0]), 0))
	if _, err := checkedSize(tensor.Shape{n}); err != nil {
		c.failf("%v", err)
	}
	t := tensor.New(dt.Carrier(), n)
	if dt == Int64 {
		s, d := c.ints(0)[0], c.ints(2)[0]
		for i := range n {
			t.Int64s()[i] = int64(s + i*d)
		}
	} else {
		for i := range n {
			t.SetFloat(i, start[0]+float64(i)*delta[0])
		}
	}
	c.setHost(0, t, dt)
}

func lowerEyeLike(c *ctx) {
	s := c.shape(0)
	if len(s) != 2 {
		c.failf("input must be 2-D, is %v", s)
	}
	dt := c.dtype(0)
	if a := c.attr("dtype"); a != nil {
		dt = DataType(a.GetI())
	}
	k := c.attrInt("k", 0)
	t := tensor.New(dt.Carrier(), s...)
	for i := range s[0] {
		if j := i + k; j >= 0 && j < s[1] {
			t.SetFloat(i*s[1]+j, 1)
		}
	}
	c.setHost(0, t, dt)
}

func lowerTrilu(c *ctx) {
	s := c.shape(0)
	if len(s) < 2 {
		c.failf("input must have rank 2 or more, is %v", s)
	}
	k := 0
	if c.has(1) {
		k = c.scalarInt(1)
	}
	upper := c.attrInt("upper", 1) != 0
	rows, cols := s[len(s)-2], s[len(s)-1]
	mask := tensor.New(tensor.Bool, rows, cols)
	for i := range rows {
		for j := range cols {
			if (upper && j-i >= k) || (!upper && j-i <= k) {
				mask.Bytes()[i*cols+j] = 1
			}
		}
	}
	x := c.x(0)
	c.set(0, tensor.Where(c.constant(mask), x, c.scalar(x.DType(), 0)), c.dtype(0))
}

func lowerDepthToSpace(c *ctx) {
	mode := c.attrString("mode", "DCR")
	if mode != "DCR" && mode != "CRD" {
		c.failf("mode %q: want DCR or CRD", mode)
	}
	c.set(0, tensor.DepthToSpace(c.x(0), c.attrInt("blocksize", 0), mode), c.dtype(0))
}

// lowerSpaceToDepth is DepthToSpace's inverse, as a reshape and a transpose.
func lowerSpaceToDepth(c *ctx) {
	s := c.shape(0)
	b := c.attrInt("blocksize", 0)
	if len(s) != 4 || b <= 0 || s[2]%b != 0 || s[3]%b != 0 {
		c.failf("input %v and block size %d: want (N, C, H, W) with H and W multiples of it", s, b)
	}
	n, ch, h, w := s[0], s[1], s[2], s[3]
	x := tensor.Reshape(c.x(0), n, ch, h/b, b, w/b, b)
	x = tensor.Permute(x, 0, 3, 5, 1, 2, 4)
	c.set(0, tensor.Reshape(x, n, ch*b*b, h/b, w/b), c.dtype(0))
}

// lowerDropout is the identity at inference (and in training with ratio 0); the mask
// is all true.
func lowerDropout(c *ctx) {
	c.ignore("ratio", "seed", "is_test")
	if c.has(2) {
		if t := c.host(2); t.Len() == 1 && t.Float(0) != 0 {
			ratio := 0.5
			if c.has(1) {
				ratio = c.floats(1)[0]
			}
			if ratio != 0 {
				c.unsupported("training mode (random masks)")
			}
		}
	}
	c.pass(0, 0)
	if c.wants(1) {
		c.setHost(1, func() *tensor.Tensor {
			t := tensor.New(tensor.Bool, c.shape(0)...)
			for i := range t.Bytes() {
				t.Bytes()[i] = 1
			}
			return t
		}(), Bool)
	}
}

// lowerCenterCropPad crops or zero-pads each of axes to the requested size, centred
// (the extra element of an odd difference goes to the end).
func lowerCenterCropPad(c *ctx) {
	x := c.x(0)
	s := x.Shape()
	want := c.ints(1)
	as, ok := c.attrInts("axes")
	if !ok {
		as = make([]int, len(s))
		for i := range as {
			as[i] = i
		}
	}
	axes := c.axes(as, len(s))
	if len(want) != len(axes) {
		c.failf("shape has %d values for %d axes", len(want), len(axes))
	}
	st, en := make([]int, len(s)), slices.Clone([]int(s))
	before, after := make([]int, len(s)), make([]int, len(s))
	for i, a := range axes {
		d, w := s[a], want[i]
		switch {
		case w < 0:
			c.failf("shape %v has a negative size", want)
		case w < d:
			st[a] = (d - w) / 2
			en[a] = st[a] + w
		case w > d:
			before[a] = (w - d) / 2
			after[a] = w - d - before[a]
		}
	}
	y := tensor.Slice(x, st, en, nil)
	if slices.ContainsFunc(before, func(v int) bool { return v > 0 }) || slices.ContainsFunc(after, func(v int) bool { return v > 0 }) {
		y = tensor.Pad(y, before, after, tensor.PadConstant, 0)
	}
	c.set(0, y, c.dtype(0))
}
