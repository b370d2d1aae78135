package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestMaxGrad2x2 checks the branch-free 2×2 windows of the max pool gradient against
// argmax on values with many ties and NaNs: both take the first largest, a NaN wins only
// as a window's first element, and every input element is written (the output starts
// as garbage), including the column and row no window covers under odd sizes, however
// the rows are split between calls.
func TestMaxGrad2x2(t *testing.T) {
	for _, x := range []tensor.Shape{{1, 1, 6, 8}, {2, 3, 7, 9}, {1, 2, 2, 3}} {
		y := tensor.Shape{x[0], x[1], x[2] / 2, x[3] / 2}
		p := newPooler(x, y, tensor.PoolAttr{Kernel: []int{2, 2}, Stride: []int{2, 2}, PadBegin: []int{0, 0}, PadEnd: []int{0, 0}})
		if !p.halving {
			t.Fatalf("%v: 2x2 windows of stride 2 not recognised as halving", x)
		}
		r := rand.New(rand.NewPCG(3, 4))
		X, GY := make([]float32, x.Size()), make([]float32, y.Size())
		for i := range GY {
			GY[i] = float32(1 + i)
		}
		for trial := range 200 {
			for i := range X {
				X[i] = float32(r.IntN(3))
				if r.IntN(10) == 0 {
					X[i] = float32(math.NaN())
				}
			}
			got, want := make([]float32, len(X)), make([]float32, len(X))
			for i := range got {
				got[i] = 7
			}
			for pl := range p.planes {
				plane := X[pl*p.h*p.w:][:p.h*p.w]
				for oy, row := range p.rows {
					for ox, col := range p.cols {
						want[pl*p.h*p.w+p.argmax(plane, row, col)] += GY[(pl*p.oh+oy)*p.ow+ox]
					}
				}
			}
			// Split the rows in two at a point that moves with the trial, as threads do.
			rows := p.planes * p.oh
			cut := trial % (rows + 1)
			p.maxGrad2x2Rows(X, GY, got, 0, cut)
			p.maxGrad2x2Rows(X, GY, got, cut, rows)
			if !slices.Equal(got, want) {
				t.Fatalf("%v trial %d: x %v: got %v, want %v", x, trial, X, got, want)
			}
		}
	}
}
