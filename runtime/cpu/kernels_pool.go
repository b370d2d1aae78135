package cpu

import (
	"math"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

func init() {
	register(tensor.OpMaxPool, floatTypes, poolKernel)
	register(tensor.OpAvgPool, floatTypes, poolKernel)
	register(tensor.OpMaxPoolGrad, floatTypes, maxPoolGradKernel)
	register(tensor.OpAvgPoolGrad, floatTypes, avgPoolGradKernel)
}

// span is a half-open range [lo, hi) of input rows or columns.
type span struct{ lo, hi int }

// pooler is the geometry of a pooling node: planes (N*C) input planes of h×w pooled to
// oh×ow, with the input window of each output row and column clipped to the input
// (padding never enters a window). 1-D pooling is 2-D pooling of height 1.
type pooler struct {
	planes, h, w, oh, ow int
	rows, cols           []span
	full                 float32 // the divisor with CountIncludePad: the kernel area
	include              bool
	pairs                bool // every window is two columns wide
}

func newPooler(x, y tensor.Shape, at tensor.PoolAttr) pooler {
	in, out, k, s, pb := [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, [2]int{}
	off := 4 - x.Rank()
	for i := range x.Rank() - 2 {
		in[off+i], out[off+i], k[off+i], s[off+i], pb[off+i] = x[2+i], y[2+i], at.Kernel[i], at.Stride[i], at.PadBegin[i]
	}
	clip := func(n, size, k, s, pb int) []span {
		sp := make([]span, n)
		for o := range sp {
			lo := o*s - pb
			sp[o] = span{max(lo, 0), min(lo+k, size)}
		}
		return sp
	}
	p := pooler{
		planes: x[0] * x[1], h: in[0], w: in[1], oh: out[0], ow: out[1],
		rows: clip(out[0], in[0], k[0], s[0], pb[0]), cols: clip(out[1], in[1], k[1], s[1], pb[1]),
		full: float32(k[0] * k[1]), include: at.CountIncludePad, pairs: true,
	}
	for _, c := range p.cols {
		p.pairs = p.pairs && c.hi-c.lo == 2
	}
	return p
}

// argmax returns the plane index of the first largest input in the window r × c.
func (p *pooler) argmax(plane []float32, r, c span) int {
	best := r.lo*p.w + c.lo
	m := plane[best]
	for y := r.lo; y < r.hi; y++ {
		for x, v := range plane[y*p.w+c.lo : y*p.w+c.hi] {
			if v > m {
				m, best = v, y*p.w+c.lo+x
			}
		}
	}
	return best
}

// divisor is the count an average over the window r × c divides by.
func (p *pooler) divisor(r, c span) float32 {
	if p.include {
		return p.full
	}
	return float32((r.hi - r.lo) * (c.hi - c.lo))
}

// grain is the number of planes a goroutine needs for a split to pay: at least a few
// thousand window elements.
func (p *pooler) grain() int {
	return max(1, 1<<13/max(p.oh*p.ow*max(1, int(p.full)), 1))
}

// chunks is how many goroutines the planes are split between.
func (p *pooler) chunks() int { return max(1, min(parallel.Workers(), p.planes/p.grain())) }

// forPlanes runs body on every plane index, in parallel.
func (p *pooler) forPlanes(body func(pl int)) {
	parallel.For(p.planes, p.grain(), func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			body(pl)
		}
	})
}

