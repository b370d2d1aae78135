package onnx

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Quantisation: QuantizeLinear and DequantizeLinear (per tensor, per axis and
// blocked; integer and 8- and 4-bit float types), and the integer and quantised
// products and convolutions. Integer products run in float32, exact while their sums
// stay below 2^24 (a product of 8-bit values over up to 256 terms, and much more in
// practice); results are rounded half to even as the reference does.

func init() {
	register(10, lowerDequantize, "DequantizeLinear")
	register(10, lowerQuantize, "QuantizeLinear")
	register(10, lowerQLinearMatMul, "QLinearMatMul")
	register(10, lowerMatMulInteger, "MatMulInteger")
	register(10, lowerQLinearConv, "QLinearConv")
	register(10, lowerConvInteger, "ConvInteger")
	register(11, lowerDynamicQuantize, "DynamicQuantizeLinear")
}

// quantParam returns a scale or zero point of x's quantisation as a node broadcasting
// against x: a scalar, a vector along axis, or blocks of block elements along axis.
func (c *ctx) quantParam(p *tensor.Node, x tensor.Shape, axis, block int) *tensor.Node {
	ps := p.Shape()
	if ps.Size() == 1 {
		return tensor.Reshape(p)
	}
	if axis < 0 || axis >= len(x) {
		c.failf("axis %d out of range for input %v", axis, x)
	}
	switch {
	case block > 0:
		if len(ps) != len(x) {
			c.failf("blocked parameter %v for input %v", ps, x)
		}
		// Repeat each parameter block times along axis, then cut to x's length.
		rep := make([]int, 0, len(ps)+1)
		exp := make([]int, 0, len(ps)+1)
		for i, d := range ps {
			rep, exp = append(rep, d), append(exp, d)
			if i == axis {
				rep, exp = append(rep, 1), append(exp, block)
			}
		}
		full := ps.Clone()
		full[axis] *= block
		p = tensor.Reshape(tensor.Expand(tensor.Reshape(p, rep...), exp...), full...)
		if full[axis] != x[axis] {
			p = tensor.SliceAxis(p, axis, 0, x[axis])
		}
		return p
	case len(ps) == 1 && ps[0] == x[axis]:
		shape := onesOf(len(x))
		shape[axis] = ps[0]
		return tensor.Reshape(p, shape...)
	}
	c.failf("parameter %v does not fit input %v on axis %d", ps, x, axis)
	return nil
}

// toFloat casts a node to float32 unless it is already a float type.
func toFloat(x *tensor.Node) *tensor.Node {
	if x.DType().IsFloat() {
		return x
	}
	return tensor.Cast(x, tensor.F32)
}

func lowerDequantize(c *ctx) {
	x := c.x(0)
	s := x.Shape()
	axis := c.attrInt("axis", 1) // resolved by quantParam for per-axis parameters
	if axis < 0 {
		axis += len(s)
	}
	block := c.attrInt("block_size", 0)
	out := c.dtype(1)
	if a := c.attr("output_dtype"); a != nil && a.GetI() != 0 {
		out = DataType(a.GetI())
	}
	fdt := out.Carrier()
	if !fdt.IsFloat() {
		c.failf("output type %v is not a float type", out)
	}
	y := toFloat(x)
	if c.has(2) {
		y = tensor.Sub(y, c.quantParam(toFloat(c.x(2)), s, axis, block))
	}
	if y.DType() != tensor.F32 {
		y = tensor.Cast(y, tensor.F32)
	}
	y = tensor.Mul(y, c.quantParam(tensor.Cast(c.x(1), tensor.F32), s, axis, block))
	if fdt != tensor.F32 {
		y = tensor.Cast(y, fdt)
	}
	c.set(0, y, out)
}

func lowerQuantize(c *ctx) {
	c.requireFloat(0)
	x := c.x(0)
	s := x.Shape()
	axis := c.attrInt("axis", 1) // resolved by quantParam for per-axis parameters
	if axis < 0 {
		axis += len(s)
	}
	block := c.attrInt("block_size", 0)
	sat := c.attrInt("saturate", 1) != 0
	c.ignore("precision")
	out := Uint8
	if c.has(2) {
		out = c.dtype(2)
	}
	if a := c.attr("output_dtype"); a != nil && a.GetI() != 0 {
		out = DataType(a.GetI())
	}
	y := tensor.Div(toF32(x), c.quantParam(tensor.Cast(c.x(1), tensor.F32), s, axis, block))
	if f, ok := minifloats[out]; ok {
		if c.has(2) {
			y = tensor.Add(y, c.quantParam(c.x(2), s, axis, block))
		}
		c.set(0, roundMinifloat(y, f, sat), out)
		return
	}
	y = tensor.Round(y)
	if c.has(2) {
		y = tensor.Add(y, c.quantParam(toF32(c.x(2)), s, axis, block))
	}
	c.set(0, saturateInt(c, y, out), out)
}

// toF32 casts to float32 (half types included).
func toF32(x *tensor.Node) *tensor.Node {
	if x.DType() == tensor.F32 {
		return x
	}
	return tensor.Cast(x, tensor.F32)
}

// saturateInt clamps float values (already integral) to an integer type's range and
// casts them to its carrier.
func saturateInt(c *ctx, y *tensor.Node, dt DataType) *tensor.Node {
	if dt.IsFloat() || dt == Bool || !dt.Supported() {
		c.failf("quantised type %v is not an integer type", dt)
	}
	lo, hi := intLimits(dt)
	y = tensor.Minimum(tensor.Maximum(y, c.scalar(y.DType(), lo)), c.scalar(y.DType(), math.Min(hi, math.MaxInt32)))
	return tensor.Cast(y, dt.Carrier())
}

// centred returns the integer input i minus zero point input zi (when present), in
// float32, with the zero point per row (axis 0) or per column (the last axis) as its
// shape says.
func (c *ctx) centred(i, zi int, axis int) *tensor.Node {
	x := toF32(c.x(i))
	if !c.has(zi) {
		return x
	}
	return tensor.Sub(x, c.quantParam(toF32(c.x(zi)), x.Shape(), axis, 0))
}

func lowerMatMulInteger(c *ctx) {
	// A's zero point is per row (axis -2), B's per column (axis -1).
	a := c.centred(0, 2, c.rank(0)-2)
	b := c.centred(1, 3, c.rank(1)-1)
	y := matmul(c, a, b)
	c.set(0, tensor.Cast(tensor.Round(y), tensor.I32), Int32)
}

func lowerQLinearMatMul(c *ctx) {
	a := c.centred(0, 2, c.rank(0)-2)
	b := c.centred(3, 5, c.rank(3)-1)
	p := matmul(c, a, b)
	scale := tensor.Div(tensor.Mul(toF32(c.x(1)), toF32(c.x(4))), toF32(c.x(6)))
	out := c.dtype(7)
	// The scales apply per row of A and per column of B when they are vectors.
	as, bs := c.shape(1), c.shape(4)
	if as.Size() > 1 || bs.Size() > 1 {
		sa := c.quantParam(toF32(c.x(1)), p.Shape(), p.Shape().Rank()-2, 0)
		sb := c.quantParam(toF32(c.x(4)), p.Shape(), p.Shape().Rank()-1, 0)
		scale = tensor.Div(tensor.Mul(sa, sb), tensor.Reshape(toF32(c.x(6))))
	}
	y := tensor.Round(tensor.Mul(p, scale))
	y = tensor.Add(y, tensor.Reshape(toF32(c.x(7))))
	c.set(0, saturateInt(c, y, out), out)
}

// intConv convolves x minus its zero point with w minus its zero points (one per
// output channel, or one for all) in float32.
func intConv(c *ctx, xi, xz, wi, wz int) *tensor.Node {
	x := c.centred(xi, xz, 0)
	w := c.centred(wi, wz, 0)
	s := x.Shape()
	if len(s) < 3 || w.Shape().Rank() != len(s) {
		c.failf("input %v and weights %v: want (N, C, spatial...) and (O, C/group, k...)", s, w.Shape())
	}
	win := c.windowAttrs(s[2:], w.Shape()[2:], true)
	at := tensor.ConvAttr{Stride: win.stride, Dilation: win.dilation, PadBegin: win.padBegin, PadEnd: win.padEnd, Groups: c.attrInt("group", 1)}
	if len(s) > 4 {
		c.unsupported("integer convolution over %d spatial axes", len(s)-2)
	}
	return tensor.Conv(x, w, at)
}

func lowerConvInteger(c *ctx) {
	y := intConv(c, 0, 2, 1, 3)
	c.set(0, tensor.Cast(tensor.Round(y), tensor.I32), Int32)
}

func lowerQLinearConv(c *ctx) {
	y := intConv(c, 0, 2, 3, 5)
	if c.has(8) {
		y = tensor.Add(y, channelVector(toF32(c.x(8)), y.Shape().Rank()))
	}
	ws := toF32(c.x(4))
	if ws.Shape().Size() > 1 {
		ws = channelVector(ws, y.Shape().Rank())
	} else {
		ws = tensor.Reshape(ws)
	}
	scale := tensor.Div(tensor.Mul(tensor.Reshape(toF32(c.x(1))), ws), tensor.Reshape(toF32(c.x(6))))
	out := c.dtype(7)
	y = tensor.Add(tensor.Round(tensor.Mul(y, scale)), tensor.Reshape(toF32(c.x(7))))
	c.set(0, saturateInt(c, y, out), out)
}

// lowerDynamicQuantize quantises to uint8 with the scale and zero point that map the
// range of x, widened to hold 0, onto [0, 255].
func lowerDynamicQuantize(c *ctx) {
	c.requireType(0, Float)
	x := c.x(0)
	zero := c.scalar(tensor.F32, 0)
	lo := tensor.Minimum(tensor.Min(x, nil, false), zero)
	hi := tensor.Maximum(tensor.Max(x, nil, false), zero)
	scale := tensor.Div(tensor.Sub(hi, lo), c.scalar(tensor.F32, 255))
	zp := saturateInt(c, tensor.Round(tensor.Div(tensor.Neg(lo), scale)), Uint8)
	y := tensor.Add(tensor.Round(tensor.Div(x, scale)), tensor.Cast(zp, tensor.F32))
	c.set(0, saturateInt(c, y, Uint8), Uint8)
	c.set(1, scale, Float)
	c.set(2, zp, Uint8)
}
