package cpu

import (
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
