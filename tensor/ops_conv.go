package tensor

import "fmt"

// Convolution and pooling. Data is channels-first: (N, C, W) for 1-D and (N, C, H, W) for
// 2-D. Weights are (O, C/groups, kW) or (O, C/groups, kH, kW), as in PyTorch and ONNX. A
// transposed convolution takes the weights of the forward convolution it is the adjoint
// of: (C_in, C_out/groups, k...), where C_in is the transposed convolution's input
// channel count. Padding in the attributes is always explicit (begin and end per spatial
// axis); "same" is resolved by the builders with SamePadding.

func init() {
	registerShape(OpConv, convRule)
	registerShape(OpConvTranspose, convTransposeRule)
	registerShape(OpConvFilterGrad, convFilterGradRule)
	registerShape(OpIm2Col, im2colRule)
	registerShape(OpMaxPool, poolRule)
	registerShape(OpAvgPool, poolRule)
	registerShape(OpMaxPoolGrad, maxPoolGradRule)
	registerShape(OpAvgPoolGrad, avgPoolGradRule)
}

// PaddingMode says how a convolution builder pads its input.
type PaddingMode uint8

// The padding modes.
const (
	// PaddingExplicit pads with ConvPadding.Begin and End (nil means no padding, which
	// is Keras's "valid").
	PaddingExplicit PaddingMode = iota
	// PaddingSame pads so that the output size is ceil(input/stride), with the odd
	// padding element at the end: Keras and TensorFlow "same", ONNX SAME_UPPER.
	PaddingSame
	// PaddingSameLower is PaddingSame with the odd element at the beginning (ONNX
	// SAME_LOWER).
	PaddingSameLower
)

// ConvPadding is the padding argument of the convolution builders. The zero value is no
// padding ("valid").
type ConvPadding struct {
	Mode       PaddingMode
	Begin, End []int // PaddingExplicit only: per spatial axis, or one value for all axes
}

// PadSymmetric returns explicit padding of p on both sides of each spatial axis (one value
// applies to every axis).
func PadSymmetric(p ...int) ConvPadding {
	return ConvPadding{Begin: p, End: p}
}

// ParsePadding converts Keras's padding names "valid" and "same" (and ONNX's auto_pad
// values "VALID", "SAME_UPPER", "SAME_LOWER", "NOTSET") to a ConvPadding.
func ParsePadding(name string) (ConvPadding, error) {
	switch name {
	case "valid", "VALID", "NOTSET", "":
		return ConvPadding{}, nil
	case "same", "SAME", "SAME_UPPER":
		return ConvPadding{Mode: PaddingSame}, nil
	case "SAME_LOWER":
		return ConvPadding{Mode: PaddingSameLower}, nil
	}
	return ConvPadding{}, fmt.Errorf("tensor: unknown padding %q (want valid or same)", name)
}

// SamePadding returns the begin and end padding that makes a window of size kernel[i]
// dilated by dilation[i] and moved by stride[i] produce ceil(in[i]/stride[i]) outputs, as
// TensorFlow computes it: the total is max((out-1)*stride + (kernel-1)*dilation + 1 - in, 0),
// split evenly, with the odd element at the end (at the beginning when lower is set).
func SamePadding(in, kernel, stride, dilation []int, lower bool) (begin, end []int) {
	begin, end = make([]int, len(in)), make([]int, len(in))
	for i := range in {
		out := (in[i] + stride[i] - 1) / stride[i]
		total := max((out-1)*stride[i]+(kernel[i]-1)*dilation[i]+1-in[i], 0)
		small := total / 2
		if lower {
			begin[i], end[i] = total-small, small
		} else {
			begin[i], end[i] = small, total-small
		}
	}
	return begin, end
}

// CeilModePadding returns the end padding under which the usual (floor) output size of a
// pooling or convolution window equals the ceil_mode size of ONNX and PyTorch,
// ceil((in + padBegin + padEnd - dilation*(kernel-1) - 1)/stride) + 1, less the last
// window when it would start past the input and the begin padding (PyTorch's rule).
// The extra end padding is never counted by average pooling (CountIncludePad counts
// only the pads it is given, so leave it unset for ceil-mode pooling that excludes
// padding). dilation may be nil (all 1).
func CeilModePadding(in, kernel, stride, dilation, padBegin, padEnd []int) []int {
	out := make([]int, len(in))
	for i := range in {
		eff := kernel[i]
		if dilation != nil {
			eff = dilation[i]*(kernel[i]-1) + 1
		}
		padded := in[i] + padBegin[i] + padEnd[i]
		n := (padded-eff+stride[i]-1)/stride[i] + 1
		if (n-1)*stride[i] >= in[i]+padBegin[i] {
			n--
		}
		out[i] = padEnd[i] + max(0, (n-1)*stride[i]+eff-padded)
	}
	return out
}

