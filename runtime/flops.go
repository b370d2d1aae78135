package runtime

import "github.com/gml-dev/gml/tensor"

// FLOPs estimates the floating-point operations node n performs, for the profiler's
// GFLOP/s column: 2·M·N·K per matmul, 2·(output elements)·(kernel volume)·(in channels
// per group) per convolution, 2·Tq·Tk·(D+Dv) per attention head (and per pass of its
// fused gradient, which recomputes the scores), and one per output element for
// everything else.
func FLOPs(n *tensor.Node) float64 {
	out := float64(n.Shape().Size())
	switch n.Op() {
	case tensor.OpMatMul:
		a := n.Input(0).Shape()
		k := a[len(a)-1]
		if at, _ := n.Attr().(tensor.MatMulAttr); at.TransA {
			k = a[len(a)-2]
		}
		return 2 * out * float64(k)
	case tensor.OpAttention:
		// Two matmuls per (batch, head): q kᵀ (Tq·Tk·D) and p v (Tq·Tk·Dv).
		bh, tq, tk, d, dv := attentionDims(n, n.Attr().(tensor.AttentionAttr).Layout)
		return 2 * bh * tq * tk * (d + dv)
	case tensor.OpAttentionGrad:
		// Every pass recomputes q kᵀ; the ∂q pass adds dO vᵀ and dS k, the ∂k|∂v pass
		// dO vᵀ, pᵀ dO and dSᵀ q. Input 2 is o (statistics pass) or v: Dv either way.
		at := n.Attr().(tensor.AttentionGradAttr)
		bh, tq, tk, d, dv := attentionDims(n, at.Layout)
		per := d
		switch at.Output {
		case tensor.AttentionGradQ:
			per = 2*d + dv
		case tensor.AttentionGradKV:
			per = 2*d + 2*dv
		}
		return 2 * bh * tq * tk * per
	case tensor.OpConv, tensor.OpConvTranspose, tensor.OpConvFilterGrad:
		// Weight shape (O, I/groups, k...): every output element of a forward conv costs
		// 2·(I/groups)·k... ; the transposed and filter-gradient convs do the same work
		// as the forward conv they differentiate.
		var w tensor.Shape
		switch n.Op() {
		case tensor.OpConvFilterGrad:
			w = n.Attr().(tensor.ConvAttr).FilterShape
			out = float64(n.Input(1).Shape().Size()) // gradient of the forward output
		case tensor.OpConvTranspose:
			w = n.Input(1).Shape()
			out = float64(n.Input(0).Shape().Size()) // the forward conv's output
		default:
			w = n.Input(1).Shape()
		}
		kvol := 1
		for _, d := range w[1:] {
			kvol *= d
		}
		return 2 * out * float64(kvol)
	}
	return out
}

// attentionDims returns the (batch, head) pairs, the query and key lengths and the
// feature sizes of q and v (input 2) of an attention node in its layout.
func attentionDims(n *tensor.Node, l tensor.AttentionLayout) (bh, tq, tk, d, dv float64) {
	lead, _, q, dq := l.Split(n.Input(0).Shape())
	_, _, k, _ := l.Split(n.Input(1).Shape())
	_, _, _, v := l.Split(n.Input(2).Shape())
	return float64(lead.Size()), float64(q), float64(k), float64(dq), float64(v)
}