// poolKernel computes max or average pooling.
func poolKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	p := newPooler(n.Input(0).Shape(), n.Shape(), n.Attr().(tensor.PoolAttr))
	X, Y := f32s(in[0]), f32s(out)
	isMax := n.Op() == tensor.OpMaxPool
	// Each output row first combines its window's input rows column by column (a run
	// over contiguous memory), then each output takes its window's columns of that
	// row: a k×k window costs about 2k operations instead of k² with bookkeeping.
	chunks := p.chunks()
	scratch := make([][]float32, chunks)
	for i := range scratch {
		scratch[i] = make([]float32, p.w)
	}
	return func() error {
		parallel.Run(chunks, func(ch int) {
			line := scratch[ch]
			for pl := ch * p.planes / chunks; pl < (ch+1)*p.planes/chunks; pl++ {
				plane, dst := X[pl*p.h*p.w:(pl+1)*p.h*p.w], Y[pl*p.oh*p.ow:(pl+1)*p.oh*p.ow]
				for oy, r := range p.rows {
					copy(line, plane[r.lo*p.w:(r.lo+1)*p.w])
					for y := r.lo + 1; y < r.hi; y++ {
						row := plane[y*p.w : (y+1)*p.w]
						if isMax {
							// Go's max is branch-free (a branch on the data mispredicts
							// about half the time) and propagates NaN, as PyTorch does.
							for x, v := range row {
								line[x] = max(line[x], v)
							}
						} else {
							for x, v := range row {
								line[x] += v
							}
						}
					}
					orow := dst[oy*p.ow : (oy+1)*p.ow]
					for ox, c := range p.cols {
						win := line[c.lo:c.hi]
						m := win[0]
						if isMax {
							for _, v := range win[1:] {
								m = max(m, v)
							}
							orow[ox] = m
							continue
						}
						for _, v := range win[1:] {
							m += v
						}
						orow[ox] = m / p.divisor(r, c)
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
	p := newPooler(n.Input(0).Shape(), n.Input(1).Shape(), n.Attr().(tensor.PoolAttr))
	X, GY, DX := f32s(in[0]), f32s(in[1]), f32s(out)
	return func() error {
		p.forPlanes(func(pl int) {
			plane, dx, gy := X[pl*p.h*p.w:(pl+1)*p.h*p.w], DX[pl*p.h*p.w:(pl+1)*p.h*p.w], GY[pl*p.oh*p.ow:]
			clear(dx)
			for oy, r := range p.rows {
				g := gy[oy*p.ow : (oy+1)*p.ow]
				if r.hi-r.lo == 2 && p.pairs {
					p.argmax2x2(plane, dx, g, r.lo)
					continue
				}
				for ox, c := range p.cols {
					dx[p.argmax(plane, r, c)] += g[ox]
				}
			}
		})
		return nil
	}, nil
}

// argmax2x2 adds the gradients g of one row of 2×2 windows (input rows y and y+1, the
// columns of p.cols, each two wide) to their windows' first largest inputs, choosing
// without branches: which of four values is largest is random, and a branch on it
// mispredicts about half the time.
func (p *pooler) argmax2x2(plane, dx, g []float32, y int) {
	top, bot := plane[y*p.w:(y+1)*p.w], plane[(y+1)*p.w:(y+2)*p.w]
	for ox, c := range p.cols {
		x := c.lo
		best, m := y*p.w+x, top[x]
		best, m = pick(best, m, y*p.w+x+1, top[x+1])
		best, m = pick(best, m, (y+1)*p.w+x, bot[x])
		best, _ = pick(best, m, (y+1)*p.w+x+1, bot[x+1])
		dx[best] += g[ox]
	}
}

// pick returns (j, v) when v > m, else (i, m), selecting with a mask: the compiler turns
// the comparison into a flag-setting instruction rather than a branch.
func pick(i int, m float32, j int, v float32) (int, float32) {
	var t int
	if v > m {
		t = 1
	}
	mask := -t
	mb, vb := math.Float32bits(m), math.Float32bits(v)
	return i ^ (i^j)&mask, math.Float32frombits(mb ^ (mb^vb)&uint32(mask))
}

// avgPoolGradKernel spreads each output gradient evenly over its window.
func avgPoolGradKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	p := newPooler(n.Shape(), n.Input(0).Shape(), n.Attr().(tensor.PoolAttr))
	GY, DX := f32s(in[0]), f32s(out)
	return func() error {
		p.forPlanes(func(pl int) {
			dx, gy := DX[pl*p.h*p.w:(pl+1)*p.h*p.w], GY[pl*p.oh*p.ow:]
			clear(dx)
			for oy, r := range p.rows {
				for ox, c := range p.cols {
					v := gy[oy*p.ow+ox] / p.divisor(r, c)
					for y := r.lo; y < r.hi; y++ {
						row := dx[y*p.w+c.lo : y*p.w+c.hi]
						for i := range row {
							row[i] += v
						}
					}
				}
			}
		})
		return nil
	}, nil
}
