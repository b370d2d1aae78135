package cpu

import (
	"testing"

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
