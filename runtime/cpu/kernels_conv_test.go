package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

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
	// Unit strides take package conv's wide-grid kernels (per tap with many channels).
	{"valid 3x3 33 channels", tensor.Shape{3, 33, 13, 13}, tensor.Shape{7, 33, 3, 3}, tensor.ConvOptions{}},
	{"same 3x3 width 257", tensor.Shape{2, 1, 3, 257}, tensor.Shape{7, 1, 3, 3}, tensor.ConvOptions{Padding: tensor.PadSymmetric(1)}},
	{"same 3x3 7 to 33", tensor.Shape{2, 7, 7, 9}, tensor.Shape{33, 7, 3, 3}, tensor.ConvOptions{Padding: tensor.PadSymmetric(1)}},
	{"dilated groups unit stride", tensor.Shape{2, 26, 9, 11}, tensor.Shape{14, 13, 3, 2},
		tensor.ConvOptions{Groups: 2, Dilation: []int{2, 1}, Padding: tensor.ConvPadding{Begin: []int{2, 1}, End: []int{0, 3}}}},
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
		x, _ := e.f32(c.x...)
		w, _ := e.f32(c.w...)
		var y *tensor.Node
		if c.x.Rank() == 3 {
			y = tensor.Conv1D(x, w, firstOr1(c.opt.Stride), c.opt.Padding, firstOr1(c.opt.Dilation), c.opt.Groups)
		} else {
			y = tensor.Conv2D(x, w, c.opt)
		}
		at := y.Attr().(tensor.ConvAttr)
		gy, _ := e.f32(y.Shape()...)
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
		want := e.reference(y, dx, dw)
		// float32 sums drift with their length: the filter gradient's runs over every
		// output position of the batch.
		tol := 1e-5 * max(1, math.Sqrt(float64(y.Shape().Size()/c.w[0]))/10)
		check(t, c.name+" conv", got[0], y.Shape(), want[0], tol)
		check(t, c.name+" conv_transpose", got[1], c.x, want[1], tol)
		check(t, c.name+" conv_filter_grad", got[2], c.w, want[2], tol)
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
		x, _ := e.f32(c.x...)
		y := tensor.Im2Col(x, c.at)
		got := e.run(y)[0]
		check(t, fmt.Sprint("im2col ", c.x), got, y.Shape(), e.reference(y)[0], 0)
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
