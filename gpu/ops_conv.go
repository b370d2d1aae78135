package gpu

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

func init() {
	for op := tensor.Op(1); int(op) < tensor.NumOps; op++ {
		switch op.GPU().Shader {
		case "conv":
			ops[op] = opImpl{record: convRecorder(opCode[op]), supports: convSupported}
		case "conv_pool":
			ops[op] = opImpl{record: poolRecorder(opCode[op]), supports: fitsIndexing}
		}
	}
	ops[tensor.OpIm2Col] = opImpl{record: recordIm2Col, supports: convSupported}
}

// convPush is the push-constant block of conv_common.glsl: a 2-D convolution of an
// (N, C, H, W) image by O filters of KH×KW into (N, O, OH, OW); 1-D convolutions have
// H = KH = OH = 1.
type convPush struct {
	n, c, h, w, o, kh, kw, oh, ow, sh, sw, pt, pl, dh, dw, g uint32
	offA, offB, offC                                         uint32
}

func (p convPush) bytes() []byte {
	return words([]uint32{p.n, p.c, p.h, p.w, p.o, p.kh, p.kw, p.oh, p.ow, p.sh, p.sw, p.pt, p.pl, p.dh, p.dw, p.g, p.offA, p.offB, p.offC})
}

// convGeometry describes the convolution of an image of shape img (N, C, spatial...)
// by o filters of spatial size kernel into outputs of spatial size out, under a
// normalised attribute.
func convGeometry(img tensor.Shape, o int, kernel, out []int, at tensor.ConvAttr) convPush {
	p := convPush{n: uint32(img[0]), c: uint32(img[1]), o: uint32(o), g: uint32(max(at.Groups, 1)),
		h: 1, kh: 1, oh: 1, sh: 1, dh: 1}
	w := len(kernel) - 1
	if w == 1 {
		p.h, p.kh, p.oh, p.sh, p.dh, p.pt = uint32(img[2]), uint32(kernel[0]), uint32(out[0]), uint32(at.Stride[0]), uint32(at.Dilation[0]), uint32(at.PadBegin[0])
	}
	p.w, p.kw, p.ow, p.sw, p.dw, p.pl = uint32(img[2+w]), uint32(kernel[w]), uint32(out[w]), uint32(at.Stride[w]), uint32(at.Dilation[w]), uint32(at.PadBegin[w])
	return p
}

// convNodeGeometry returns the convolution a conv-family node computes, in the terms
// of its forward convolution: the image is the forward input (the transposed
// convolution's output) and the filters are the forward weights.
func convNodeGeometry(n *tensor.Node) convPush {
	at := n.Attr().(tensor.ConvAttr)
	switch n.Op() {
	case tensor.OpConvTranspose: // input is the forward output, output the forward input
		ws := n.Input(1).Shape()
		return convGeometry(n.Shape(), ws[0], ws[2:], n.Input(0).Shape()[2:], at)
	case tensor.OpConvFilterGrad: // inputs (x, gy), output the filters
		fs := n.Shape()
		return convGeometry(n.Input(0).Shape(), fs[0], fs[2:], n.Input(1).Shape()[2:], at)
	case tensor.OpIm2Col:
		x := n.Input(0).Shape()
		return convGeometry(x, x[1], at.FilterShape, n.Shape()[2:], at)
	}
	ws := n.Input(1).Shape()
	return convGeometry(n.Input(0).Shape(), ws[0], ws[2:], n.Shape()[2:], at)
}

// fitsIndexing reports whether every operand of n can be indexed with 32-bit unsigned
// integers, as the shaders do.
func fitsIndexing(_ *Device, n *tensor.Node) bool {
	if n.Shape().Size() >= math.MaxInt32 {
		return false
	}
	for _, in := range n.Inputs() {
		if in.Shape().Size() >= math.MaxInt32 {
			return false
		}
	}
	return true
}

// convSupported also bounds the groups and the channels per group by the grid's extent.
func convSupported(d *Device, n *tensor.Node) bool {
	g := convNodeGeometry(n)
	return fitsIndexing(d, n) && g.g <= maxGroups && max(g.c, g.o)/g.g <= maxGroups && g.n*g.h*g.w < math.MaxInt32
}

// convTile is a block shape of conv.comp: BM×BN outputs per workgroup of 256 threads,
// TM×TN per thread.
type convTile struct{ bm, bn, tm, tn uint32 }

// convTileFor picks the tile for a product with m rows per group: square tiles when m
// is large, wide flat ones for few rows (depthwise convolutions have one), so that
// threads are not spent on rows that do not exist.
func convTileFor(m uint32) convTile {
	switch {
	case m > 16:
		return convTile{64, 64, 4, 4}
	case m > 4:
		return convTile{16, 128, 2, 4}
	}
	return convTile{4, 256, 1, 4}
}

