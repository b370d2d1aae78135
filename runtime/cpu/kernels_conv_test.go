package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// geom2 is a 1-D or 2-D convolution promoted to 2-D (height 1 for 1-D).
type geom2 struct {
	n, c, o, groups   int
	in, k, out, s, d  [2]int
	pad               [2]int
	xLen, wLen, yLen  int
	inPlane, outPlane int
}

func promote(x, w, y tensor.Shape, at tensor.ConvAttr) geom2 {
	g := geom2{n: x[0], c: x[1], o: w[0], groups: at.Groups, in: [2]int{1, 1}, k: [2]int{1, 1},
		out: [2]int{1, 1}, s: [2]int{1, 1}, d: [2]int{1, 1}}
	off := 4 - x.Rank()
	for i := range x.Rank() - 2 {
		g.in[off+i], g.k[off+i], g.out[off+i] = x[2+i], w[2+i], y[2+i]
		g.s[off+i], g.d[off+i], g.pad[off+i] = at.Stride[i], at.Dilation[i], at.PadBegin[i]
	}
	g.inPlane, g.outPlane = g.in[0]*g.in[1], g.out[0]*g.out[1]
	return g
}

// visit calls f with the flat indices into x, w and y of every (input, weight, output)
// triple a forward convolution multiplies, skipping padding.
func (g geom2) visit(f func(xi, wi, yi int)) {
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

var convCases = []struct {
	name string
	x, w tensor.Shape
	opt  tensor.ConvOptions
}{
	{"plain odd", tensor.Shape{2, 3, 7, 9}, tensor.Shape{4, 3, 3, 3}, tensor.ConvOptions{}},
	{"stride 2 pad 1", tensor.Shape{1, 2, 8, 7}, tensor.Shape{3, 2, 3, 3},
		tensor.ConvOptions{Stride: []int{2}, Padding: tensor.PadSymmetric(1)}},
	{"dilation+asymmetric pad", tensor.Shape{2, 2, 9, 8}, tensor.Shape{2, 2, 3, 2},
		tensor.ConvOptions{Dilation: []int{2, 3}, Padding: tensor.ConvPadding{Begin: []int{0, 2}, End: []int{1, 0}}}},
	{"same even kernel stride 2", tensor.Shape{2, 3, 7, 8}, tensor.Shape{4, 3, 4, 4},
		tensor.ConvOptions{Stride: []int{2}, Padding: tensor.ConvPadding{Mode: tensor.PaddingSame}}},
	{"same lower stride 3", tensor.Shape{1, 2, 10, 5}, tensor.Shape{2, 2, 2, 3},
		tensor.ConvOptions{Stride: []int{3, 2}, Padding: tensor.ConvPadding{Mode: tensor.PaddingSameLower}}},
	{"groups", tensor.Shape{2, 4, 6, 5}, tensor.Shape{6, 2, 3, 2}, tensor.ConvOptions{Groups: 2, Stride: []int{1, 2}}},
	{"depthwise same", tensor.Shape{2, 3, 5, 6}, tensor.Shape{6, 1, 3, 3},
		tensor.ConvOptions{Groups: 3, Padding: tensor.ConvPadding{Mode: tensor.PaddingSame}}},
	{"1x1", tensor.Shape{3, 5, 4, 3}, tensor.Shape{2, 5, 1, 1}, tensor.ConvOptions{}},
	{"1-D", tensor.Shape{3, 2, 11}, tensor.Shape{4, 2, 4},
		tensor.ConvOptions{Stride: []int{2}, Dilation: []int{2}, Padding: tensor.ConvPadding{Mode: tensor.PaddingSame}}},
	{"1-D groups", tensor.Shape{2, 4, 9}, tensor.Shape{4, 1, 3}, tensor.ConvOptions{Groups: 4, Padding: tensor.PadSymmetric(2)}},
}

// TestConvKernels checks Conv, ConvTranspose, ConvFilterGrad and Im2Col against direct
// float64 loops over the same index triples.
func TestConvKernels(t *testing.T) {
	for _, c := range convCases {
		e := newEnv(t)
		x, X := e.f32(c.x...)
		w, W := e.f32(c.w...)
		var y *tensor.Node
		if c.x.Rank() == 3 {
			y = tensor.Conv1D(x, w, firstOr1(c.opt.Stride), c.opt.Padding, firstOr1(c.opt.Dilation), c.opt.Groups)
		} else {
			y = tensor.Conv2D(x, w, c.opt)
		}
		at := y.Attr().(tensor.ConvAttr)
		gy, GY := e.f32(y.Shape()...)
		geo := promote(c.x, c.w, y.Shape(), at)
		// The transposed convolution maps gy back to x's shape: pick the output padding.
		tat := at
		tat.OutputPadding = make([]int, len(at.Stride))
		for i := range at.Stride {
			full := (y.Shape()[2+i]-1)*at.Stride[i] - at.PadBegin[i] - at.PadEnd[i] + at.Dilation[i]*(c.w[2+i]-1) + 1
			tat.OutputPadding[i] = c.x[2+i] - full
		}
		dx := tensor.ConvTranspose(gy, w, tat)
		fat := at
		fat.FilterShape = c.w
		dw := tensor.ConvFilterGrad(x, gy, fat)
		got := e.run(y, dx, dw)

		wantY, wantDX, wantDW := make([]float64, y.Shape().Size()), make([]float64, len(X)), make([]float64, len(W))
		geo.visit(func(xi, wi, yi int) {
			wantY[yi] += X[xi] * W[wi]
			wantDX[xi] += GY[yi] * W[wi]
			wantDW[wi] += GY[yi] * X[xi]
		})
		check(t, c.name+" conv", got[0], y.Shape(), wantY, 1e-5)
		check(t, c.name+" conv_transpose", got[1], c.x, wantDX, 1e-5)
		check(t, c.name+" conv_filter_grad", got[2], c.w, wantDW, 1e-5)
	}
}

// firstOr1 is v[0], or 1 when v is empty (the default stride and dilation).
func firstOr1(v []int) int {
	if len(v) == 0 {
		return 1
	}
	return v[0]
}

func TestIm2ColKernel(t *testing.T) {
	for _, c := range []struct {
		x  tensor.Shape
		at tensor.ConvAttr
	}{
		{tensor.Shape{2, 3, 5, 6}, tensor.ConvAttr{FilterShape: tensor.Shape{3, 2}, Stride: []int{2, 1}, PadBegin: []int{1, 0}, PadEnd: []int{1, 1}}},
		{tensor.Shape{1, 2, 7}, tensor.ConvAttr{FilterShape: tensor.Shape{3}, Dilation: []int{2}}},
	} {
		e := newEnv(t)
		x, X := e.f32(c.x...)
		y := tensor.Im2Col(x, c.at)
		got := e.run(y)[0]
		at := y.Attr().(tensor.ConvAttr)
		k := at.FilterShape.Size()
		ws := append(tensor.Shape{c.x[1] * k, 1}, at.FilterShape...)
		at.Groups = c.x[1]
		geo := promote(c.x, ws, y.Shape(), at)
		want := make([]float64, y.Shape().Size())
		geo.visit(func(xi, wi, yi int) {
			if wi%k == (wi/k)%k { // filter c*K+j at offset j: the one-hot kernels
				want[yi] = X[xi]
			}
		})
		check(t, fmt.Sprint("im2col ", c.x), got, y.Shape(), want, 0)
	}
}

// refPool is max or average pooling in float64, with the max's first index per window.
func refPool(x []float64, xs, ys tensor.Shape, at tensor.PoolAttr, isMax bool) (y []float64, arg []int) {
	k, s, p, in, out := [2]int{1, 1}, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, [2]int{1, 1}
	off := 4 - xs.Rank()
	for i := range xs.Rank() - 2 {
		k[off+i], s[off+i], p[off+i], in[off+i], out[off+i] = at.Kernel[i], at.Stride[i], at.PadBegin[i], xs[2+i], ys[2+i]
	}
	planes := xs[0] * xs[1]
	y, arg = make([]float64, planes*out[0]*out[1]), make([]int, planes*out[0]*out[1])
	for pl := 0; pl < planes; pl++ {
		for oy := 0; oy < out[0]; oy++ {
			for ox := 0; ox < out[1]; ox++ {
				o := (pl*out[0]+oy)*out[1] + ox
				best, sum, count := math.Inf(-1), 0.0, 0
				for i := 0; i < k[0]; i++ {
					for j := 0; j < k[1]; j++ {
						iy, ix := oy*s[0]-p[0]+i, ox*s[1]-p[1]+j
						if iy < 0 || iy >= in[0] || ix < 0 || ix >= in[1] {
							continue
						}
						xi := (pl*in[0]+iy)*in[1] + ix
						if x[xi] > best {
							best, arg[o] = x[xi], xi
						}
						sum += x[xi]
						count++
					}
				}
				if at.CountIncludePad {
					count = k[0] * k[1]
				}
				y[o] = sum / float64(count)
				if isMax {
					y[o] = best
				}
			}
		}
	}
	return y, arg
}

func TestPoolKernels(t *testing.T) {
	for _, c := range []struct {
		name string
		x    tensor.Shape
		at   tensor.PoolAttr
	}{
		{"2x2", tensor.Shape{2, 3, 6, 8}, tensor.PoolAttr{Kernel: []int{2, 2}}},
		{"2x2 odd", tensor.Shape{1, 2, 7, 9}, tensor.PoolAttr{Kernel: []int{2, 2}}},
		{"2x2 pad", tensor.Shape{1, 2, 5, 6}, tensor.PoolAttr{Kernel: []int{2, 2}, PadBegin: []int{1}, PadEnd: []int{1}}},
		{"3x3 s2 pad", tensor.Shape{1, 2, 7, 9}, tensor.PoolAttr{Kernel: []int{3, 3}, Stride: []int{2}, PadBegin: []int{1}, PadEnd: []int{1}}},
		{"include pad", tensor.Shape{1, 2, 5, 5}, tensor.PoolAttr{Kernel: []int{3, 2}, Stride: []int{2, 1}, PadBegin: []int{1, 1}, PadEnd: []int{2, 0}, CountIncludePad: true}},
		{"overlapping odd", tensor.Shape{2, 1, 5, 7}, tensor.PoolAttr{Kernel: []int{3, 3}, Stride: []int{1}}},
		{"1-D", tensor.Shape{2, 3, 10}, tensor.PoolAttr{Kernel: []int{3}, Stride: []int{2}, PadEnd: []int{1}}},
	} {
		e := newEnv(t)
		x, X := e.f32(c.x...)
		mp, ap := tensor.MaxPool(x, c.at), tensor.AvgPool(x, c.at)
		gy, GY := e.f32(mp.Shape()...)
		at := mp.Attr().(tensor.PoolAttr)
		mg, ag := tensor.MaxPoolGrad(x, gy, at), tensor.AvgPoolGrad(gy, c.x, at)
		got := e.run(mp, ap, mg, ag)

		wantMax, arg := refPool(X, c.x, mp.Shape(), at, true)
		wantAvg, _ := refPool(X, c.x, mp.Shape(), at, false)
		wantMG := make([]float64, len(X))
		for o, xi := range arg {
			wantMG[xi] += GY[o]
		}
		// The average pool's gradient is its adjoint: <AvgPool(e_i), gy> for each unit e_i.
		wantAG := make([]float64, len(X))
		unit := make([]float64, len(X))
		for i := range unit {
			unit[i] = 1
			yi, _ := refPool(unit, c.x, mp.Shape(), at, false)
			for o, v := range yi {
				wantAG[i] += v * GY[o]
			}
			unit[i] = 0
		}
		check(t, c.name+" max", got[0], mp.Shape(), wantMax, 0)
		check(t, c.name+" avg", got[1], mp.Shape(), wantAvg, 1e-6)
		check(t, c.name+" max grad", got[2], c.x, wantMG, 1e-6)
		check(t, c.name+" avg grad", got[3], c.x, wantAG, 1e-6)
	}
}

// TestConvPoolEmptyAndUnit runs the convolution and pooling ops on an empty batch and on
// size-1 spatial axes.
func TestConvPoolEmptyAndUnit(t *testing.T) {
	for _, n := range []int{0, 1} {
		e := newEnv(t)
		x, X := e.f32(n, 2, 1, 1)
		w, W := e.f32(3, 2, 1, 1)
		y := tensor.Conv2D(x, w)
		gy, GY := e.f32(y.Shape()...)
		fat := y.Attr().(tensor.ConvAttr)
		fat.FilterShape = w.Shape()
		pool := tensor.PoolAttr{Kernel: []int{1, 1}}
		got := e.run(y, tensor.ConvTranspose(gy, w, y.Attr().(tensor.ConvAttr)), tensor.ConvFilterGrad(x, gy, fat),
			tensor.MaxPool(x, pool), tensor.AvgPoolGrad(x, x.Shape(), pool))
		wantY, wantDX, wantDW := make([]float64, n*3), make([]float64, n*2), make([]float64, 6)
		for b := 0; b < n; b++ {
			for o := 0; o < 3; o++ {
				for c := 0; c < 2; c++ {
					wantY[b*3+o] += W[o*2+c] * X[b*2+c]
					wantDX[b*2+c] += W[o*2+c] * GY[b*3+o]
					wantDW[o*2+c] += GY[b*3+o] * X[b*2+c]
				}
			}
		}
		name := fmt.Sprint("batch ", n)
		check(t, name+" conv", got[0], y.Shape(), wantY, 1e-6)
		check(t, name+" conv_transpose", got[1], x.Shape(), wantDX, 1e-6)
		check(t, name+" conv_filter_grad", got[2], w.Shape(), wantDW, 1e-6)
		check(t, name+" max_pool 1x1", got[3], x.Shape(), X, 0)
		check(t, name+" avg_pool_grad 1x1", got[4], x.Shape(), X, 0)
	}
}
