package backendtest

import "github.com/gml-dev/gml/tensor"

// The reference of MatMul: op(A)·op(B) over broadcast batch axes, in float64 whatever
// Precision allows (a backend that rounds its operands answers within its tolerance).

func init() {
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.MatMulAttr)
		a, b := in[0], in[1]
		out := newArray(n.DType(), n.Shape())
		r := len(out.Shape)
		m, nn := out.Shape[r-2], out.Shape[r-1]
		ra, rb := len(a.Shape), len(b.Shape)
		ar, ac := a.Shape[ra-2], a.Shape[ra-1]
		br, bc := b.Shape[rb-2], b.Shape[rb-1]
		k := ac
		if at.TransA {
			k = ar
		}
		// Element strides of op(A) and op(B) along their rows and columns.
		ai, ap := ac, 1
		if at.TransA {
			ai, ap = 1, ac
		}
		bp, bj := bc, 1
		if at.TransB {
			bp, bj = 1, bc
		}
		batch := out.Shape[:r-2]
		for bi := 0; bi < batch.Size(); bi++ {
			c := unflat(bi, batch)
			aBase := broadcastIndex(c, a.Shape[:ra-2], batch) * ar * ac
			bBase := broadcastIndex(c, b.Shape[:rb-2], batch) * br * bc
			for i := 0; i < m; i++ {
				for j := 0; j < nn; j++ {
					s := 0.0
					for p := 0; p < k; p++ {
						s += a.Data[aBase+i*ai+p*ap] * b.Data[bBase+p*bp+j*bj]
					}
					out.Data[(bi*m+i)*nn+j] = s
				}
			}
		}
		return out
	}, tensor.OpMatMul)
}
