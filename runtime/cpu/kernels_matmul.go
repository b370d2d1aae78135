package cpu

import (
	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/tensor"
)

// MatMul through package gemm. Batch axes broadcast: they are walked like an elementwise
// op over the batch shape (broadcast.go), with whole matrices as elements, so each run
// of batch items with regular strides becomes one SgemmStrided call (a stride of 0
// reuses a broadcast operand). A batched left operand times an unbatched right one is
// folded into a single tall product.

func init() {
	register(tensor.OpMatMul, floatTypes, matMulFactory)
}

func matMulFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	if n.Input(1).DType().IsQuantized() {
		return quantMatMulFactory(n, out, in)
	}
	at := n.Attr().(tensor.MatMulAttr)
	as, bs, cs := n.Input(0).Shape(), n.Input(1).Shape(), n.Shape()
	ra, rb, rc := len(as), len(bs), len(cs)
	am, ak := as[ra-2], as[ra-1]
	bk, bn := bs[rb-2], bs[rb-1]
	m, nn := cs[rc-2], cs[rc-1]
	k := ak
	if at.TransA {
		k = am
	}
	a, b, c := f32s(in[0]), f32s(in[1]), f32s(out)
	if m == 0 || nn == 0 || cs.Size() == 0 {
		return func() error { return nil }, nil
	}
	if k == 0 {
		return func() error { clear(c); return nil }, nil
	}
	if g, ok := oneProduct(n); ok {
		return func() error {
			return gemm.Sgemm(g.transA, g.transB, g.m, g.n, g.k, 1, a, g.lda, b, g.ldb, 0, c, g.n)
		}, nil
	}
	batch := cs[:rc-2]
	aBatch, bBatch := as[:ra-2], bs[:rb-2]
	matA, matB, matC := am*ak, bk*bn, m*nn
	p, err := newPlan(batch, []tensor.Shape{aBatch, bBatch})
	if err != nil {
		return nil, err
	}
	sa, sb := p.ist[0]*matA, p.ist[1]*matB
	var runErr error
	p.row = func(o int, off [3]int, cnt int) {
		if runErr != nil {
			return
		}
		runErr = gemm.SgemmStrided(at.TransA, at.TransB, m, nn, k, 1,
			a[off[0]*matA:], ak, sa, b[off[1]*matB:], bn, sb, 0, c[o*matC:], nn, matC, cnt)
	}
	return func() error {
		runErr = nil
		// Rows of batch items run one after another: SgemmStrided parallelises inside.
		if p.split {
			p.body(0, p.inner)
		} else {
			p.walkRows(0, p.rows)
		}
		return runErr
	}, nil
}

// product is a MatMul node's work as one m×n×k Sgemm.
type product struct {
	transA, transB bool
	m, n, k        int
	lda, ldb       int
}

// oneProduct reports whether MatMul node n runs as one Sgemm, and which: without batch
// axes (or batch axes of size 1), or a batched left operand times an unbatched right one,
// folded into one tall product. The node's sizes are not 0.
func oneProduct(n *tensor.Node) (product, bool) {
	at := n.Attr().(tensor.MatMulAttr)
	as, bs, cs := n.Input(0).Shape(), n.Input(1).Shape(), n.Shape()
	ra, rb, rc := len(as), len(bs), len(cs)
	g := product{transA: at.TransA, transB: at.TransB, m: cs[rc-2], n: cs[rc-1], k: as[ra-1], lda: as[ra-1], ldb: bs[rb-1]}
	if at.TransA {
		g.k = as[ra-2]
	}
	batch, aBatch, bBatch := cs[:rc-2], as[:ra-2], bs[:rb-2]
	switch {
	case bBatch.Size() == 1 && aBatch.Equal(batch) && !at.TransA:
		g.m *= batch.Size()
	case batch.Size() == 1:
	default:
		return product{}, false
	}
	return g, true
}
