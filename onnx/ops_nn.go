package onnx

import (
	"fmt"
	"math"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// Network layers: convolutions, pooling, normalisations, softmax.

func init() {
	register(7, lowerConv, "Conv")
	register(7, lowerConvTranspose, "ConvTranspose")
	register(7, lowerPool, "MaxPool", "AveragePool", "LpPool")
	register(7, lowerGlobalPool, "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
	register(7, lowerBatchNorm, "BatchNormalization")
	register(17, lowerLayerNorm, "LayerNormalization")
	register(18, lowerGroupNorm, "GroupNormalization")
	register(7, lowerInstanceNorm, "InstanceNormalization")
	register(23, lowerRMSNorm, "RMSNormalization")
	register(7, lowerLRN, "LRN")
	register(7, lowerSoftmax, "Softmax", "LogSoftmax", "Hardmax")
}

// window is the geometry of a convolution or pooling window, resolved per spatial axis.
type window struct {
	kernel, stride, dilation, padBegin, padEnd []int
}

// windowAttrs reads kernel_shape, strides, dilations, pads and (with autoPad) auto_pad
// for an input of spatial shape in; kernel is the weights' spatial shape for
// convolutions (nil for pooling, which requires kernel_shape).
func (c *ctx) windowAttrs(in []int, kernel []int, autoPad bool) window {
	sp := len(in)
	ones := func() []int {
		o := make([]int, sp)
		for i := range o {
			o[i] = 1
		}
		return o
	}
	var w window
	if k, ok := c.attrInts("kernel_shape"); ok {
		w.kernel = k
	} else if kernel != nil {
		w.kernel = kernel
	} else {
		c.failf("kernel_shape is required")
	}
	var ok bool
	if w.stride, ok = c.attrInts("strides"); !ok {
		w.stride = ones()
	}
	if w.dilation, ok = c.attrInts("dilations"); !ok {
		w.dilation = ones()
	}
	pads, ok := c.attrInts("pads")
	if !ok {
		pads = make([]int, 2*sp)
	}
	if len(w.kernel) != sp || len(w.stride) != sp || len(w.dilation) != sp || len(pads) != 2*sp {
		c.failf("kernel %v, strides %v, dilations %v and pads %v do not match %d spatial axes", w.kernel, w.stride, w.dilation, pads, sp)
	}
	for i := range sp {
		if w.kernel[i] < 1 || w.stride[i] < 1 || w.dilation[i] < 1 || pads[i] < 0 || pads[sp+i] < 0 {
			c.failf("kernel %v, strides %v, dilations %v and pads %v must be positive", w.kernel, w.stride, w.dilation, pads)
		}
	}
	w.padBegin, w.padEnd = pads[:sp], pads[sp:]
	if !autoPad {
		return w
	}
	switch ap := c.attrString("auto_pad", "NOTSET"); ap {
	case "NOTSET":
	case "VALID":
		w.padBegin, w.padEnd = make([]int, sp), make([]int, sp)
	case "SAME_UPPER", "SAME_LOWER":
		w.padBegin, w.padEnd = tensor.SamePadding(in, w.kernel, w.stride, w.dilation, ap == "SAME_LOWER")
	default:
		c.failf("auto_pad %q", ap)
	}
	return w
}

// out is the number of windows along axis i of an input of size in with end padding pe.
func (w window) out(i, in, pe int) int {
	eff := (w.kernel[i]-1)*w.dilation[i] + 1
	return (in+w.padBegin[i]+pe-eff)/w.stride[i] + 1
}

func lowerConv(c *ctx) {
	dt := c.sameTypes(0, 1, 2)
	c.requireFloat(0)
	x, wt := c.x(0), c.x(1)
	s := x.Shape()
	if len(s) < 3 || wt.Shape().Rank() != len(s) {
		c.failf("input %v and weights %v: want (N, C, spatial...) and (O, C/group, k...)", s, wt.Shape())
	}
	w := c.windowAttrs(s[2:], wt.Shape()[2:], true)
	if !slices.Equal(w.kernel, []int(wt.Shape()[2:])) {
		c.failf("kernel_shape %v differs from the weights' %v", w.kernel, wt.Shape()[2:])
	}
	at := tensor.ConvAttr{Stride: w.stride, Dilation: w.dilation, PadBegin: w.padBegin, PadEnd: w.padEnd, Groups: c.attrInt("group", 1)}
	var y *tensor.Node
	switch len(s) - 2 {
	case 1, 2:
		y = tensor.Conv(x, wt, at)
	case 3:
		y = conv3D(x, wt, at)
	default:
		c.unsupported("convolution over %d spatial axes", len(s)-2)
	}
	if c.has(2) {
		y = tensor.Add(y, channelVector(c.x(2), y.Shape().Rank()))
	}
	c.set(0, y, dt)
}

// channelVector reshapes a per-channel vector (C) to (1, C, 1, ...) of the given rank.
func channelVector(v *tensor.Node, rank int) *tensor.Node {
	s := make([]int, rank)
	for i := range s {
		s[i] = 1
	}
	s[1] = v.Shape().Size()
	return tensor.Reshape(v, s...)
}

// conv3D is a 3-D convolution as a sum over the depth of the kernel of 2-D
// convolutions over (height, width), each applied to every output depth at once.
func conv3D(x, w *tensor.Node, at tensor.ConvAttr) *tensor.Node {
	s, ws := x.Shape(), w.Shape()
	n, kd := s[0], ws[2]
	if at.PadBegin[0] > 0 || at.PadEnd[0] > 0 {
		before, after := make([]int, 5), make([]int, 5)
		before[2], after[2] = at.PadBegin[0], at.PadEnd[0]
		x = tensor.Pad(x, before, after, tensor.PadConstant, 0)
	}
	d := x.Shape()[2]
	od := (d-((kd-1)*at.Dilation[0]+1))/at.Stride[0] + 1
	if od < 1 {
		panic(&tensor.Error{Op: "conv", Err: fmt.Errorf("input %v is smaller than the kernel %v", s, ws)})
	}
	at2 := tensor.ConvAttr{Stride: at.Stride[1:], Dilation: at.Dilation[1:], PadBegin: at.PadBegin[1:], PadEnd: at.PadEnd[1:], Groups: at.Groups}
	var sum *tensor.Node
	for k := range kd {
		start := k * at.Dilation[0]
		xs := tensor.Slice(x, []int{0, 0, start}, []int{n, s[1], start + (od-1)*at.Stride[0] + 1}, []int{1, 1, at.Stride[0]})
		xs = tensor.Permute(xs, 0, 2, 1, 3, 4)
		xs = tensor.Reshape(xs, n*od, s[1], xs.Shape()[3], xs.Shape()[4])
		wk := tensor.Reshape(tensor.SliceAxis(w, 2, k, k+1), ws[0], ws[1], ws[3], ws[4])
		y := tensor.Conv(xs, wk, at2)
		ys := y.Shape()
		y = tensor.Permute(tensor.Reshape(y, n, od, ys[1], ys[2], ys[3]), 0, 2, 1, 3, 4)
		if sum == nil {
			sum = y
		} else {
			sum = tensor.Add(sum, y)
		}
	}
	return sum
}

func lowerConvTranspose(c *ctx) {
	dt := c.sameTypes(0, 1, 2)
	c.requireFloat(0)
	x, wt := c.x(0), c.x(1)
	s := x.Shape()
	sp := len(s) - 2
	if sp < 1 || wt.Shape().Rank() != len(s) {
		c.failf("input %v and weights %v: want (N, C, spatial...) and (C, O/group, k...)", s, wt.Shape())
	}
	ap := c.attrString("auto_pad", "NOTSET")
	w := c.windowAttrs(s[2:], wt.Shape()[2:], false)
	outPad, ok := c.attrInts("output_padding")
	if !ok {
		outPad = make([]int, sp)
	}
	outShape, haveOut := c.attrInts("output_shape")
	if haveOut && len(outShape) == len(s) {
		outShape = outShape[2:]
	}
	if ap == "SAME_UPPER" || ap == "SAME_LOWER" || haveOut {
		if !haveOut {
			outShape = make([]int, sp)
			for i := range sp {
				outShape[i] = s[2+i] * w.stride[i]
			}
		}
		if len(outShape) != sp {
			c.failf("output_shape %v for %d spatial axes", outShape, sp)
		}
		for i := range sp {
			total := w.stride[i]*(s[2+i]-1) + outPad[i] + (w.kernel[i]-1)*w.dilation[i] + 1 - outShape[i]
			if total < 0 {
				outPad[i] -= total
				total = 0
			}
			if ap == "SAME_UPPER" {
				w.padBegin[i], w.padEnd[i] = total/2, total-total/2
			} else {
				w.padBegin[i], w.padEnd[i] = total-total/2, total/2
			}
		}
	} else if ap == "VALID" {
		w.padBegin, w.padEnd = make([]int, sp), make([]int, sp)
	}
	at := tensor.ConvAttr{Stride: w.stride, Dilation: w.dilation, PadBegin: w.padBegin, PadEnd: w.padEnd,
		OutputPadding: outPad, Groups: c.attrInt("group", 1)}
	var y *tensor.Node
	switch sp {
	case 1, 2:
		y = tensor.ConvTranspose(x, wt, at)
	case 3:
		y = convTranspose3D(x, wt, at)
	default:
		c.unsupported("transposed convolution over %d spatial axes", sp)
	}
	if c.has(2) {
		y = tensor.Add(y, channelVector(c.x(2), y.Shape().Rank()))
	}
	c.set(0, y, dt)
}

// convTranspose3D is a 3-D transposed convolution as, per depth offset k of the kernel,
// a 2-D transposed convolution of every input depth at once, spread along the depth
// by the stride (zeros between) and shifted by k times the dilation; the sum is then
// cropped by the depth padding.
func convTranspose3D(x, w *tensor.Node, at tensor.ConvAttr) *tensor.Node {
	s, ws := x.Shape(), w.Shape()
	n, d, kd := s[0], s[2], ws[2]
	st, dil := at.Stride[0], at.Dilation[0]
	at2 := tensor.ConvAttr{Stride: at.Stride[1:], Dilation: at.Dilation[1:], PadBegin: at.PadBegin[1:], PadEnd: at.PadEnd[1:],
		OutputPadding: at.OutputPadding[1:], Groups: at.Groups}
	spread := (d-1)*st + 1
	full := spread + (kd-1)*dil + at.OutputPadding[0]
	xs := tensor.Reshape(tensor.Permute(x, 0, 2, 1, 3, 4), n*d, s[1], s[3], s[4])
	var sum *tensor.Node
	for k := range kd {
		wk := tensor.Reshape(tensor.SliceAxis(w, 2, k, k+1), ws[0], ws[1], ws[3], ws[4])
		y := tensor.ConvTranspose(xs, wk, at2)
		ys := y.Shape()
		y = tensor.Permute(tensor.Reshape(y, n, d, ys[1], ys[2], ys[3]), 0, 2, 1, 3, 4) // (N, O, D, H', W')
		if st > 1 {
			// Zeros between depth slices: (N, O, D, 1, ...) padded to (N, O, D, st, ...).
			y = tensor.Unsqueeze(y, 3)
			before, after := make([]int, 6), make([]int, 6)
			after[3] = st - 1
			y = tensor.Pad(y, before, after, tensor.PadConstant, 0)
			y = tensor.SliceAxis(tensor.Reshape(y, n, ys[1], d*st, ys[2], ys[3]), 2, 0, spread)
		}
		before, after := make([]int, 5), make([]int, 5)
		before[2], after[2] = k*dil, full-spread-k*dil
		y = tensor.Pad(y, before, after, tensor.PadConstant, 0)
		if sum == nil {
			sum = y
		} else {
			sum = tensor.Add(sum, y)
		}
	}
	return tensor.SliceAxis(sum, 2, at.PadBegin[0], full-at.PadEnd[0])
}

// lowerPool lowers MaxPool, AveragePool and LpPool: on the engine's pooling ops where
// they fit (1-D or 2-D, no dilation), else as a combination of strided slices, one per
// window offset.
func lowerPool(c *ctx) {
	dt := c.dtype(0)
	c.requireNumeric(0)
	x := c.x(0)
	s := x.Shape()
	if len(s) < 3 {
		c.failf("input %v: want (N, C, spatial...)", s)
	}
	if c.wants(1) {
		c.unsupported("the indices output of MaxPool")
	}
	in := []int(s[2:])
	w := c.windowAttrs(in, nil, true)
	sp := len(in)
	ceil := c.attrInt("ceil_mode", 0) != 0
	includePad := c.attrInt("count_include_pad", 0) != 0
	p := float64(c.attrInt("p", 2))
	c.ignore("storage_order")
	padEnd := w.padEnd
	if ceil {
		padEnd = tensor.CeilModePadding(in, w.kernel, w.stride, w.dilation, w.padBegin, w.padEnd)
	}
	extra := !slices.Equal(padEnd, w.padEnd)
	plain := sp <= 2 && dt.IsFloat() && !slices.ContainsFunc(w.dilation, func(d int) bool { return d != 1 })
	for i := range sp {
		plain = plain && w.padBegin[i] < w.kernel[i] && padEnd[i] < w.kernel[i] && w.out(i, in[i], padEnd[i]) > 0
	}
	at := tensor.PoolAttr{Kernel: w.kernel, Stride: w.stride, PadBegin: w.padBegin, PadEnd: padEnd, CountIncludePad: includePad}
	switch {
	case c.n.op == "MaxPool" && plain:
		c.set(0, tensor.MaxPool(x, at), dt)
	case c.n.op == "AveragePool" && plain && !(includePad && extra):
		c.set(0, tensor.AvgPool(x, at), dt)
	case c.n.op == "MaxPool":
		lo := math.Inf(-1)
		if !dt.IsFloat() {
			lo = math.MinInt32
		}
		c.set(0, windowReduce(x, w, padEnd, lo, tensor.Maximum), dt)
	case c.n.op == "AveragePool":
		c.requireFloat(0)
		sum := windowReduce(x, w, padEnd, 0, tensor.Add)
		// The divisor counts the positions of each window inside the input, or inside
		// the input and its explicit pads: the same sum over a tensor of ones.
		ones := tensor.New(x.DType(), append([]int{1, 1}, in...)...)
		for i := range ones.Len() {
			ones.SetFloat(i, 1)
		}
		var cnt *tensor.Node
		if includePad {
			one := c.constant(ones)
			before, after := make([]int, sp+2), make([]int, sp+2)
			copy(before[2:], w.padBegin)
			copy(after[2:], w.padEnd)
			padded := tensor.Pad(one, before, after, tensor.PadConstant, 1)
			wz := window{kernel: w.kernel, stride: w.stride, dilation: w.dilation, padBegin: make([]int, sp), padEnd: make([]int, sp)}
			extraEnd := make([]int, sp)
			for i := range sp {
				extraEnd[i] = padEnd[i] - w.padEnd[i]
			}
			cnt = windowReduce(padded, wz, extraEnd, 0, tensor.Add)
		} else {
			cnt = windowReduce(c.constant(ones), w, padEnd, 0, tensor.Add)
		}
		c.set(0, tensor.Div(sum, cnt), dt)
	default: // LpPool
		c.requireFloat(0)
		xp := tensor.Pow(tensor.Abs(x), c.scalar(x.DType(), p))
		sum := windowReduce(xp, w, padEnd, 0, tensor.Add)
		c.set(0, tensor.Pow(sum, c.scalar(x.DType(), 1/p)), dt)
	}
}

// windowReduce pads x's spatial axes (with fill) and combines, with f, one strided
// slice per window offset: the pooling of every window at once.
func windowReduce(x *tensor.Node, w window, padEnd []int, fill float64, f func(a, b *tensor.Node) *tensor.Node) *tensor.Node {
	s := x.Shape()
	sp := len(s) - 2
	before, after := make([]int, sp+2), make([]int, sp+2)
	copy(before[2:], w.padBegin)
	copy(after[2:], padEnd)
	if slices.Max(before) > 0 || slices.Max(after) > 0 {
		x = tensor.Pad(x, before, after, tensor.PadConstant, float32(fill))
	}
	out := make([]int, sp)
	for i := range sp {
		out[i] = w.out(i, s[2+i], padEnd[i])
		if out[i] < 1 {
			panic(&tensor.Error{Op: "pool", Err: fmt.Errorf("input %v is smaller than the window %v", s, w.kernel)})
		}
	}
	var acc *tensor.Node
	off := make([]int, sp)
	for {
		st, en, step := []int{0, 0}, []int{s[0], s[1]}, []int{1, 1}
		for i := range sp {
			b := off[i] * w.dilation[i]
			st, en, step = append(st, b), append(en, b+(out[i]-1)*w.stride[i]+1), append(step, w.stride[i])
		}
		sl := tensor.Slice(x, st, en, step)
		if acc == nil {
			acc = sl
		} else {
			acc = f(acc, sl)
		}
		i := sp - 1
		for ; i >= 0; i-- {
			if off[i]++; off[i] < w.kernel[i] {
				break
			}
			off[i] = 0
		}
		if i < 0 {
			return acc
		}
	}
}

func lowerGlobalPool(c *ctx) {
	dt := c.dtype(0)
	c.requireFloat(0)
	x := c.x(0)
	r := x.Shape().Rank()
	if r < 3 {
		c.failf("input %v: want (N, C, spatial...)", x.Shape())
	}
	axes := make([]int, 0, r-2)
	for i := 2; i < r; i++ {
		axes = append(axes, i)
	}
	switch c.n.op {
	case "GlobalAveragePool":
		c.set(0, tensor.Mean(x, axes, true), dt)
	case "GlobalMaxPool":
		c.set(0, tensor.Max(x, axes, true), dt)
	default:
		p := float64(c.attrInt("p", 2))
		xp := tensor.Pow(tensor.Abs(x), c.scalar(x.DType(), p))
		c.set(0, tensor.Pow(tensor.Sum(xp, axes, true), c.scalar(x.DType(), 1/p)), dt)
	}
}

func lowerBatchNorm(c *ctx) {
	dt := c.dtype(0)
	c.requireFloat(0)
	eps := c.attrFloat("epsilon", 1e-5)
	momentum := c.attrFloat("momentum", 0.9)
	c.ignore("is_test", "consumed_inputs")
	if c.opset() < 9 && c.attrInt("spatial", 1) == 0 {
		c.unsupported("spatial=0")
	}
	training := c.attrInt("training_mode", 0) != 0
	if !training && len(c.n.outputs) > 1 && (c.wants(1) || c.wants(2) || c.wants(3) || c.wants(4)) {
		c.unsupported("the statistics outputs of opsets before 14")
	}
	x := c.x(0)
	p := func(i int) *tensor.Node {
		v := c.x(i)
		if v.DType() != x.DType() {
			v = tensor.Cast(v, x.DType())
		}
		return v
	}
	if !training {
		c.set(0, tensor.BatchNormInfer(x, p(1), p(2), p(3), p(4), eps), dt)
		return
	}
	// Training mode normalises with the batch's statistics (over every axis but the
	// channels) and returns the running statistics updated with them.
	axes := []int{0}
	for i := 2; i < x.Shape().Rank(); i++ {
		axes = append(axes, i)
	}
	mean := tensor.Mean(x, axes, false)
	cm := channelVector(mean, x.Shape().Rank())
	d := tensor.Sub(x, cm)
	variance := tensor.Mean(tensor.Mul(d, d), axes, false)
	y := tensor.BatchNormInfer(x, p(1), p(2), mean, variance, eps)
	c.set(0, y, dt)
	mix := func(running, batch *tensor.Node) *tensor.Node {
		return tensor.Add(tensor.Scale(running, momentum), tensor.Scale(batch, 1-momentum))
	}
	if c.wants(1) {
		c.set(1, mix(p(3), mean), dt)
	}
	if c.wants(2) {
		c.set(2, mix(p(4), variance), dt)
	}
}

// normStats returns the mean and 1/sqrt(var+eps) of x over axes, kept as size-1 axes.
func normStats(c *ctx, x *tensor.Node, axes []int, eps float32) (mean, inv *tensor.Node) {
	mean = tensor.Mean(x, axes, true)
	d := tensor.Sub(x, mean)
	v := tensor.Mean(tensor.Mul(d, d), axes, true)
	inv = tensor.Rsqrt(tensor.Add(v, c.scalar(x.DType(), float64(eps))))
	return mean, inv
}

func lowerLayerNorm(c *ctx) {
	dt := c.dtype(0)
	c.requireFloat(0)
	x := c.x(0)
	s := x.Shape()
	axis := c.axis(c.attrInt("axis", -1), len(s))
	eps := c.attrFloat("epsilon", 1e-5)
	c.ignore("stash_type")
	axes := make([]int, 0, len(s)-axis)
	for i := axis; i < len(s); i++ {
		axes = append(axes, i)
	}
	inner := s[axis:]
	gamma := c.x(1)
	var beta *tensor.Node
	if c.has(2) {
		beta = c.x(2)
	}
	fits := func(p *tensor.Node) bool { return p == nil || p.Shape().Equal(inner) }
	if fits(gamma) && fits(beta) && !c.wants(1) && !c.wants(2) {
		c.set(0, tensor.LayerNorm(x, gamma, beta, axes, eps), dt)
		return
	}
	// Parameters that only broadcast, or the statistics outputs: the composition.
	mean, inv := normStats(c, x, axes, eps)
	y := tensor.Mul(tensor.Mul(tensor.Sub(x, mean), inv), gamma)
	if beta != nil {
		y = tensor.Add(y, beta)
	}
	c.set(0, y, dt)
	if c.wants(1) {
		c.set(1, mean, dt)
	}
	if c.wants(2) {
		c.set(2, inv, dt)
	}
}

func lowerGroupNorm(c *ctx) {
	dt := c.dtype(0)
	c.requireFloat(0)
	x := c.x(0)
	s := x.Shape()
	groups := c.attrInt("num_groups", 0)
	eps := c.attrFloat("epsilon", 1e-5)
	c.ignore("stash_type")
	if len(s) < 3 || groups < 1 || s[1]%groups != 0 {
		c.failf("%d groups for input %v", groups, s)
	}
	gamma, beta := c.x(1), c.x(2)
	if gamma.Shape().Size() == groups && groups != s[1] {
		// Opset 18 gives one scale and bias per group: repeat them per channel.
		per := s[1] / groups
		gamma = tensor.Reshape(tensor.Expand(tensor.Reshape(gamma, groups, 1), groups, per), s[1])
		beta = tensor.Reshape(tensor.Expand(tensor.Reshape(beta, groups, 1), groups, per), s[1])
	}
	c.set(0, tensor.GroupNorm(x, groups, gamma, beta, eps), dt)
}

func lowerInstanceNorm(c *ctx) {
	dt := c.dtype(0)
	c.requireFloat(0)
	eps := c.attrFloat("epsilon", 1e-5)
	c.set(0, tensor.InstanceNorm(c.x(0), c.x(1), c.x(2), eps), dt)
}

func lowerRMSNorm(c *ctx) {
	dt := c.dtype(0)
	c.requireFloat(0)
	x := c.x(0)
	s := x.Shape()
	axis := c.axis(c.attrInt("axis", -1), len(s))
	eps := c.attrFloat("epsilon", 1e-5)
	c.ignore("stash_type")
	axes := make([]int, 0, len(s)-axis)
	for i := axis; i < len(s); i++ {
		axes = append(axes, i)
	}
	gamma := c.x(1)
	if gamma.Shape().Equal(s[axis:]) {
		c.set(0, tensor.RMSNorm(x, gamma, axes, eps), dt)
		return
	}
	ms := tensor.Mean(tensor.Mul(x, x), axes, true)
	y := tensor.Mul(tensor.Mul(x, tensor.Rsqrt(tensor.Add(ms, c.scalar(x.DType(), float64(eps))))), gamma)
	c.set(0, y, dt)
}

// lowerLRN divides by (bias + alpha/size * Σ x²)^beta over a window of channels, the sum
// being an average pooling along the channel axis.
func lowerLRN(c *ctx) {
	dt := c.dtype(0)
	c.requireFloat(0)
	x := c.x(0)
	s := x.Shape()
	size := c.attrInt("size", 0)
	alpha, beta, bias := c.attrFloat("alpha", 1e-4), c.attrFloat("beta", 0.75), c.attrFloat("bias", 1)
	if len(s) < 3 || size < 1 {
		c.failf("input %v, size %d", s, size)
	}
	sq := tensor.Reshape(tensor.Mul(x, x), s[0], 1, s[1], s[2:].Size())
	avg := tensor.AvgPool(sq, tensor.PoolAttr{Kernel: []int{size, 1}, Stride: []int{1, 1},
		PadBegin: []int{(size - 1) / 2, 0}, PadEnd: []int{size / 2, 0}, CountIncludePad: true})
	d := tensor.Add(tensor.Scale(tensor.Reshape(avg, s...), alpha), c.scalar(x.DType(), float64(bias)))
	c.set(0, tensor.Div(x, tensor.Pow(d, c.scalar(x.DType(), float64(beta)))), dt)
}

// lowerSoftmax: before opset 13 the input is seen as a matrix split at axis (default
// 1); from 13 the op works along the one axis (default -1).
func lowerSoftmax(c *ctx) {
	dt := c.dtype(0)
	c.requireFloat(0)
	x := c.x(0)
	s := x.Shape()
	def := -1
	if c.opset() < 13 {
		def = 1
	}
	axis := c.axis(c.attrInt("axis", def), max(len(s), 1))
	apply := func(x *tensor.Node, axis int) *tensor.Node {
		switch c.n.op {
		case "Softmax":
			return tensor.Softmax(x, axis)
		case "LogSoftmax":
			return tensor.LogSoftmax(x, axis)
		}
		return hardmax(c, x, axis)
	}
	if len(s) == 0 {
		c.set(0, tensor.Reshape(apply(tensor.Reshape(x, 1), 0)), dt)
		return
	}
	if c.opset() < 13 && axis != len(s)-1 {
		y := apply(tensor.Reshape(x, s[:axis].Size(), s[axis:].Size()), 1)
		c.set(0, tensor.Reshape(y, s...), dt)
		return
	}
	c.set(0, apply(x, axis), dt)
}

// hardmax is 1 at the first maximum along axis and 0 elsewhere.
func hardmax(c *ctx, x *tensor.Node, axis int) *tensor.Node {
	s := x.Shape()
	am := tensor.ArgMax(x, axis, true)
	iota := tensor.New(tensor.I64, s[axis])
	for i := range s[axis] {
		iota.Int64s()[i] = int64(i)
	}
	shape := make([]int, len(s))
	for i := range shape {
		shape[i] = 1
	}
	shape[axis] = s[axis]
	pos := tensor.Reshape(c.constant(iota), shape...)
	return tensor.Cast(tensor.Equal(pos, am), x.DType())
}
