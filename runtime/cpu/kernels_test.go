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
