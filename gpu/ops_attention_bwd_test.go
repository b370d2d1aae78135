package gpu

import (
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestBackendAttentionGrad checks the three flash-attention backward passes (statistics,
// ∂q, ∂k|∂v) against the CPU on the forward test's cases.
func TestBackendAttentionGrad(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range attentionCases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		q, k, v, mask, at := c.inputs(g, r, feeds)
		o := tensor.Attention(q, k, v, mask, at)
		gy := randInput(g, r, feeds, -1, 1, o.Shape()...)
		dq, dk, dv := tensor.AttentionGrad(q, k, v, mask, o, gy, at)
		compareWithCPU(t, be, c.name, 1e-5, []*tensor.Node{dq.Input(4), dq, dk.Input(0), dk, dv}, feeds)
	}
}
