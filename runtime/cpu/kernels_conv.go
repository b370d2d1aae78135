package cpu

import (
	"github.com/gml-dev/gml/runtime/cpu/conv"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

// Convolution kernels delegate to package conv (im2col + GEMM); pooling is direct. 1-D
// data is treated as 2-D with height 1.

func init() {
	register(tensor.OpConv, floatTypes, convKernel)
	register(tensor.OpConvTranspose, floatTypes, convTransposeKernel)
	register(tensor.OpConvFilterGrad, floatTypes, convFilterGradKernel)
	register(tensor.OpIm2Col, floatTypes, im2colKernel)
	register(tensor.OpMaxPool, floatTypes, poolKernel)
	register(tensor.OpAvgPool, floatTypes, poolKernel)
	register(tensor.OpMaxPoolGrad, floatTypes, maxPoolGradKernel)
	register(tensor.OpAvgPoolGrad, floatTypes, avgPoolGradKernel)
}

// window is the geometry of a pooling window over one 2-D plane: input h×w, kernel
// kh×kw with strides and begin pads, producing oh×ow positions.
type window struct {
	h, w, kh, kw, sh, sw, ph, pw, oh, ow int
}

// newWindow builds the geometry of pooling an input plane of spatial shape in (rank 1 or
// 2) to out.
func newWindow(in, out tensor.Shape, at tensor.PoolAttr) window {
	if len(in) == 1 {
		return window{h: 1, w: in[0], kh: 1, kw: at.Kernel[0], sh: 1, sw: at.Stride[0], pw: at.PadBegin[0],
			oh: 1, ow: out[0]}
	}
	return window{h: in[0], w: in[1], kh: at.Kernel[0], kw: at.Kernel[1], sh: at.Stride[0], sw: at.Stride[1],
		ph: at.PadBegin[0], pw: at.PadBegin[1], oh: out[0], ow: out[1]}
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
	ws := n.Input(1).Shape()
	p := convParams(n.Input(0).Shape(), ws[0], ws[2:], n.Attr().(tensor.ConvAttr))
	X, W, Y := f32s(in[0]), f32s(in[1]), f32s(out)
	return func() error { return conv.Forward(p, X, W, nil, Y) }, nil
}

// convTransposeKernel runs the transposed convolution as the data gradient of the
// convolution from its output shape to its input shape.
func convTransposeKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	ws := n.Input(1).Shape()
	p := convParams(n.Shape(), ws[0], ws[2:], n.Attr().(tensor.ConvAttr))
	X, W, Y := f32s(in[0]), f32s(in[1]), f32s(out)
	return func() error { return conv.BackwardData(p, X, W, Y) }, nil
}

// convFilterGradKernel runs the weight gradient of the convolution.
func convFilterGradKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	fs := n.Shape()
	p := convParams(n.Input(0).Shape(), fs[0], fs[2:], n.Attr().(tensor.ConvAttr))
	X, GY, DW := f32s(in[0]), f32s(in[1]), f32s(out)
	return func() error { return conv.BackwardFilter(p, X, GY, DW) }, nil
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
	p := convParams(x, x[1]*k, at.FilterShape, at)
	eye := make([]float32, x[1]*k*k)
	for i := 0; i < x[1]*k; i++ {
		eye[i*k+i%k] = 1
	}
	X, Y := f32s(in[0]), f32s(out)
	return func() error { return conv.Forward(p, X, eye, nil, Y) }, nil
}

// poolSetup is the geometry of a pooling node over planes = N*C planes.
type poolSetup struct {
	g       window
	planes  int
	include bool // divide averages by the full window
}

func newPoolSetup(x, y tensor.Shape, at tensor.PoolAttr) poolSetup {
	return poolSetup{
		g:       newWindow(x[2:], y[2:], at),
		planes:  x[0] * x[1],
		include: at.CountIncludePad,
	}
}

// bounds returns the clipped input rows [y0, y1) and columns [x0, x1) of output (oy, ox).
func (g window) bounds(oy, ox int) (y0, y1, x0, x1 int) {
	y0, x0 = oy*g.sh-g.ph, ox*g.sw-g.pw
	y1, x1 = min(y0+g.kh, g.h), min(x0+g.kw, g.w)
	return max(y0, 0), y1, max(x0, 0), x1
}

