package gpu

import (
	"github.com/gml-dev/gml/tensor"
)

// Products with a quantised operand and the decoding of quantised tensors, in
// matmul_quant.comp. The weights stay in their blocks in device memory; the shader
// decodes each unit of 32 weights into registers and multiplies it with up to
// quantRows rows of the f32 operand, so a matrix-vector product reads the weights once
// and a batch of 32 reads them four times (from cache, mostly). Layouts the shader does
// not read directly (a transposed x in x @ wᵀ; an untransposed y of several columns in
// w @ y) are left to the CPU backend, where they are a transposition.

// quantRows is the number of rows of F one workgroup multiplies (the shader's CR).
const quantRows = 8

// quantGroup is the workgroup size of the product (a power of two: it reduces by
// halving).
const quantGroup = 64

// quantFormats numbers tensor's quantised dtypes as the shader's FMT constant does.
var quantFormats = map[tensor.DType]uint32{tensor.Q4_0: 0, tensor.Q8_0: 1, tensor.Q4_K: 2}

// quantProduct is a product's view as D = Q · Fᵀ: which input is Q, its rows and
// weights per row, the rows of F per batch entry, the batch and the strides.
type quantProduct struct {
	q, f             int // input indexes
	rows, k, fRows   int
	batch            int
	rs, cs, sF, sO   int
	rowBytes, format uint32
}

// planQuantMatMul maps a MatMul node with a quantised operand; ok is false for the
// layouts the shader does not read.
func planQuantMatMul(n *tensor.Node) (quantProduct, bool) {
	at := n.Attr().(tensor.MatMulAttr)
	a, b := n.Input(0), n.Input(1)
	cs := n.Shape()
	mm, nn := cs[len(cs)-2], cs[len(cs)-1]
	if b.DType().IsQuantized() {
		if at.TransA {
			return quantProduct{}, false
		}
		k := b.Shape()[1]
		return quantProduct{q: 1, f: 0, rows: nn, k: k, fRows: cs.Size() / max(nn, 1), batch: 1,
			rs: 1, cs: nn, rowBytes: uint32(b.DType().Bytes(k)), format: quantFormats[b.DType()]}, true
	}
	k := a.Shape()[1]
	if !at.TransB && nn > 1 {
		return quantProduct{}, false
	}
	batch := cs.Size() / max(mm*nn, 1)
	sF := k * nn
	if n.Input(1).Shape().Size() == k*nn {
		sF = 0 // y broadcasts over the batch
	}
	return quantProduct{q: 0, f: 1, rows: mm, k: k, fRows: nn, batch: batch,
		rs: nn, cs: 1, sF: sF, sO: mm * nn, rowBytes: uint32(a.DType().Bytes(k)), format: quantFormats[a.DType()]}, true
}

func quantMatMulSupported(n *tensor.Node) bool {
	_, ok := planQuantMatMul(n)
	return ok && wordSized(n)
}

func recordQuantMatMul(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	p, _ := planQuantMatMul(n)
	if n.Shape().Size() == 0 {
		return nil
	}
	if p.k == 0 {
		return r.zero("matmul_quant", 4, n.Shape().Size(), out)
	}
	k, err := r.d.Kernel("matmul_quant", 3, quantGroup, p.format, quantRows, 0)
	if err != nil {
		return err
	}
	w := []uint32{f32Off(in[p.q]), f32Off(in[p.f]), f32Off(out), uint32(p.rows), uint32(p.k), uint32(p.fRows),
		uint32(p.rs), uint32(p.cs), uint32(p.sF), uint32(p.sO), p.rowBytes}
	groups := [3]uint32{uint32(min(p.rows, maxGroups)), ceilDiv(p.fRows, quantRows), uint32(p.batch)}
	return r.Dispatch(k, groups, words(w), "matmul_quant", In(in[p.q]), In(in[p.f]), Out(out))
}

// recordDequantize decodes a quantised tensor to f32 (a Cast).
func recordDequantize(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	x := n.Input(0)
	shape := x.Shape()
	kk := shape[len(shape)-1]
	rows := shape.Size() / max(kk, 1)
	if rows*kk == 0 {
		return nil
	}
	k, err := r.d.Kernel("matmul_quant", 3, groupSize, quantFormats[x.DType()], quantRows, 1)
	if err != nil {
		return err
	}
	w := []uint32{f32Off(in[0]), f32Off(out), f32Off(out), uint32(rows), uint32(kk), 0, 0, 0, 0, 0, uint32(x.DType().Bytes(kk))}
	return r.Dispatch(k, gridFor(rows*kk/32), words(w), "dequantize", In(in[0]), In(in[0]), Out(out))
}
