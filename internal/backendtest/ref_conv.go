package backendtest

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// References of convolution and pooling, written as the sums over (input, weight,
// output) index triples that define them: the transposed convolution and the filter
// gradient are the same triples read the other way.

// convGeom is a 1-D or 2-D convolution promoted to 2-D (height 1 for 1-D).
type convGeom struct {
	n, c, o, groups   int
	in, k, out, s, d  [2]int
	pad               [2]int
	inPlane, outPlane int
}

// newConvGeom describes the forward convolution of an image of shape x by weights of
// shape w into y.
func newConvGeom(x, w, y tensor.Shape, at tensor.ConvAttr) convGeom {
	g := convGeom{n: x[0], c: x[1], o: w[0], groups: max(at.Groups, 1), in: [2]int{1, 1}, k: [2]int{1, 1},
		out: [2]int{1, 1}, s: [2]int{1, 1}, d: [2]int{1, 1}}
	off := 4 - len(x)
	for i := range len(x) - 2 {
		g.in[off+i], g.k[off+i], g.out[off+i] = x[2+i], w[2+i], y[2+i]
		g.s[off+i], g.d[off+i], g.pad[off+i] = at.Stride[i], at.Dilation[i], at.PadBegin[i]
	}
	g.inPlane, g.outPlane = g.in[0]*g.in[1], g.out[0]*g.out[1]
	return g
}

// visit calls f with the flat indices into x, w and y of every product a forward
// convolution sums, skipping padding.
func (g convGeom) visit(f func(xi, wi, yi int)) {
	cg, og := g.c/g.groups, g.o/g.groups
	for n := 0; n < g.n; n++ {
		for o := 0; o < g.o; o++ {
			grp := o / og
			for oy := 0; oy < g.out[0]; oy++ {
				for ox := 0; ox < g.out[1]; ox++ {
					yi := (n*g.o+o)*g.outPlane + oy*g.out[1] + ox
					for c := 0; c < cg; c++ {
						for i := 0; i < g.k[0]; i++ {
							for j := 0; j < g.k[1]; j++ {
								iy, ix := oy*g.s[0]-g.pad[0]+i*g.d[0], ox*g.s[1]-g.pad[1]+j*g.d[1]
								if iy < 0 || iy >= g.in[0] || ix < 0 || ix >= g.in[1] {
									continue
								}
								f((n*g.c+grp*cg+c)*g.inPlane+iy*g.in[1]+ix, ((o*cg+c)*g.k[0]+i)*g.k[1]+j, yi)
							}
						}
					}
				}
			}
		}
	}
}

// poolGeom is a 1-D or 2-D pooling promoted to 2-D.
type poolGeom struct {
	planes          int
	in, k, out, s   [2]int
	pad             [2]int
	include         bool
	inPlane, outPln int
}

func newPoolGeom(x, y tensor.Shape, at tensor.PoolAttr) poolGeom {
	g := poolGeom{planes: x[0] * x[1], in: [2]int{1, 1}, k: [2]int{1, 1}, out: [2]int{1, 1}, s: [2]int{1, 1}, include: at.CountIncludePad}
	off := 4 - len(x)
	for i := range len(x) - 2 {
		g.in[off+i], g.k[off+i], g.out[off+i] = x[2+i], at.Kernel[i], y[2+i]
		g.s[off+i], g.pad[off+i] = at.Stride[i], at.PadBegin[i]
	}
	g.inPlane, g.outPln = g.in[0]*g.in[1], g.out[0]*g.out[1]
	return g
}

// window calls f for every plane and output position with the flat input indices of
// its window clipped to the input, in row-major order, and the divisor of an average.
func (g poolGeom) window(f func(yi int, xs []int, divisor float64)) {
	for p := 0; p < g.planes; p++ {
		for oy := 0; oy < g.out[0]; oy++ {
			for ox := 0; ox < g.out[1]; ox++ {
				var xs []int
				for i := 0; i < g.k[0]; i++ {
					for j := 0; j < g.k[1]; j++ {
						iy, ix := oy*g.s[0]-g.pad[0]+i, ox*g.s[1]-g.pad[1]+j
						if iy >= 0 && iy < g.in[0] && ix >= 0 && ix < g.in[1] {
							xs = append(xs, p*g.inPlane+iy*g.in[1]+ix)
						}
					}
				}
				div := float64(len(xs))
				if g.include {
					div = float64(g.k[0] * g.k[1])
				}
				f(p*g.outPln+oy*g.out[1]+ox, xs, div)
			}
		}
	}
}