const convBK = 16

// A filter gradient whose GEMM would have fewer than convSplitKBelow workgroups, for a
// reduction at least convSplitKMinK long, instead gives each workgroup
// convSplitKTile×convSplitKTile outputs and splits the reduction between its threads
// (the first layers of a CNN: few filters, long reductions over batch and pixels).
const (
	convSplitKBelow = 128
	convSplitKMinK  = 1024
	convSplitKTile  = 4
)

// convRecorder records a forward convolution, a transposed convolution (the forward
// one's data gradient) or a filter gradient as one implicit-GEMM dispatch.
func convRecorder(mode uint32) func(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	return func(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
		if n.Shape().Size() == 0 {
			return nil
		}
		p := convNodeGeometry(n)
		cg, kg, kk := p.c/p.g, p.o/p.g, p.kh*p.kw
		// Every mode reads A from the second input (weights, or the output gradient of a
		// filter gradient) and B from the first (image, or output gradient).
		a, b := in[1], in[0]
		var m, cols uint32
		switch mode {
		case convConv:
			m, cols = kg, p.n*p.oh*p.ow
		case convConvTranspose:
			m, cols = cg, p.n*p.h*p.w
		default:
			m, cols = kg, cg*kk
		}
		p.offA, p.offB, p.offC = f32Off(a), f32Off(b), f32Off(out)
		t := convTileFor(m)
		colTiles, rowTiles := (cols+t.bn-1)/t.bn, (m+t.bm-1)/t.bm
		var k *Kernel
		var err error
		if mode == convConvFilterGrad && colTiles*rowTiles*p.g < convSplitKBelow && p.n*p.oh*p.ow >= convSplitKMinK {
			colTiles, rowTiles = (cols+convSplitKTile-1)/convSplitKTile, (m+convSplitKTile-1)/convSplitKTile
			k, err = r.d.Kernel("conv_splitk", 3, groupSize, convSplitKTile, convSplitKTile)
		} else {
			k, err = r.d.Kernel("conv", 3, (t.bm/t.tm)*(t.bn/t.tn), mode, t.bm, t.bn, convBK, t.tm, t.tn)
		}
		if err != nil {
			return err
		}
		grid := [3]uint32{max(1, min(colTiles, maxGroups)), rowTiles, p.g}
		return r.Dispatch(k, grid, p.bytes(), n.Op().String(), In(a), In(b), Out(out))
	}
}

// recordIm2Col unfolds the convolution windows with one thread per output element.
func recordIm2Col(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	size := n.Shape().Size()
	if size == 0 {
		return nil
	}
	p := convNodeGeometry(n)
	p.offA, p.offC = f32Off(in[0]), f32Off(out)
	k, err := r.d.Kernel("conv_im2col", 2, groupSize)
	if err != nil {
		return err
	}
	return r.Dispatch(k, gridFor(size), p.bytes(), "im2col", In(in[0]), Out(out))
}

// poolRecorder records pooling (one thread per output) or its gradient (one thread
// per input element, gathering from the windows that cover it).
func poolRecorder(mode uint32) func(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	return func(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
		x, y := n.Input(0).Shape(), n.Shape()
		a, b := in[0], in[0]
		switch mode {
		case convPoolMaxPoolGrad: // (x, gy) -> dx
			y, b = n.Input(1).Shape(), in[1]
		case convPoolAvgPoolGrad: // gy -> dx
			x, y = n.Shape(), n.Input(0).Shape()
		}
		if x.Size() == 0 || y.Size() == 0 {
			return nil
		}
		at := n.Attr().(tensor.PoolAttr)
		// Per axis (H, W), right-aligned so that 1-D pooling has H = KH = 1: input,
		// output, kernel and stride sizes and the begin padding.
		var hw [2][5]uint32
		hw[0] = [5]uint32{1, 1, 1, 1, 0}
		for i := range x.Rank() - 2 {
			hw[4-x.Rank()+i] = [5]uint32{uint32(x[2+i]), uint32(y[2+i]), uint32(at.Kernel[i]), uint32(at.Stride[i]), uint32(at.PadBegin[i])}
		}
		h, w := hw[0], hw[1]
		push := words([]uint32{uint32(x[0] * x[1]), h[0], w[0], h[1], w[1], h[2], w[2], h[3], w[3], h[4], w[4],
			f32Off(a), f32Off(b), f32Off(out)})
		k, err := r.d.Kernel("conv_pool", 3, groupSize, mode, b32(at.CountIncludePad))
		if err != nil {
			return err
		}
		count := n.Shape().Size()
		return r.Dispatch(k, gridFor(count), push, n.Op().String(), In(a), In(b), Out(out))
	}
}
