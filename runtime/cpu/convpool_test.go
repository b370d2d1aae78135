package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/childtest"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// cnnLayer builds y = max_pool(relu(conv(x, w) + b)) over a 2×2 window and the
// gradients of y·gy with respect to x, w and b, as nn's Conv2D and MaxPooling2D do:
// batch n, c input and k output channels, s×s images, a kernel×kernel filter with pad
// on each side. With keepRelu the ReLU's value is an output too; with noBias there is
// no bias (and no gradient for it).
func cnnLayer(n, c, k, s, kernel, pad int, keepRelu, noBias bool) fusionCase {
	return fusionCase{fmt.Sprintf("n%d_c%d_k%d_s%d_f%d_p%d_keep%v_nobias%v", n, c, k, s, kernel, pad, keepRelu, noBias),
		func(g *tensor.Graph, in func(...int) *tensor.Node, _ int) []*tensor.Node {
			x, w := in(n, c, s, s), in(k, c, kernel, kernel)
			at := tensor.ConvAttr{Stride: []int{1, 1}, Dilation: []int{1, 1}, PadBegin: []int{pad, pad},
				PadEnd: []int{pad, pad}, Groups: 1}
			z, wrt := tensor.Conv(x, w, at), []*tensor.Node{x, w}
			if !noBias {
				b := in(k, 1, 1)
				z, wrt = tensor.Add(z, b), append(wrt, b)
			}
			r := tensor.Relu(z)
			y := tensor.MaxPool2D(r, 2, 2)
			gy := in(y.Shape()...)
			outs := append([]*tensor.Node{y}, tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, wrt)...)
			if keepRelu {
				outs = append(outs, r)
			}
			return outs
		}}
}

// TestConvPoolFusion checks the fused conv + bias and ReLU + max pool (forward and
// backward) against the unfused nodes, bit for bit, on ragged sizes (odd sizes leave a
// row and a column out of every window; 150 makes rows of more windows than a chunk),
// with Where's output in its own buffer and in the buffer of the ReLU's input (the
// scheduler's reuse), and that the fusion happens (fewer steps) but not when the ReLU's
// value is read elsewhere. Through child processes, the same with GML_SIMD=go and avx2
// (the AVX-512 pools' runs off).
func TestConvPoolFusion(t *testing.T) {
	whereInZ := func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node {
		z := byOp(nodes, tensor.OpRelu).Input(0)
		return map[*tensor.Node]*tensor.Node{byOp(nodes, tensor.OpWhere): z}
	}
	cases := []struct {
		fusionCase
		saved int // steps
	}{
		{cnnLayer(1, 1, 3, 7, 3, 0, false, false), 5},
		{cnnLayer(7, 3, 17, 33, 3, 1, false, false), 5},
		{cnnLayer(7, 17, 5, 8, 1, 0, false, false), 5},
		{cnnLayer(1, 3, 4, 2, 1, 0, false, false), 5},
		{cnnLayer(1, 1, 2, 150, 3, 1, false, false), 5},
		{cnnLayer(2, 1, 3, 28, 3, 0, false, false), 5}, // cnn28's first layer: rows of 13 windows
		// The ReLU's value is read: the bias add fuses into the convolution and Greater
		// with Where, nothing else.
		{cnnLayer(7, 3, 5, 9, 3, 1, true, false), 2},
		// No bias: ReLU, Greater and Where take no step, the pool has one of its own.
		{cnnLayer(7, 3, 5, 9, 3, 1, false, true), 3},
	}
	for _, c := range cases {
		for _, share := range []func([]*tensor.Node) map[*tensor.Node]*tensor.Node{nil, whereInZ} {
			stepsOff, want := runFusionCase(t, c.fusionCase, 0, false, share)
			steps, got := runFusionCase(t, c.fusionCase, 0, true, share)
			// Unfused (no fusion at all: GML_FUSE=off) every node is a step; fused, the
			// add, ReLU, pool, Greater and Where take none.
			if stepsOff-steps != c.saved {
				t.Errorf("%s (shared %v): %d steps fused, %d unfused, want %d fewer", c.name, share != nil,
					steps, stepsOff, c.saved)
			}
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("%s (shared %v, %v): output %d element %d = %v fused, %v unfused", c.name,
							share != nil, vec.Active(), i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
	if os.Getenv("GML_SIMD") != "" {
		return
	}
	for _, l := range []vec.Level{vec.Go, vec.AVX2} {
		if l < vec.Active() {
			if out, err := childtest.Run("^TestConvPoolFusion$", "GML_SIMD="+l.String()); err != nil {
				t.Errorf("with GML_SIMD=%v: %v\n%s", l, err, out)
			}
		}
	}
}

// TestReluPoolStepsAllocateNothing checks that the fused pool steps take their buffers
// and closures from their preparation: a training step runs them without allocating
// (on sizes that one worker takes, as TestStepsAllocateNothing: more start goroutines).
func TestReluPoolStepsAllocateNothing(t *testing.T) {
	x, y := tensor.Shape{3, 5, 26, 27}, tensor.Shape{3, 5, 13, 13}
	p := newPooler(x, y, tensor.PoolAttr{Kernel: []int{2, 2}, Stride: []int{2, 2}, PadBegin: []int{0, 0}, PadEnd: []int{0, 0}})
	z, dy, dz, py := make([]float32, x.Size()), make([]float32, y.Size()), make([]float32, x.Size()), make([]float32, y.Size())
	for name, step := range map[string]func() error{
		"forward": maxPoolReluStep(p, z, py), "backward": maxPoolReluGradStep(p, z, dy, dz, nil),
		"backward in place":  maxPoolReluGradStep(p, z, dy, z, nil),
		"backward with sums": maxPoolReluGradStep(p, z, dy, dz, make([]float64, p.planes)),
	} {
		step() // the first run may start the workers
		if n := testing.AllocsPerRun(10, func() { step() }); n != 0 {
			t.Errorf("%s: %v allocations per run", name, n)
		}
	}
}

// TestReluPoolAfterGradient builds the ReLU + max pool pattern by hand with the pool
// scheduled after its gradient (nodes run in creation order here) and Where's output in
// the ReLU's input's buffer: unfused that is sound (the pool reads the ReLU's output),
// so the fusion, whose pool reads z, must not run the gradient step, which overwrites
// z, before the pool. The results must be the unfused ones.
func TestReluPoolAfterGradient(t *testing.T) {
	c := fusionCase{"pool_after_grad", func(g *tensor.Graph, in func(...int) *tensor.Node, _ int) []*tensor.Node {
		z := in(2, 3, 9, 8)
		r := tensor.Relu(z)
		at := tensor.PoolAttr{Kernel: []int{2, 2}, Stride: []int{2, 2}, PadBegin: []int{0, 0}, PadEnd: []int{0, 0}}
		dy := in(2, 3, 4, 4)
		grad := tensor.MaxPoolGrad(r, dy, at)
		where := tensor.Where(tensor.Greater(z, g.Scalar(tensor.F32, 0)), grad, g.Scalar(tensor.F32, 0))
		return []*tensor.Node{where, tensor.MaxPool2D(r, 2, 2)}
	}}
	whereInZ := func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node {
		return map[*tensor.Node]*tensor.Node{byOp(nodes, tensor.OpWhere): byOp(nodes, tensor.OpRelu).Input(0)}
	}
	_, want := runFusionCase(t, c, 0, false, whereInZ)
	_, got := runFusionCase(t, c, 0, true, whereInZ)
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("output %d element %d = %v fused, %v unfused", i, j, got[i][j], want[i][j])
			}
		}
	}
}

