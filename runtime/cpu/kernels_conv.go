package cpu

import (
	"github.com/gml-dev/gml/runtime/cpu/conv"
	"github.com/gml-dev/gml/tensor"
)

// Convolution kernels delegate to package conv; 1-D data is treated as 2-D with height 1.
// Each kernel builds its conv.Conv once, when the program is prepared, so the scratch
// memory a convolution needs is allocated at the first step and reused by the next.
// Pooling is in kernels_pool.go.

func init() {
	register(tensor.OpConv, floatTypes, convKernel)
	register(tensor.OpConvTranspose, floatTypes, convTransposeKernel)
	register(tensor.OpConvFilterGrad, floatTypes, convFilterGradKernel)
	register(tensor.OpIm2Col, floatTypes, im2colKernel)
}

// convParams describes, for package conv, the convolution of an image of shape img
// (N, C, spatial...) by outChannels filters of spatial size kernel under at. 1-D
// convolutions are 2-D ones of height 1.
func convParams(img tensor.Shape, outChannels int, kernel []int, at tensor.ConvAttr) conv.Params {
	p := conv.Params{Batch: img[0], InChannels: img[1], OutChannels: outChannels, Groups: at.Groups,
		InH: 1, KernelH: 1, StrideH: 1, DilationH: 1}
	h := len(kernel) - 2 // -1 for 1-D: no vertical axis
	if h >= 0 {
		p.InH, p.KernelH, p.StrideH, p.DilationH = img[2], kernel[0], at.Stride[0], at.Dilation[0]
		p.PadTop, p.PadBottom = at.PadBegin[0], at.PadEnd[0]
	}
	w := len(kernel) - 1
	p.InW, p.KernelW, p.StrideW, p.DilationW = img[2+w], kernel[w], at.Stride[w], at.Dilation[w]
	p.PadLeft, p.PadRight = at.PadBegin[w], at.PadEnd[w]
	return p
}

// convKernel runs the forward convolution.
func convKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	return convStep(n, out, in, nil)
}

// convStep runs the forward convolution n and, when bias is not nil, adds bias (one
// value per output channel) to each output as the convolution writes it (convpool.go
// fuses a bias Add into the convolution this way).
func convStep(n *tensor.Node, out []byte, in [][]byte, bias []byte) (func() error, error) {
	return convStepThen(n, out, in, bias, nil)
}

// convStepThen is convStep that calls then(image) as each image of the output is
// complete (conv.Conv.ForwardThen).
func convStepThen(n *tensor.Node, out []byte, in [][]byte, bias []byte, then func(int)) (func() error, error) {
	ws := n.Input(1).Shape()
	c, err := conv.New(convParams(n.Input(0).Shape(), ws[0], ws[2:], n.Attr().(tensor.ConvAttr)))
	if err != nil {
		return nil, err
	}
	X, W, Y := f32s(in[0]), f32s(in[1]), f32s(out)
	var B []float32
	if bias != nil {
		B = f32s(bias)
	}
	return func() error { return c.ForwardThen(X, W, B, Y, then) }, nil
}

// convTransposeKernel runs the transposed convolution as the data gradient of the
// convolution from its output shape to its input shape.
func convTransposeKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	ws := n.Input(1).Shape()
	c, err := conv.New(convParams(n.Shape(), ws[0], ws[2:], n.Attr().(tensor.ConvAttr)))
	if err != nil {
		return nil, err
	}
	X, W, Y := f32s(in[0]), f32s(in[1]), f32s(out)
	return func() error { return c.BackwardData(X, W, Y) }, nil
}

// convFilterGradKernel runs the weight gradient of the convolution.
func convFilterGradKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	fs := n.Shape()
	c, err := conv.New(convParams(n.Input(0).Shape(), fs[0], fs[2:], n.Attr().(tensor.ConvAttr)))
	if err != nil {
		return nil, err
	}
	X, GY, DW := f32s(in[0]), f32s(in[1]), f32s(out)
	return func() error { return c.BackwardFilter(X, GY, DW) }, nil
}

// im2colKernel unfolds x (N, C, spatial...) into (N, C*K, out...) as the depthwise
// convolution whose C*K filters (one group per channel) are the one-hot kernels: filter
// c*K + j picks kernel offset j of channel c. This keeps one im2col traversal (package
// conv's) at the price of a K×K product per output position, which is fine for an op the
// CPU backend only meets as another backend's fallback.
func im2colKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.ConvAttr)
	x := n.Input(0).Shape()
	k := at.FilterShape.Size()
	at.Groups = x[1]
	c, err := conv.New(convParams(x, x[1]*k, at.FilterShape, at))
	if err != nil {
		return nil, err
	}
	eye := make([]float32, x[1]*k*k)
	for i := 0; i < x[1]*k; i++ {
		eye[i*k+i%k] = 1
	}
	X, Y := f32s(in[0]), f32s(out)
	return func() error { return c.Forward(X, eye, nil, Y) }, nil
}
