package cpu_test

import (
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestPoolKernels checks max and average pooling and their gradients against the float64
// reference, on the halving 2×2 path (even and odd sizes, blocks of rows split between
// threads) and the general one (padding, overlap, 1-D, ragged channel counts).
func TestPoolKernels(t *testing.T) {
	halve := tensor.PoolAttr{Kernel: []int{2, 2}}
	for _, c := range []struct {
		name string
		x    tensor.Shape
		at   tensor.PoolAttr
	}{
		{"2x2", tensor.Shape{2, 3, 6, 8}, halve},
		{"2x2 odd", tensor.Shape{1, 2, 7, 9}, halve},
		{"2x2 one row", tensor.Shape{1, 1, 3, 2}, halve},
		{"2x2 split rows", tensor.Shape{2, 257, 33, 7}, halve},
		{"2x2 cnn28", tensor.Shape{7, 33, 26, 26}, halve},
		{"2x2 pad", tensor.Shape{1, 2, 5, 6}, tensor.PoolAttr{Kernel: []int{2, 2}, PadBegin: []int{1}, PadEnd: []int{1}}},
		{"2x2 ceil", tensor.Shape{1, 7, 5, 7}, tensor.PoolAttr{Kernel: []int{2, 2}, PadEnd: []int{1}}},
		{"3x3 s2 pad", tensor.Shape{1, 2, 7, 9}, tensor.PoolAttr{Kernel: []int{3, 3}, Stride: []int{2}, PadBegin: []int{1}, PadEnd: []int{1}}},
		{"3x3 s2 pad split", tensor.Shape{3, 33, 17, 15}, tensor.PoolAttr{Kernel: []int{3, 3}, Stride: []int{2}, PadBegin: []int{1}, PadEnd: []int{1}}},
		{"include pad", tensor.Shape{1, 2, 5, 5}, tensor.PoolAttr{Kernel: []int{3, 2}, Stride: []int{2, 1}, PadBegin: []int{1, 1}, PadEnd: []int{2, 0}, CountIncludePad: true}},
		{"overlapping odd", tensor.Shape{2, 1, 5, 7}, tensor.PoolAttr{Kernel: []int{3, 3}, Stride: []int{1}}},
		{"1-D", tensor.Shape{2, 3, 10}, tensor.PoolAttr{Kernel: []int{3}, Stride: []int{2}, PadEnd: []int{1}}},
		{"1-D pairs", tensor.Shape{1, 257, 33}, tensor.PoolAttr{Kernel: []int{2}}},
	} {
		e := newEnv(t)
		// Few distinct values, so that windows hold ties and the first largest must win.
		x, _ := e.input(tensor.F32, -2, 2, c.x...)
		xq := tensor.Round(x)
		mp, ap := tensor.MaxPool(xq, c.at), tensor.AvgPool(x, c.at)
		gy, _ := e.f32(mp.Shape()...)
		at := mp.Attr().(tensor.PoolAttr)
		mg, ag := tensor.MaxPoolGrad(xq, gy, at), tensor.AvgPoolGrad(gy, c.x, at)
		got := e.run(mp, ap, mg, ag)
		want := e.reference(mp, ap, mg, ag)
		check(t, c.name+" max", got[0], mp.Shape(), want[0], 0)
		check(t, c.name+" avg", got[1], mp.Shape(), want[1], 1e-6)
		check(t, c.name+" max grad", got[2], c.x, want[2], 1e-6)
		check(t, c.name+" avg grad", got[3], c.x, want[3], 1e-6)
	}
}