// firstMax is the position in xs of the first largest element of x.
func firstMax(x []float64, xs []int) int {
	best := xs[0]
	for _, i := range xs[1:] {
		if x[i] > x[best] || math.IsNaN(x[i]) && !math.IsNaN(x[best]) {
			best = i
		}
	}
	return best
}

func init() {
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.ConvAttr)
		x, w := in[0], in[1]
		out := newArray(n.DType(), n.Shape())
		newConvGeom(x.Shape, w.Shape, out.Shape, at).visit(func(xi, wi, yi int) {
			out.Data[yi] += x.Data[xi] * w.Data[wi]
		})
		return out
	}, tensor.OpConv)
	// The transposed convolution's output is the image of the forward convolution whose
	// output is its input.
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.ConvAttr)
		gy, w := in[0], in[1]
		out := newArray(n.DType(), n.Shape())
		newConvGeom(out.Shape, w.Shape, gy.Shape, at).visit(func(xi, wi, yi int) {
			out.Data[xi] += gy.Data[yi] * w.Data[wi]
		})
		return out
	}, tensor.OpConvTranspose)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.ConvAttr)
		x, gy := in[0], in[1]
		out := newArray(n.DType(), n.Shape())
		newConvGeom(x.Shape, out.Shape, gy.Shape, at).visit(func(xi, wi, yi int) {
			out.Data[wi] += gy.Data[yi] * x.Data[xi]
		})
		return out
	}, tensor.OpConvFilterGrad)
	// Im2Col: row c·K + t of the column matrix holds channel c under kernel tap t.
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.ConvAttr)
		x := in[0]
		out := newArray(n.DType(), n.Shape())
		c := x.Shape[1]
		w := append(tensor.Shape{c, 1}, at.FilterShape...)
		at.Groups = c // one filter per channel picks out its taps
		y := append(tensor.Shape{x.Shape[0], c}, out.Shape[2:]...)
		g := newConvGeom(x.Shape, w, y, at)
		kk := at.FilterShape.Size()
		g.visit(func(xi, wi, yi int) {
			// yi indexes (n, channel, pixel); wi indexes (channel, tap).
			nn, ch, pix := yi/(c*g.outPlane), yi/g.outPlane%c, yi%g.outPlane
			out.Data[((nn*c+ch)*kk+wi%kk)*g.outPlane+pix] = x.Data[xi]
		})
		return out
	}, tensor.OpIm2Col)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		x := in[0]
		out := newArray(n.DType(), n.Shape())
		newPoolGeom(x.Shape, out.Shape, n.Attr().(tensor.PoolAttr)).window(func(yi int, xs []int, div float64) {
			if n.Op() == tensor.OpMaxPool {
				out.Data[yi] = x.Data[firstMax(x.Data, xs)]
				return
			}
			for _, i := range xs {
				out.Data[yi] += x.Data[i]
			}
			out.Data[yi] /= div
		})
		return out
	}, tensor.OpMaxPool, tensor.OpAvgPool)
	// The max gradient goes to each window's first maximum.
	defRef(func(n *tensor.Node, in []*Array) *Array {
		x, gy := in[0], in[1]
		out := newArray(n.DType(), n.Shape())
		newPoolGeom(x.Shape, gy.Shape, n.Attr().(tensor.PoolAttr)).window(func(yi int, xs []int, _ float64) {
			out.Data[firstMax(x.Data, xs)] += gy.Data[yi]
		})
		return out
	}, tensor.OpMaxPoolGrad)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		gy := in[0]
		out := newArray(n.DType(), n.Shape())
		newPoolGeom(out.Shape, gy.Shape, n.Attr().(tensor.PoolAttr)).window(func(yi int, xs []int, div float64) {
			for _, i := range xs {
				out.Data[i] += gy.Data[yi] / div
			}
		})
		return out
	}, tensor.OpAvgPoolGrad)
}
