package cpu

import (
	"fmt"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// BenchmarkAttention16 times the transformer bench's attention (batch 32, 8 heads,
// T = 64, 16 features, causal, (B, T, H, D) operands): the forward alone and the
// forward with the fused backward, by the 16-feature rows and by tiles.
func BenchmarkAttention16(b *testing.B) {
	for _, grad := range []bool{false, true} {
		for _, rows := range []bool{true, false} {
			if rows && !attn16 {
				continue
			}
			b.Run(fmt.Sprintf("grad=%v/rows=%v", grad, rows), func(b *testing.B) {
				defer func(old bool) { attn16 = old }(attn16)
				attn16 = rows
				g := tensor.NewGraph()
				shape := []int{32, 64, 8, 16}
				q, k, v := g.Input("q", tensor.F32, shape...), g.Input("k", tensor.F32, shape...), g.Input("v", tensor.F32, shape...)
				at := tensor.AttentionAttr{Causal: true, Layout: tensor.AttentionBTHD}
				outs := []*tensor.Node{tensor.Attention(q, k, v, nil, at)}
				if grad {
					gy := g.Input("gy", tensor.F32, shape...)
					dq, dk, dv := tensor.AttentionGrad(q, k, v, nil, outs[0], gy, at)
					outs = append(outs, dq, dk, dv)
				}
				benchProgram(b, graphOf(outs...), true, outs...)
			})
		}
	}
}