// ConvOptions configures Conv1D, Conv2D and ConvTranspose2D. The zero value is stride 1,
// dilation 1, no padding and one group. Stride, Dilation and OutputPadding hold one value
// per spatial axis or one value for all of them.
type ConvOptions struct {
	Stride        []int
	Dilation      []int
	Padding       ConvPadding
	Groups        int
	OutputPadding []int // ConvTranspose2D only
}

// Conv returns the convolution of x (N, C, spatial...) with weights w (O, C/groups, k...)
// as described by attr, whose padding is explicit. Nil slices in attr mean stride 1,
// dilation 1 and no padding; Groups 0 means 1. The output is (N, O, out...) with
// out = floor((in + padBegin + padEnd - dilation*(k-1) - 1)/stride) + 1. There is no
// bias: add one with Add and a (O, 1, ...) shaped tensor.
func Conv(x, w *Node, attr ConvAttr) *Node { return Apply(OpConv, attr, x, w) }

// Conv1D convolves x (N, C, W) with w (O, C/groups, kW).
func Conv1D(x, w *Node, stride int, padding ConvPadding, dilation, groups int) *Node {
	return convWith(OpConv, x, w, ConvOptions{Stride: []int{stride}, Dilation: []int{dilation},
		Padding: padding, Groups: groups})
}

// Conv2D convolves x (N, C, H, W) with w (O, C/groups, kH, kW). opts is optional (at most
// one); without it the convolution has stride 1 and no padding. Depthwise convolution is
// Groups == C with w of shape (C*multiplier, 1, kH, kW).
func Conv2D(x, w *Node, opts ...ConvOptions) *Node {
	return convWith(OpConv, x, w, oneOptions(OpConv, opts))
}

// ConvTranspose returns the transposed convolution (the adjoint of Conv with respect to
// its input) of x (N, C_in, spatial...) with w (C_in, C_out/groups, k...). The output is
// (N, C_out, out...) with out = (in-1)*stride - padBegin - padEnd + dilation*(k-1) + 1 +
// outputPadding; OutputPadding (each value below the stride) picks among
// the input sizes a strided forward convolution maps to the same output size.
func ConvTranspose(x, w *Node, attr ConvAttr) *Node { return Apply(OpConvTranspose, attr, x, w) }

// ConvTranspose2D is the transposed convolution of x (N, C_in, H, W) with w
// (C_in, C_out/groups, kH, kW). With PaddingSame the output is in*stride, as in Keras's
// Conv2DTranspose.
func ConvTranspose2D(x, w *Node, opts ...ConvOptions) *Node {
	return convWith(OpConvTranspose, x, w, oneOptions(OpConvTranspose, opts))
}

// ConvFilterGrad returns the gradient of a convolution with respect to its weights:
// given the forward input x and the gradient gy of the forward output, the result has
// attr.FilterShape (O, C/groups, k...). attr is the forward convolution's attribute.
func ConvFilterGrad(x, gy *Node, attr ConvAttr) *Node {
	return Apply(OpConvFilterGrad, attr, x, gy)
}

// Im2Col unfolds the windows of a convolution: x (N, C, spatial...) becomes
// (N, C*k..., out...), where row c*K + j of an output position holds input channel c at
// kernel offset j (kernel offsets row-major), zero where the window covers padding.
// attr.FilterShape holds the kernel's spatial size (k...); Groups must be 1.
func Im2Col(x *Node, attr ConvAttr) *Node { return Apply(OpIm2Col, attr, x) }

func oneOptions(op Op, opts []ConvOptions) ConvOptions {
	switch len(opts) {
	case 0:
		return ConvOptions{}
	case 1:
		return opts[0]
	}
	fail(op, "takes at most one ConvOptions, got %d", len(opts))
	return ConvOptions{}
}