// divisor is the count an average over the window at (oy, ox) divides by.
func (p poolSetup) divisor(y0, y1, x0, x1 int) float32 {
	if p.include {
		return float32(p.g.kh * p.g.kw)
	}
	return float32((y1 - y0) * (x1 - x0))
}

// argmax returns the plane index of the first largest input in the window at (oy, ox).
func (g window) argmax(plane []float32, oy, ox int) int {
	y0, y1, x0, x1 := g.bounds(oy, ox)
	best := y0*g.w + x0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			if v := plane[y*g.w+x]; v > plane[best] {
				best = y*g.w + x
			}
		}
	}
	return best
}

// poolKernel computes max or average pooling, parallel over the N*C planes.
func poolKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	p := newPoolSetup(n.Input(0).Shape(), n.Shape(), n.Attr().(tensor.PoolAttr))
	X, Y := f32s(in[0]), f32s(out)
	isMax := n.Op() == tensor.OpMaxPool
	g := p.g
	return func() error {
		parallel.For(p.planes, max(1, 4096/max(g.oh*g.ow*g.kh*g.kw, 1)), func(lo, hi int) {
			for pl := lo; pl < hi; pl++ {
				plane, dst := X[pl*g.h*g.w:(pl+1)*g.h*g.w], Y[pl*g.oh*g.ow:]
				for oy := 0; oy < g.oh; oy++ {
					for ox := 0; ox < g.ow; ox++ {
						if isMax {
							dst[oy*g.ow+ox] = plane[g.argmax(plane, oy, ox)]
							continue
						}
						y0, y1, x0, x1 := g.bounds(oy, ox)
						var sum float32
						for y := y0; y < y1; y++ {
							for _, v := range plane[y*g.w+x0 : y*g.w+x1] {
								sum += v
							}
						}
						dst[oy*g.ow+ox] = sum / p.divisor(y0, y1, x0, x1)
					}
				}
			}
		})
		return nil
	}, nil
}

// maxPoolGradKernel adds each output gradient to the input position its window's
// maximum came from.
func maxPoolGradKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	p := newPoolSetup(n.Input(0).Shape(), n.Input(1).Shape(), n.Attr().(tensor.PoolAttr))
	X, GY, DX := f32s(in[0]), f32s(in[1]), f32s(out)
	g := p.g
	return func() error {
		parallel.For(p.planes, 1, func(lo, hi int) {
			for pl := lo; pl < hi; pl++ {
				plane, dx, gy := X[pl*g.h*g.w:(pl+1)*g.h*g.w], DX[pl*g.h*g.w:(pl+1)*g.h*g.w], GY[pl*g.oh*g.ow:]
				clear(dx)
				for oy := 0; oy < g.oh; oy++ {
					for ox := 0; ox < g.ow; ox++ {
						dx[g.argmax(plane, oy, ox)] += gy[oy*g.ow+ox]
					}
				}
			}
		})
		return nil
	}, nil
}

// avgPoolGradKernel spreads each output gradient evenly over its window.
func avgPoolGradKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	p := newPoolSetup(n.Shape(), n.Input(0).Shape(), n.Attr().(tensor.PoolAttr))
	GY, DX := f32s(in[0]), f32s(out)
	g := p.g
	return func() error {
		parallel.For(p.planes, 1, func(lo, hi int) {
			for pl := lo; pl < hi; pl++ {
				dx, gy := DX[pl*g.h*g.w:(pl+1)*g.h*g.w], GY[pl*g.oh*g.ow:]
				clear(dx)
				for oy := 0; oy < g.oh; oy++ {
					for ox := 0; ox < g.ow; ox++ {
						y0, y1, x0, x1 := g.bounds(oy, ox)
						v := gy[oy*g.ow+ox] / p.divisor(y0, y1, x0, x1)
						for y := y0; y < y1; y++ {
							row := dx[y*g.w+x0 : y*g.w+x1]
							for i := range row {
								row[i] += v
							}
						}
					}
				}
			}
		})
		return nil
	}, nil
}
