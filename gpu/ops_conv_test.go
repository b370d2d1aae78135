package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestBackendConv checks convolutions and both their gradients (a transposed
// convolution and a filter gradient), and im2col where groups allow, against the CPU on
// shapes that are not multiples of the tiles.
func TestBackendConv(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(21, 22))
	cases := []struct {
		name string
		x, w []int
		at   tensor.ConvAttr
	}{
		{"plain", []int{2, 3, 7, 9}, []int{5, 3, 3, 3}, tensor.ConvAttr{}},
		{"stride_pad_dilation", []int{3, 4, 11, 10}, []int{6, 4, 3, 2}, tensor.ConvAttr{Stride: []int{2, 3}, PadBegin: []int{1, 0}, PadEnd: []int{2, 1}, Dilation: []int{2, 1}}},
		{"groups", []int{2, 6, 9, 8}, []int{8, 3, 3, 3}, tensor.ConvAttr{Groups: 2, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}}},
		{"depthwise", []int{2, 5, 10, 7}, []int{10, 1, 3, 3}, tensor.ConvAttr{Groups: 5, Stride: []int{2, 2}, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}}},
		{"conv1d", []int{3, 4, 17}, []int{7, 4, 5}, tensor.ConvAttr{Stride: []int{2}, Dilation: []int{2}, PadBegin: []int{3}, PadEnd: []int{1}}},
		{"pointwise", []int{2, 40, 6, 6}, []int{70, 40, 1, 1}, tensor.ConvAttr{}},
		{"wide", []int{2, 19, 13, 13}, []int{33, 19, 3, 3}, tensor.ConvAttr{PadBegin: []int{1, 1}, PadEnd: []int{1, 1}}},
		// Long reductions over few filter-gradient outputs take the split-K path.
		{"split_k", []int{4, 3, 20, 19}, []int{8, 3, 3, 3}, tensor.ConvAttr{}},
		{"split_k_depthwise", []int{3, 6, 24, 25}, []int{6, 1, 3, 3}, tensor.ConvAttr{Groups: 6, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}}},
	}
	for _, c := range cases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		x := randInput(g, r, feeds, -1, 1, c.x...)
		w := randInput(g, r, feeds, -1, 1, c.w...)
		y := tensor.Conv(x, w, c.at)
		gy := randInput(g, r, feeds, -1, 1, y.Shape()...)
		grads := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, w})
		outs := []*tensor.Node{y, grads[0], grads[1]}
		if c.at.Groups <= 1 {
			at := c.at
			at.FilterShape = tensor.Shape(c.w[2:])
			outs = append(outs, tensor.Im2Col(x, at))
		}
		for _, o := range outs[1:3] {
			if o.Op() != tensor.OpConvTranspose && o.Op() != tensor.OpConvFilterGrad {
				t.Fatalf("%s: gradient %v is not a transposed convolution or filter gradient", c.name, o)
			}
		}
		compareWithCPU(t, be, c.name, 1e-5, outs, feeds)
	}
}

// TestBackendConvTranspose checks strided transposed convolutions with output padding
// and groups, and their gradients (a convolution and a filter gradient).
func TestBackendConvTranspose(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(23, 24))
	cases := []struct {
		x, w []int
		opts tensor.ConvOptions
	}{
		{[]int{2, 6, 5, 7}, []int{6, 3, 3, 3}, tensor.ConvOptions{Stride: []int{2}, Padding: tensor.ConvPadding{Mode: tensor.PaddingSame}}},
		{[]int{1, 4, 6, 3}, []int{4, 5, 4, 2}, tensor.ConvOptions{Stride: []int{3, 2}, OutputPadding: []int{2, 1}, Groups: 2, Dilation: []int{1, 2}}},
	}
	for i, c := range cases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		x := randInput(g, r, feeds, -1, 1, c.x...)
		w := randInput(g, r, feeds, -1, 1, c.w...)
		y := tensor.ConvTranspose2D(x, w, c.opts)
		gy := randInput(g, r, feeds, -1, 1, y.Shape()...)
		grads := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, w})
		compareWithCPU(t, be, fmt.Sprint("conv_transpose", i), 1e-5, []*tensor.Node{y, grads[0], grads[1]}, feeds)
	}
}

// TestBackendPool checks max and average pooling and their gradients; inputs are small
// integers so that windows hold ties and the max gradient must pick the first maximum.
func TestBackendPool(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(25, 26))
	cases := []struct {
		name string
		x    []int
		at   tensor.PoolAttr
	}{
		{"k2s2", []int{2, 3, 8, 8}, tensor.PoolAttr{Kernel: []int{2, 2}}},
		{"k3s2_pad", []int{2, 3, 9, 10}, tensor.PoolAttr{Kernel: []int{3, 3}, Stride: []int{2, 2}, PadBegin: []int{1, 1}, PadEnd: []int{1, 0}}},
		{"include_pad", []int{1, 4, 7, 5}, tensor.PoolAttr{Kernel: []int{3, 2}, Stride: []int{1, 2}, PadBegin: []int{1, 1}, PadEnd: []int{2, 1}, CountIncludePad: true}},
		{"overlap", []int{3, 2, 11, 6}, tensor.PoolAttr{Kernel: []int{4, 3}, Stride: []int{1, 1}}},
		{"pool1d", []int{2, 5, 23}, tensor.PoolAttr{Kernel: []int{5}, Stride: []int{3}, PadBegin: []int{2}, PadEnd: []int{2}}},
	}
	for _, c := range cases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		x := randInput(g, r, feeds, 0, 1, c.x...)
		xs := feeds[x].Float32s()
		for i := range xs {
			xs[i] = float32(int(xs[i] * 4))
		}
		mp, ap := tensor.MaxPool(x, c.at), tensor.AvgPool(x, c.at)
		gy := randInput(g, r, feeds, -1, 1, mp.Shape()...)
		outs := []*tensor.Node{mp, ap, tensor.MaxPoolGrad(x, gy, c.at), tensor.AvgPoolGrad(gy, x.Shape(), c.at)}
		compareWithCPU(t, be, c.name, 1e-6, outs, feeds)
	}
}