// convWith resolves opts against the shapes of x and w and builds op.
func convWith(op Op, x, w *Node, o ConvOptions) *Node {
	spatial := x.shape.Rank() - 2
	if spatial < 1 || w.shape.Rank() != spatial+2 {
		fail(op, "needs input (N, C, spatial...) and weights (O, C/groups, k...) of the same rank 3 or 4, have %s",
			shapesOf([]*Node{x, w}))
	}
	stride, err := perAxis("stride", o.Stride, spatial, 1, 1)
	if err != nil {
		fail(op, "%v", err)
	}
	dilation, err := perAxis("dilation", o.Dilation, spatial, 1, 1)
	if err != nil {
		fail(op, "%v", err)
	}
	attr := ConvAttr{Stride: stride, Dilation: dilation, Groups: o.Groups}
	if op == OpConvTranspose {
		if attr.OutputPadding, err = perAxis("output padding", o.OutputPadding, spatial, 0, 0); err != nil {
			fail(op, "%v", err)
		}
	}
	kernel := []int(w.shape[2:])
	switch o.Padding.Mode {
	case PaddingExplicit:
		if attr.PadBegin, err = perAxis("padding", o.Padding.Begin, spatial, 0, 0); err != nil {
			fail(op, "%v", err)
		}
		if attr.PadEnd, err = perAxis("padding", o.Padding.End, spatial, 0, 0); err != nil {
			fail(op, "%v", err)
		}
	case PaddingSame, PaddingSameLower:
		lower := o.Padding.Mode == PaddingSameLower
		if op == OpConvTranspose {
			attr.PadBegin, attr.PadEnd, attr.OutputPadding = sameTransposePadding(kernel, stride, dilation, lower)
		} else {
			attr.PadBegin, attr.PadEnd = SamePadding(x.shape[2:], kernel, stride, dilation, lower)
		}
	default:
		fail(op, "unknown padding mode %d", o.Padding.Mode)
	}
	return Apply(op, attr, x, w)
}

// sameTransposePadding picks pads and output padding so that a transposed convolution
// maps in to in*stride: the full output is (in-1)*stride + dilation*(k-1) + 1, so the
// pads remove dilation*(k-1)+1-stride elements, or output padding adds the shortfall.
func sameTransposePadding(kernel, stride, dilation []int, lower bool) (begin, end, outPad []int) {
	n := len(kernel)
	begin, end, outPad = make([]int, n), make([]int, n), make([]int, n)
	for i := range kernel {
		total := dilation[i]*(kernel[i]-1) + 1 - stride[i]
		if total < 0 {
			outPad[i] = -total
			continue
		}
		small := total / 2
		if lower {
			begin[i], end[i] = total-small, small
		} else {
			begin[i], end[i] = small, total-small
		}
	}
	return begin, end, outPad
}

// perAxis expands a per-spatial-axis parameter: nil gives def on every axis, one value
// applies to every axis, otherwise there must be one value per axis, each at least lo.
func perAxis(what string, v []int, spatial, def, lo int) ([]int, error) {
	out := make([]int, spatial)
	switch len(v) {
	case 0:
		for i := range out {
			out[i] = def
		}
	case 1:
		for i := range out {
			out[i] = v[0]
		}
	case spatial:
		copy(out, v)
	default:
		return nil, fmt.Errorf("%s %v: want one value per spatial axis (%d) or one for all", what, v, spatial)
	}
	for _, d := range out {
		if d < lo {
			return nil, fmt.Errorf("%s %v: values must be at least %d", what, v, lo)
		}
	}
	return out, nil
}

// normConvAttr fills the defaults of a ConvAttr for spatial axes and checks it.
func normConvAttr(at ConvAttr, spatial int, transpose bool) (ConvAttr, error) {
	var out ConvAttr
	var err error
	if out.Stride, err = perAxis("stride", at.Stride, spatial, 1, 1); err != nil {
		return out, err
	}
	if out.Dilation, err = perAxis("dilation", at.Dilation, spatial, 1, 1); err != nil {
		return out, err
	}
	if out.PadBegin, err = perAxis("pad begin", at.PadBegin, spatial, 0, 0); err != nil {
		return out, err
	}
	if out.PadEnd, err = perAxis("pad end", at.PadEnd, spatial, 0, 0); err != nil {
		return out, err
	}
	out.Groups = at.Groups
	if out.Groups == 0 {
		out.Groups = 1
	}
	if out.Groups < 0 {
		return out, fmt.Errorf("groups %d must be positive", at.Groups)
	}
	if !transpose {
		for _, p := range at.OutputPadding {
			if p != 0 {
				return out, fmt.Errorf("output padding %v is for transposed convolutions only", at.OutputPadding)
			}
		}
		return out, nil
	}
	if out.OutputPadding, err = perAxis("output padding", at.OutputPadding, spatial, 0, 0); err != nil {
		return out, err
	}
	for i, p := range out.OutputPadding {
		if p >= out.Stride[i] {
			return out, fmt.Errorf("output padding %v must be smaller than the stride %v", out.OutputPadding, out.Stride)
		}
	}
	return out, nil
}

