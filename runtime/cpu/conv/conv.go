package conv

import (
	"fmt"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

// chunkElems bounds the column buffer: images are processed in chunks whose column
// matrices together hold about this many floats (16 MiB).
const chunkElems = 4 << 20

// geometry holds the sizes derived from validated, normalized Params.
type geometry struct {
	p            Params
	plane        int // OutH*OutW
	kg           int // output channels per group
	crs          int // rows of one group's column block: InChannels/Groups*KernelH*KernelW
	inLen        int // one input image: InChannels*InH*InW
	outLen       int // one output image: OutChannels*plane
	colLen       int // one image's column matrix: InChannels*KernelH*KernelW*plane
	chunk        int // images per chunk
	direct       bool
	lda, ldPlane int // leading dimensions, at least 1 so empty operands stay valid
}

func newGeometry(p Params) geometry {
	g := geometry{p: p, plane: p.OutH() * p.OutW()}
	g.kg = p.OutChannels / p.Groups
	g.crs = p.InChannels / p.Groups * p.KernelH * p.KernelW
	g.inLen = p.InChannels * p.InH * p.InW
	g.outLen = p.OutChannels * g.plane
	g.colLen = g.crs * p.Groups * g.plane
	g.chunk = max(1, min(p.Batch, chunkElems/max(g.colLen, 1)))
	// A 1×1 kernel with unit stride and no padding reads each input pixel once, in
	// order: the image is its own column matrix.
	g.direct = p.KernelH == 1 && p.KernelW == 1 && p.StrideH == 1 && p.StrideW == 1 &&
		p.PadTop+p.PadBottom+p.PadLeft+p.PadRight == 0
	g.lda, g.ldPlane = max(g.crs, 1), max(g.plane, 1)
	return g
}

// columns returns the column matrices of images [n0, n0+nb) of x and the distance between
// consecutive images' matrices, building them in *buf unless the convolution is direct.
func (g geometry) columns(x []float32, n0, nb int, buf *[]float32) ([]float32, int) {
	if g.direct {
		return x[n0*g.inLen:], g.inLen
	}
	col := grow(buf, nb*g.colLen)
	parallel.For(nb, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			im2col(g.p, x[(n0+i)*g.inLen:], col[i*g.colLen:], false)
		}
	})
	return col, g.colLen
}

// grow sets *buf to length n, reallocating only when its capacity is short.
func grow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// Forward computes the convolution y = x ⋆ w (+ bias) described by p. bias, when not
// nil, holds one value per output channel. y is overwritten. Each group of each image is
// one GEMM, W_g (OutChannels/Groups × InChannels/Groups·KH·KW) times the image's column
// matrix, run as strided batches over the images of a chunk.
func Forward(p Params, x, w, bias, y []float32) error {
	p = p.normalized()
	if err := checkLens("Forward", p, operand{"x", len(x), p.InputLen()},
		operand{"w", len(w), p.WeightLen()}, operand{"y", len(y), p.OutputLen()}); err != nil {
		return err
	}
	if bias != nil && len(bias) != p.OutChannels {
		return fmt.Errorf("conv.Forward: bias has %d elements, want %d (one per output channel)",
			len(bias), p.OutChannels)
	}
	g := newGeometry(p)
	if len(y) == 0 {
		return nil
	}
	var buf []float32
	for n0 := 0; n0 < p.Batch; n0 += g.chunk {
		nb := min(g.chunk, p.Batch-n0)
		src, stride := g.columns(x, n0, nb, &buf)
		for grp := 0; grp < p.Groups; grp++ {
			if err := gemm.SgemmStrided(false, false, g.kg, g.plane, g.crs, 1,
				w[grp*g.kg*g.crs:], g.lda, 0,
				src[grp*g.crs*g.plane:], g.ldPlane, stride,
				0, y[n0*g.outLen+grp*g.kg*g.plane:], g.ldPlane, g.outLen, nb); err != nil {
				return fmt.Errorf("conv.Forward: %w", err)
			}
		}
	}
	if bias != nil {
		addBias(y, bias, p.Batch, g.plane)
	}
	return nil
}

