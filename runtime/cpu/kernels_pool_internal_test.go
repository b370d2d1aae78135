package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// halvingShapes are inputs of 2×2 pools with stride 2: rows shorter than the assembly's
// vectors of four and eight windows, rows of several vectors and a tail, odd heights
// and widths.
var halvingShapes = []tensor.Shape{{1, 1, 6, 8}, {2, 3, 7, 9}, {1, 2, 2, 3}, {2, 2, 5, 33}, {1, 3, 6, 50}, {1, 1, 3, 16}, {3, 2, 27, 26}, {2, 2, 11, 11}, {1, 2, 4, 14}, {2, 1, 5, 17}, {1, 2, 2, 2}, {3, 1, 4, 31}}

// forEachPoolPath runs f with the halving pools' assembly off and, where the machine has
// them, with the AVX2 forms alone and with the AVX-512 gradient too.
func forEachPoolPath(t *testing.T, f func(t *testing.T)) {
	saved2, saved512 := poolAVX2, poolAVX512
	defer func() { poolAVX2, poolAVX512 = saved2, saved512 }()
	for _, c := range []struct {
		name         string
		avx2, avx512 bool
	}{{"go", false, false}, {"avx2", true, false}, {"avx512", true, true}} {
		if c.avx2 && !saved2 || c.avx512 && !saved512 {
			continue
		}
		poolAVX2, poolAVX512 = c.avx2, c.avx512
		t.Run(c.name, f)
	}
}

// TestMax2x2 checks the halving max pool, and with the ReLU after it, against the
// general pool's Go code on values with many ties, NaNs and signed zeros, however the
// rows are split between calls.
func TestMax2x2(t *testing.T) {
	forEachPoolPath(t, func(t *testing.T) {
		for _, x := range halvingShapes {
			y := tensor.Shape{x[0], x[1], x[2] / 2, x[3] / 2}
			p := newPooler(x, y, tensor.PoolAttr{Kernel: []int{2, 2}, Stride: []int{2, 2}, PadBegin: []int{0, 0}, PadEnd: []int{0, 0}})
			r := rand.New(rand.NewPCG(5, 6))
			X := make([]float32, x.Size())
			for trial := range 50 {
				for i := range X {
					X[i] = float32(r.IntN(5)) - 2
					switch r.IntN(12) {
					case 0:
						X[i] = float32(math.NaN())
					case 1:
						X[i] = float32(math.Copysign(0, -1))
					}
				}
				rows := p.planes * p.oh
				want := make([]float32, y.Size())
				p.poolRows(X, want, make([]float32, p.w), true, 0, rows)
				cut := trial % (rows + 1)
				for _, relu := range []bool{false, true} {
					got := make([]float32, y.Size())
					p.max2x2Rows(X, got, 0, cut, relu)
					p.max2x2Rows(X, got, cut, rows, relu)
					for i := range got {
						w := want[i]
						if relu {
							w = max(w, 0)
						}
						// Bits, so a -0 where Go's max gives +0 counts; any NaN matches a NaN.
						if math.Float32bits(got[i]) != math.Float32bits(w) && !(got[i] != got[i] && w != w) {
							t.Fatalf("%v trial %d (relu %v): output %d = %v (bits %#x), want %v (bits %#x)", x, trial,
								relu, i, got[i], math.Float32bits(got[i]), w, math.Float32bits(w))
						}
					}
				}
			}
		}
	})
}

// TestMaxGrad2x2 checks the branch-free 2×2 windows of the max pool gradient against
// argmax on values with many ties and NaNs: both take the first largest, a NaN wins only
// as a window's first element, and every input element is written (the output starts
// as garbage), including the column and row no window covers under odd sizes, however
// the rows are split between calls; and the same fused with the ReLU's gradient.
func TestMaxGrad2x2(t *testing.T) {
	forEachPoolPath(t, testMaxGrad2x2)
}

func testMaxGrad2x2(t *testing.T) {
	for _, x := range halvingShapes {
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
			// With the ReLU's gradient (Where(x > 0, ·, 0)), in place as the scheduler
			// may run it: the output overwrites X.
			for i, v := range X {
				if !(v > 0) {
					want[i] = 0
				}
			}
			got = slices.Clone(X)
			mask := make([]byte, max(maskChunk, 3*p.w))
			p.reluGradRows(got, GY, got, mask, 0, cut)
			p.reluGradRows(got, GY, got, mask, cut, rows)
			if !slices.Equal(got, want) {
				t.Fatalf("%v trial %d, with ReLU: x %v: got %v, want %v", x, trial, X, got, want)
			}
		}
	}
}