// convOutput checks a forward convolution of an input of shape x by weights of shape w
// and returns the output shape and the normalised attribute.
func convOutput(x, w Shape, at ConvAttr) (Shape, ConvAttr, error) {
	spatial := x.Rank() - 2
	if spatial < 1 || spatial > 2 || w.Rank() != x.Rank() {
		return nil, at, fmt.Errorf("needs input (N, C, W) or (N, C, H, W) and weights of the same rank, have input %v and weights %v", x, w)
	}
	at, err := normConvAttr(at, spatial, false)
	if err != nil {
		return nil, at, err
	}
	c, o, g := x[1], w[0], at.Groups
	if c%g != 0 || o%g != 0 {
		return nil, at, fmt.Errorf("groups %d must divide the input channels %d and the output channels %d (input %v, weights %v)", g, c, o, x, w)
	}
	if w[1] != c/g {
		return nil, at, fmt.Errorf("weights %v need %d input channels per group (input %v has %d channels in %d groups), have %d", w, c/g, x, c, g, w[1])
	}
	out := Shape{x[0], o}
	for i := 0; i < spatial; i++ {
		n, err := windows(x[2+i], w[2+i], at.Stride[i], at.Dilation[i], at.PadBegin[i], at.PadEnd[i])
		if err != nil {
			return nil, at, fmt.Errorf("input %v, weights %v: spatial axis %d: %v", x, w, i, err)
		}
		out = append(out, n)
	}
	return out, at, nil
}

// windows is the number of positions of a dilated window of size k moved by stride over
// an input of size in padded by pb and pe.
func windows(in, k, stride, dilation, pb, pe int) (int, error) {
	if k < 1 {
		return 0, fmt.Errorf("kernel size %d must be positive", k)
	}
	eff := dilation*(k-1) + 1
	padded := in + pb + pe
	if padded < eff {
		return 0, fmt.Errorf("kernel %d (dilated to %d) is larger than the padded input %d (%d + pads %d, %d)", k, eff, padded, in, pb, pe)
	}
	return (padded-eff)/stride + 1, nil
}

func convAttrOf(attr any) (ConvAttr, error) {
	at, ok := attr.(ConvAttr)
	if !ok {
		return at, fmt.Errorf("attribute must be ConvAttr, got %T", attr)
	}
	return at, nil
}

func floatPair(in []*Node) error {
	if in[0].dtype != in[1].dtype || !in[0].dtype.IsFloat() {
		return fmt.Errorf("needs two inputs of the same float dtype, have %s", shapesOf(in))
	}
	return nil
}

func convRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, err := convAttrOf(attr)
	if err != nil {
		return 0, nil, nil, err
	}
	if err := floatPair(in); err != nil {
		return 0, nil, nil, err
	}
	out, at, err := convOutput(in[0].shape, in[1].shape, at)
	if err != nil {
		return 0, nil, nil, err
	}
	return in[0].dtype, out, at, nil
}

func convTransposeRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, err := convAttrOf(attr)
	if err != nil {
		return 0, nil, nil, err
	}
	if err := floatPair(in); err != nil {
		return 0, nil, nil, err
	}
	x, w := in[0].shape, in[1].shape
	spatial := x.Rank() - 2
	if spatial < 1 || spatial > 2 || w.Rank() != x.Rank() {
		return 0, nil, nil, fmt.Errorf("needs input (N, C, W) or (N, C, H, W) and weights of the same rank, have input %v and weights %v", x, w)
	}
	if at, err = normConvAttr(at, spatial, true); err != nil {
		return 0, nil, nil, err
	}
	g := at.Groups
	if x[1] != w[0] {
		return 0, nil, nil, fmt.Errorf("input %v has %d channels but weights %v expect %d (weights are (C_in, C_out/groups, k...))", x, x[1], w, w[0])
	}
	if w[0]%g != 0 {
		return 0, nil, nil, fmt.Errorf("groups %d must divide the input channels %d", g, w[0])
	}
	out := Shape{x[0], w[1] * g}
	for i := 0; i < spatial; i++ {
		k := w[2+i]
		if k < 1 {
			return 0, nil, nil, fmt.Errorf("weights %v: kernel size must be positive", w)
		}
		n := (x[2+i]-1)*at.Stride[i] - at.PadBegin[i] - at.PadEnd[i] + at.Dilation[i]*(k-1) + 1 + at.OutputPadding[i]
		if n < 1 || x[2+i] < 1 {
			return 0, nil, nil, fmt.Errorf("input %v, weights %v: spatial axis %d: pads %d, %d leave output size %d", x, w, i, at.PadBegin[i], at.PadEnd[i], n)
		}
		out = append(out, n)
	}
	return in[0].dtype, out, at, nil
}

func convFilterGradRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, err := convAttrOf(attr)
	if err != nil {
		return 0, nil, nil, err
	}
	if err := floatPair(in); err != nil {
		return 0, nil, nil, err
	}
	fs := at.FilterShape.Clone()
	if fs.Rank() == 0 {
		return 0, nil, nil, fmt.Errorf("attribute needs FilterShape, the weight shape to produce")
	}
	out, norm, err := convOutput(in[0].shape, fs, at)
	if err != nil {
		return 0, nil, nil, err
	}
	if !out.Equal(in[1].shape) {
		return 0, nil, nil, fmt.Errorf("output gradient %v does not match the convolution of %v by filters %v, which gives %v", in[1].shape, in[0].shape, fs, out)
	}
	norm.FilterShape = fs
	return in[0].dtype, fs, norm, nil
}

func im2colRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, err := convAttrOf(attr)
	if err != nil {
		return 0, nil, nil, err
	}
	x := in[0].shape
	if at.Groups > 1 {
		return 0, nil, nil, fmt.Errorf("groups %d: im2col unfolds all channels (groups must be 1)", at.Groups)
	}
	if at.FilterShape.Rank() != x.Rank()-2 {
		return 0, nil, nil, fmt.Errorf("attribute FilterShape %v must hold the kernel's spatial size for input %v", at.FilterShape, x)
	}
	fs := at.FilterShape.Clone()
	w := append(Shape{1, x[1]}, fs...)
	out, norm, err := convOutput(x, w, at)
	if err != nil {
		return 0, nil, nil, err
	}
	norm.FilterShape = fs
	return in[0].dtype, append(Shape{x[0], x[1] * fs.Size()}, out[2:]...), norm, nil
}

// MaxPool returns the maximum over each window of x (N, C, spatial...); padding never
// wins. Nil Stride means the kernel size (Keras's and PyTorch's default).
func MaxPool(x *Node, attr PoolAttr) *Node { return Apply(OpMaxPool, attr, x) }

// AvgPool returns the mean over each window of x (N, C, spatial...), dividing by the
// number of input elements in the window unless CountIncludePad is set.
func AvgPool(x *Node, attr PoolAttr) *Node { return Apply(OpAvgPool, attr, x) }

// MaxPool2D is MaxPool of x (N, C, H, W) with a k×k window moved by stride, no padding.
func MaxPool2D(x *Node, k, stride int) *Node {
	return MaxPool(x, PoolAttr{Kernel: []int{k, k}, Stride: []int{stride, stride}})
}

// AvgPool2D is AvgPool of x (N, C, H, W) with a k×k window moved by stride, no padding.
func AvgPool2D(x *Node, k, stride int) *Node {
	return AvgPool(x, PoolAttr{Kernel: []int{k, k}, Stride: []int{stride, stride}})
}

// MaxPoolGrad routes the gradient gy of MaxPool(x, attr) back to x: each window's
// gradient goes to the first position holding the window's maximum.
func MaxPoolGrad(x, gy *Node, attr PoolAttr) *Node { return Apply(OpMaxPoolGrad, attr, x, gy) }

// AvgPoolGrad spreads the gradient gy of AvgPool over an input of shape inputShape.
func AvgPoolGrad(gy *Node, inputShape Shape, attr PoolAttr) *Node {
	attr.InputShape = inputShape.Clone()
	return Apply(OpAvgPoolGrad, attr, gy)
}