// BackwardData computes the gradient of the loss with respect to the input, dx, from
// the gradient dy with respect to the output of the convolution described by p. dx is
// overwritten. Per group and image: dcol = W_gᵀ·dy, then col2im adds dcol into dx.
func BackwardData(p Params, dy, w, dx []float32) error {
	p = p.normalized()
	if err := checkLens("BackwardData", p, operand{"dy", len(dy), p.OutputLen()},
		operand{"w", len(w), p.WeightLen()}, operand{"dx", len(dx), p.InputLen()}); err != nil {
		return err
	}
	g := newGeometry(p)
	if g.plane == 0 || g.kg == 0 {
		clear(dx)
		return nil
	}
	var buf []float32
	for n0 := 0; n0 < p.Batch; n0 += g.chunk {
		nb := min(g.chunk, p.Batch-n0)
		dst, stride := dx[n0*g.inLen:], g.inLen
		if !g.direct {
			dst, stride = grow(&buf, nb*g.colLen), g.colLen
		}
		for grp := 0; grp < p.Groups; grp++ {
			if err := gemm.SgemmStrided(true, false, g.crs, g.plane, g.kg, 1,
				w[grp*g.kg*g.crs:], g.lda, 0,
				dy[n0*g.outLen+grp*g.kg*g.plane:], g.ldPlane, g.outLen,
				0, dst[grp*g.crs*g.plane:], g.ldPlane, stride, nb); err != nil {
				return fmt.Errorf("conv.BackwardData: %w", err)
			}
		}
		if g.direct {
			continue
		}
		parallel.For(nb, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				img := dx[(n0+i)*g.inLen:][:g.inLen]
				clear(img)
				im2col(p, img, dst[i*g.colLen:], true)
			}
		})
	}
	return nil
}

// BackwardFilter computes the gradient of the loss with respect to the weights, dw, from
// the input x and the output gradient dy of the convolution described by p. dw is
// overwritten. Per group it sums dy_g·colᵀ over the images.
func BackwardFilter(p Params, x, dy, dw []float32) error {
	p = p.normalized()
	if err := checkLens("BackwardFilter", p, operand{"x", len(x), p.InputLen()},
		operand{"dy", len(dy), p.OutputLen()}, operand{"dw", len(dw), p.WeightLen()}); err != nil {
		return err
	}
	g := newGeometry(p)
	clear(dw)
	if g.plane == 0 || g.crs == 0 {
		return nil
	}
	var buf []float32
	for n0 := 0; n0 < p.Batch; n0 += g.chunk {
		nb := min(g.chunk, p.Batch-n0)
		src, stride := g.columns(x, n0, nb, &buf)
		for i := 0; i < nb; i++ {
			for grp := 0; grp < p.Groups; grp++ {
				if err := gemm.Sgemm(false, true, g.kg, g.crs, g.plane, 1,
					dy[(n0+i)*g.outLen+grp*g.kg*g.plane:], g.ldPlane,
					src[i*stride+grp*g.crs*g.plane:], g.ldPlane,
					1, dw[grp*g.kg*g.crs:], g.lda); err != nil {
					return fmt.Errorf("conv.BackwardFilter: %w", err)
				}
			}
		}
	}
	return nil
}

// BiasGrad computes the gradient of the loss with respect to the bias, db (one value per
// output channel, overwritten): the sum of dy over images and positions.
func BiasGrad(p Params, dy, db []float32) error {
	p = p.normalized()
	if err := checkLens("BiasGrad", p, operand{"dy", len(dy), p.OutputLen()},
		operand{"db", len(db), p.OutChannels}); err != nil {
		return err
	}
	plane := p.OutH() * p.OutW()
	parallel.For(p.OutChannels, 8, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			var sum float64
			for n := 0; n < p.Batch; n++ {
				for _, v := range dy[(n*p.OutChannels+k)*plane:][:plane] {
					sum += float64(v)
				}
			}
			db[k] = float32(sum)
		}
	})
	return nil
}

// TransposedForward computes the transposed convolution y = x ⋆ᵀ w (+ bias) described by
// t; bias, when not nil, holds one value per output channel. y is overwritten. It is
// BackwardData of t.Conv(); by the same identity, the gradients of a transposed
// convolution are Forward(t.Conv(), dy, w, nil, dx) for the input and
// BackwardFilter(t.Conv(), dy, x, dw) for the weights.
func TransposedForward(t Transposed, x, w, bias, y []float32) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("conv.TransposedForward: %w", err)
	}
	p := t.Conv()
	if bias != nil && len(bias) != p.InChannels {
		return fmt.Errorf("conv.TransposedForward: bias has %d elements, want %d (one per output channel)",
			len(bias), p.InChannels)
	}
	if err := BackwardData(p, x, w, y); err != nil {
		return fmt.Errorf("transposed: %w", err)
	}
	if bias != nil {
		addBias(y, bias, p.Batch, p.InH*p.InW)
	}
	return nil
}

// addBias adds bias[c] to every element of channel c of the batch×len(bias)×plane tensor y.
func addBias(y, bias []float32, batch, plane int) {
	channels := len(bias)
	parallel.For(batch*channels, max(1, 1<<14/max(plane, 1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			b := bias[i%channels]
			for j, v := range y[i*plane:][:plane] {
				y[i*plane+j] = v + b
			}
		}
	})
}
