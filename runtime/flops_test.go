package runtime

import (
	"testing"

	"github.com/gml-dev/gml/tensor"
)

func TestFLOPs(t *testing.T) {
	g := tensor.NewGraph()
	a := g.Input("a", tensor.F32, 3, 4, 5)
	b := g.Input("b", tensor.F32, 5, 6)
	x := g.Input("x", tensor.F32, 2, 3, 8, 8)
	w := g.Input("w", tensor.F32, 4, 3, 3, 3)
	q := g.Input("q", tensor.F32, 2, 4, 7, 16)
	k := g.Input("k", tensor.F32, 2, 4, 9, 16)
	v := g.Input("v", tensor.F32, 2, 4, 9, 8)
	gy := g.Input("gy", tensor.F32, 2, 4, 7, 8)
	empty := g.Input("empty", tensor.F32, 2, 4, 0, 16)
	dq, dk, _ := tensor.AttentionGrad(q, k, v, nil, tensor.Attention(q, k, v, nil, tensor.AttentionAttr{}), gy, tensor.AttentionAttr{})
	// The same attention in the AttentionBTHD layout: (B, T, H, D) operands.
	rows := tensor.AttentionAttr{Layout: tensor.AttentionBTHD}
	qr, kr, vr := g.Input("qr", tensor.F32, 2, 7, 4, 16), g.Input("kr", tensor.F32, 2, 9, 4, 16), g.Input("vr", tensor.F32, 2, 9, 4, 8)
	dqr, dkr, _ := tensor.AttentionGrad(qr, kr, vr, nil, tensor.Attention(qr, kr, vr, nil, rows), g.Input("gyr", tensor.F32, 2, 7, 4, 8), rows)
	conv := tensor.Conv(x, w, tensor.ConvAttr{Stride: []int{1, 1}, Dilation: []int{1, 1}, PadBegin: []int{0, 0}, PadEnd: []int{0, 0}, Groups: 1})
	cases := []struct {
		name string
		n    *tensor.Node
		want float64
	}{
		{"batched matmul", tensor.MatMul(a, b), 2 * 3 * 4 * 6 * 5},
		{"transposed matmul", tensor.MatMulT(b, b, true, false), 2 * 6 * 6 * 5},
		{"conv", conv, 2 * (2 * 4 * 6 * 6) * (3 * 3 * 3)},
		{"attention", tensor.Attention(q, k, v, nil, tensor.AttentionAttr{}), 2 * 8 * 7 * 9 * (16 + 8)},
		{"attention without queries", tensor.Attention(empty, k, v, nil, tensor.AttentionAttr{}), 0},
		{"attention statistics", dq.Input(4), 2 * 8 * 7 * 9 * 16},
		{"attention dq", dq, 2 * 8 * 7 * 9 * (2*16 + 8)},
		{"attention dk|dv", dk.Input(0), 2 * 8 * 7 * 9 * (2*16 + 2*8)},
		{"attention bthd", tensor.Attention(qr, kr, vr, nil, rows), 2 * 8 * 7 * 9 * (16 + 8)},
		{"attention bthd dq", dqr, 2 * 8 * 7 * 9 * (2*16 + 8)},
		{"attention bthd dk|dv", dkr.Input(0), 2 * 8 * 7 * 9 * (2*16 + 2*8)},
		{"elementwise", tensor.Relu(x), 2 * 3 * 8 * 8},
	}
	for _, c := range cases {
		if got := FLOPs(c.n); got != c.want {
			t.Errorf("%s: FLOPs = %g, want %g", c.name, got, c.want)
		}
	}
}