// GlobalAvgPool returns the mean over the spatial axes of x (N, C, spatial...), shape (N, C).
func GlobalAvgPool(x *Node) *Node { return Mean(x, spatialAxes(x, "global average pooling"), false) }

// GlobalMaxPool returns the maximum over the spatial axes of x (N, C, spatial...), shape
// (N, C).
func GlobalMaxPool(x *Node) *Node { return Max(x, spatialAxes(x, "global max pooling"), false) }

// spatialAxes lists the axes after (N, C) of x, which must have at least one.
func spatialAxes(x *Node, what string) []int {
	if x.shape.Rank() < 3 {
		panic(&Error{Op: what, Err: fmt.Errorf("needs (N, C, spatial...), have %v", x.shape)})
	}
	axes := make([]int, x.shape.Rank()-2)
	for i := range axes {
		axes[i] = i + 2
	}
	return axes
}

// poolOutput checks pooling an input of shape x and returns the output shape and the
// normalised attribute.
func poolOutput(x Shape, attr any) (Shape, PoolAttr, error) {
	at, ok := attr.(PoolAttr)
	if !ok {
		return nil, at, fmt.Errorf("attribute must be PoolAttr, got %T", attr)
	}
	spatial := x.Rank() - 2
	if spatial < 1 || spatial > 2 {
		return nil, at, fmt.Errorf("needs input (N, C, W) or (N, C, H, W), have %v", x)
	}
	if len(at.Kernel) != spatial {
		return nil, at, fmt.Errorf("kernel %v: want one size per spatial axis of input %v", at.Kernel, x)
	}
	var norm PoolAttr
	var err error
	norm.Kernel = append([]int(nil), at.Kernel...)
	if norm.Stride, err = perAxis("stride", at.Stride, spatial, 1, 1); err != nil {
		return nil, at, err
	}
	if len(at.Stride) == 0 {
		copy(norm.Stride, at.Kernel)
	}
	if norm.PadBegin, err = perAxis("pad begin", at.PadBegin, spatial, 0, 0); err != nil {
		return nil, at, err
	}
	if norm.PadEnd, err = perAxis("pad end", at.PadEnd, spatial, 0, 0); err != nil {
		return nil, at, err
	}
	norm.CountIncludePad = at.CountIncludePad
	out := Shape{x[0], x[1]}
	for i := 0; i < spatial; i++ {
		k := norm.Kernel[i]
		if norm.PadBegin[i] >= k || norm.PadEnd[i] >= k {
			return nil, at, fmt.Errorf("pads %v, %v must be smaller than the kernel %v", norm.PadBegin, norm.PadEnd, norm.Kernel)
		}
		n, err := windows(x[2+i], k, norm.Stride[i], 1, norm.PadBegin[i], norm.PadEnd[i])
		if err != nil {
			return nil, at, fmt.Errorf("input %v: spatial axis %d: %v", x, i, err)
		}
		out = append(out, n)
	}
	return out, norm, nil
}

func poolRule(attr any, in []*Node) (DType, Shape, any, error) {
	out, at, err := poolOutput(in[0].shape, attr)
	if err != nil {
		return 0, nil, nil, err
	}
	return in[0].dtype, out, at, nil
}

func maxPoolGradRule(attr any, in []*Node) (DType, Shape, any, error) {
	if err := floatPair(in); err != nil {
		return 0, nil, nil, err
	}
	out, at, err := poolOutput(in[0].shape, attr)
	if err != nil {
		return 0, nil, nil, err
	}
	if !out.Equal(in[1].shape) {
		return 0, nil, nil, fmt.Errorf("output gradient %v does not match pooling %v, which gives %v", in[1].shape, in[0].shape, out)
	}
	return in[0].dtype, in[0].shape, at, nil
}

func avgPoolGradRule(attr any, in []*Node) (DType, Shape, any, error) {
	pa, ok := attr.(PoolAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be PoolAttr, got %T", attr)
	}
	xs := pa.InputShape.Clone()
	out, at, err := poolOutput(xs, attr)
	if err != nil {
		return 0, nil, nil, err
	}
	if !out.Equal(in[0].shape) {
		return 0, nil, nil, fmt.Errorf("output gradient %v does not match pooling %v, which gives %v", in[0].shape, xs, out)
	}
	at.InputShape = xs
	return in[0].dtype, xs, at, nil
}