// TestBiasSum checks that the bias gradient of a CNN layer (the sum of Where's output
// over N, H and W) is found for the fused ReLU + pool backward to sum as it writes
// (TestConvPoolFusion checks its bits), and nothing without a bias or with one channel.
func TestBiasSum(t *testing.T) {
	for _, c := range []struct {
		layer fusionCase
		found bool
	}{
		{cnnLayer(2, 1, 3, 28, 3, 0, false, false), true},
		{cnnLayer(1, 3, 4, 6, 1, 0, false, false), true}, // one image: axes 2 and 3 only
		{cnnLayer(2, 3, 4, 6, 3, 1, false, true), false},
		{cnnLayer(2, 3, 1, 6, 3, 1, false, false), false},
	} {
		g := tensor.NewGraph()
		in := func(shape ...int) *tensor.Node { return g.Input(fmt.Sprint("x", shape), tensor.F32, shape...) }
		nodes := graphOf(c.layer.build(g, in, 0)...)
		where := byOp(nodes, tensor.OpWhere)
		var users []*tensor.Node
		for _, n := range nodes {
			if slices.Contains(n.Inputs(), where) {
				users = append(users, n)
			}
		}
		got := biasSum(where, users)
		if (got != nil) != c.found || got != nil && got.Op() != tensor.OpSum {
			t.Errorf("%s: biasSum = %v, want found %v", c.layer.name, got, c.found)
		}
	}
}

// TestReluPoolGradStepThreads checks the fused ReLU + pool backward step, with and
// without the planes' sums of the bias gradient, against one serial pass at 1, 2, 3
// and 16 threads (blocks of rows, or of whole planes with the sums), bit for bit, on
// cnn28's second layer (odd planes) and a layer of few planes. The thread count follows
// GOMAXPROCS unless GML_THREADS fixes it.
func TestReluPoolGradStepThreads(t *testing.T) {
	if os.Getenv("GML_THREADS") != "" {
		t.Skip("GML_THREADS fixes the thread count")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, x := range []tensor.Shape{{5, 64, 11, 11}, {1, 3, 150, 66}, {7, 3, 26, 26}} {
		y := tensor.Shape{x[0], x[1], x[2] / 2, x[3] / 2}
		p := newPooler(x, y, tensor.PoolAttr{Kernel: []int{2, 2}, Stride: []int{2, 2}, PadBegin: []int{0, 0}, PadEnd: []int{0, 0}})
		r := rand.New(rand.NewPCG(13, 14))
		z, dy := make([]float32, x.Size()), make([]float32, y.Size())
		for i := range z {
			z[i] = float32(r.NormFloat64())
		}
		for i := range dy {
			dy[i] = float32(r.NormFloat64())
		}
		want, wantSums := make([]float32, len(z)), make([]float64, p.planes)
		p.reluGradRows(z, dy, want, make([]byte, max(maskChunk, 3*p.w)), 0, p.planes*p.oh)
		vec.SumEach(wantSums, want, p.h*p.w)
		for _, threads := range []int{1, 2, 3, 16} {
			runtime.GOMAXPROCS(threads)
			for _, withSums := range []bool{false, true} {
				got := make([]float32, len(z))
				var sums []float64
				if withSums {
					sums = make([]float64, p.planes)
				}
				if err := maxPoolReluGradStep(p, z, dy, got, sums)(); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v, %d threads, sums %v: element %d = %v, want %v", x, threads, withSums, i, got[i], want[i])
					}
				}
				if withSums && !slices.Equal(sums, wantSums) {
					t.Fatalf("%v, %d threads: plane sums %v, want %v", x, threads, sums, wantSums)
				}
			}
		}
	}
}
