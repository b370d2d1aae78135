package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/gml-dev/gml/tensor"
)

// TestEveryOpHasAKernel checks that the CPU backend, everyone's fallback, can compute
// every op: a kernel for at least F32 (or the op's only input type) or, for Reshape, the
// aliasing Prepare handles itself.
func TestEveryOpHasAKernel(t *testing.T) {
	for op := tensor.Op(1); op < tensor.Op(tensor.NumOps); op++ {
		if op.Kind() == tensor.KindSource || op == tensor.OpReshape {
			continue
		}
		if len(kernels[op]) == 0 {
			t.Errorf("no CPU kernel for %v", op)
		}
	}
}

// TestRunRecoversKernelPanics checks that a failing kernel becomes an error naming the
// node rather than a crash.
func TestRunRecoversKernelPanics(t *testing.T) {
	g := tensor.NewGraph()
	n := tensor.Neg(g.Input("x", tensor.F32, 2))
	p := &program{nodes: []*tensor.Node{n}, steps: []func() error{func() error { panic("boom") }}}
	err := p.Run(nil)
	if err == nil || err.Error() != "cpu: "+n.String()+": kernel panicked: boom" {
		t.Errorf("Run = %v", err)
	}
}

func TestAlignedBytes(t *testing.T) {
	for _, n := range []int{1, 3, 64, 100, 4097} {
		for range 8 {
			b := alignedBytes(n)
			if len(b) != n || uintptr(unsafe.Pointer(&b[0]))%alignment != 0 {
				t.Fatalf("alignedBytes(%d): length %d at %p", n, len(b), &b[0])
			}
		}
	}
}

// TestArgmax2x2 checks the branch-free 2×2 windows of the max pool gradient against
// argmax on values with many ties and NaNs: both take the first largest, and a NaN
// wins only as a window's first element.
func TestArgmax2x2(t *testing.T) {
	x := tensor.Shape{1, 1, 6, 8}
	p := newPooler(x, tensor.Shape{1, 1, 3, 4}, tensor.PoolAttr{Kernel: []int{2, 2}, Stride: []int{2, 2}, PadBegin: []int{0, 0}, PadEnd: []int{0, 0}})
	if !p.pairs {
		t.Fatal("2x2 windows of stride 2 not recognised as pairs")
	}
	r := rand.New(rand.NewPCG(3, 4))
	plane := make([]float32, x.Size())
	for trial := range 200 {
		for i := range plane {
			plane[i] = float32(r.IntN(3))
			if r.IntN(10) == 0 {
				plane[i] = float32(math.NaN())
			}
		}
		got, want := make([]float32, len(plane)), make([]float32, len(plane))
		for oy, row := range p.rows {
			g := make([]float32, p.ow)
			for ox := range g {
				g[ox] = float32(1 + oy*p.ow + ox)
				want[p.argmax(plane, row, p.cols[ox])] += g[ox]
			}
			p.argmax2x2(plane, got, g, row.lo)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: plane %v: got %v, want %v", trial, plane, got, want)
		}
	}
}
