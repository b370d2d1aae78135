package onnx

import (
	"github.com/gml-dev/gml/tensor"
)

// Operators that write values at computed positions: Col2Im (an additive scatter of
// image blocks), MaxUnpool (MaxPool's indices undone) and TensorScatter (a key/value
// cache update). The positions are computed at load; the scatters run on the engine.

func init() {
	register(18, lowerCol2Im, "Col2Im")
	register(9, lowerMaxUnpool, "MaxUnpool")
	register(24, lowerTensorScatter, "TensorScatter")
}

// lowerCol2Im sums the columns of input (N, C*prod(block), L) back into an image
// (N, C, image...): column l of block offset k adds to pixel l*stride + k*dilation of
// the padded image, whose pads are then cut off.
func lowerCol2Im(c *ctx) {
	c.requireFloat(0)
	img, block := c.ints(1), c.ints(2)
	r := len(img)
	if r == 0 || len(block) != r {
		c.failf("image_shape %v and block_shape %v: want the same number of axes", img, block)
	}
	get := func(name string, def, n int) []int {
		v, ok := c.attrInts(name)
		if !ok {
			v = make([]int, n)
			for i := range v {
				v[i] = def
			}
		}
		if len(v) != n {
			c.failf("attribute %q has %d values, want %d", name, len(v), n)
		}
		return v
	}
	dil, pads, strides := get("dilations", 1, r), get("pads", 0, 2*r), get("strides", 1, r)
	s := c.shape(0)
	k := tensor.Shape(block).Size()
	padded, blocks := make(tensor.Shape, r), make(tensor.Shape, r)
	for i := range r {
		padded[i] = img[i] + pads[i] + pads[r+i]
		blocks[i] = (padded[i]-dil[i]*(block[i]-1)-1)/strides[i] + 1
		if blocks[i] < 1 {
			c.failf("block %v does not fit image %v with pads %v", block, img, pads)
		}
	}
	if len(s) != 3 || s[1]%k != 0 || s[2] != blocks.Size() {
		c.failf("input %v: want (N, C*%d, %d)", s, k, blocks.Size())
	}
	n, ch, l := s[0], s[1]/k, s[2]
	idx := tensor.New(tensor.I64, k*l)
	ps, bs, ks := padded.Strides(), blocks.Strides(), tensor.Shape(block).Strides()
	for o := range k {
		for b := range l {
			p := 0
			for i := range r {
				p += (b/bs[i]%blocks[i]*strides[i] + o/ks[i]%block[i]*dil[i]) * ps[i]
			}
			idx.Int64s()[o*l+b] = int64(p)
		}
	}
	x := tensor.Reshape(c.x(0), n, ch, k*l)
	at := tensor.Expand(tensor.Reshape(c.constant(idx), 1, 1, k*l), n, ch, k*l)
	y := tensor.Scatter(tensor.Full(c.g, x.DType(), tensor.Shape{n, ch, padded.Size()}, 0), at, x, 2, tensor.ScatterReduceAdd)
	y = tensor.Reshape(y, append(tensor.Shape{n, ch}, padded...)...)
	st, en := make([]int, r+2), append([]int{n, ch}, padded...)
	for i := range r {
		st[2+i], en[2+i] = pads[i], pads[i]+img[i]
	}
	c.set(0, tensor.Slice(y, st, en, nil), c.dtype(0))
}

// lowerMaxUnpool writes each value of X at its index I (a flat index into the pooling's
// input, as MaxPool's indices output gives) in a zero tensor of that input's shape.
func lowerMaxUnpool(c *ctx) {
	xs := c.shape(0)
	r := len(xs) - 2
	if r < 1 || !c.shape(1).Equal(xs) {
		c.failf("X %v and I %v: want the same shape (N, C, spatial...)", xs, c.shape(1))
	}
	kernel, ok := c.attrInts("kernel_shape")
	if !ok || len(kernel) != r {
		c.failf("kernel_shape %v: want %d values", kernel, r)
	}
	strides, ok := c.attrInts("strides")
	if !ok {
		strides = onesOf(r)
	}
	pads, ok := c.attrInts("pads")
	if !ok {
		pads = make([]int, 2*r)
	}
	// The indices address the pooling's input, whose size kernel, strides and pads
	// imply; a larger output_shape pads it at the end of each axis.
	in := append(tensor.Shape{xs[0], xs[1]}, make([]int, r)...)
	for i := range r {
		in[2+i] = (xs[2+i]-1)*strides[i] - pads[i] - pads[r+i] + kernel[i]
	}
	out := in
	if c.has(2) {
		out = tensor.Shape(c.ints(2))
	}
	if len(out) != r+2 || out[0] != xs[0] || out[1] != xs[1] {
		c.failf("output shape %v does not fit X %v", out, xs)
	}
	x := tensor.Reshape(c.x(0), xs.Size())
	idx := tensor.Reshape(tensor.Cast(c.x(1), tensor.I64), xs.Size())
	y := tensor.Scatter(tensor.Full(c.g, x.DType(), tensor.Shape{in.Size()}, 0), idx, x, 0, tensor.ScatterReduceNone)
	y = tensor.Reshape(y, in...)
	if !out.Equal(in) {
		before, after := make([]int, r+2), make([]int, r+2)
		for i := range r {
			if after[2+i] = out[2+i] - in[2+i]; after[2+i] < 0 {
				c.failf("output_shape %v is smaller than the unpooled size %v", out, in)
			}
		}
		y = tensor.Pad(y, before, after, tensor.PadConstant, 0)
	}
	c.set(0, y, c.dtype(0))
}

// lowerTensorScatter writes update into past_cache along axis (default -2) from
// write_indices[b] for each batch entry b (default 0), wrapping around the cache in
// circular mode.
func lowerTensorScatter(c *ctx) {
	dt := c.sameTypes(0, 1)
	cs, us := c.shape(0), c.shape(1)
	if len(cs) < 2 || len(us) != len(cs) {
		c.failf("past_cache %v and update %v: want the same rank, 2 or more", cs, us)
	}
	axis := c.axis(c.attrInt("axis", -2), len(cs))
	if axis == 0 {
		c.failf("axis 0 is the batch axis")
	}
	for i := range cs {
		if i != axis && cs[i] != us[i] || us[axis] > cs[axis] {
			c.failf("update %v does not fit past_cache %v along axis %d", us, cs, axis)
		}
	}
	mode := c.attrString("mode", "linear")
	if mode != "linear" && mode != "circular" {
		c.failf("mode %q: want linear or circular", mode)
	}
	pos := onesOf(len(us))
	pos[axis] = us[axis]
	seq := tensor.New(tensor.I64, pos...)
	for i := range us[axis] {
		seq.Int64s()[i] = int64(i)
	}
	idx := c.constant(seq)
	if c.has(2) {
		if !c.shape(2).Equal(tensor.Shape{cs[0]}) {
			c.failf("write_indices has shape %v, want (%d)", c.shape(2), cs[0])
		}
		bs := onesOf(len(us))
		bs[0] = cs[0]
		idx = tensor.Add(idx, tensor.Reshape(tensor.Cast(c.x(2), tensor.I64), bs...))
	}
	if mode == "circular" {
		idx = tensor.Mod(idx, c.scalar(tensor.I64, float64(cs[axis])))
	}
	idx = tensor.Expand(idx, us...)
	c.set(0, tensor.Scatter(c.x(0), idx, c.x(1), axis, tensor.ScatterReduceNone), dt)
}
