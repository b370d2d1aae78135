package gpu

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// MatMul nodes on the products of matmul.go: f32 on the tiled shaders, f16 and bf16
// (and f32 that allows them) on cooperative matrices where the device has them.

func init() {
	ops[tensor.OpMatMul] = opImpl{typed: true, record: recordMatMul, supports: matMulSupported}
}

// matMulPlan maps a MatMul node onto one (batched) product: batch axes of each operand
// must either equal the output's or be all ones (broadcast). A batched left operand
// times an unbatched right one becomes a single tall product.
func matMulPlan(n *tensor.Node) (MatMul, bool) {
	at := n.Attr().(tensor.MatMulAttr)
	as, bs, cs := n.Input(0).Shape(), n.Input(1).Shape(), n.Shape()
	ra, rb, rc := len(as), len(bs), len(cs)
	if ra < 2 || rb < 2 || rc < 2 {
		return MatMul{}, false
	}
	m, nn := cs[rc-2], cs[rc-1]
	k := as[ra-1]
	if at.TransA {
		k = as[ra-2]
	}
	batch, aB, bB := cs[:rc-2].Size(), as[:ra-2].Size(), bs[:rb-2].Size()
	p := MatMul{M: m, N: nn, K: k, Batch: batch, TransA: at.TransA, TransB: at.TransB}
	if bB == 1 && aB == batch && !at.TransA {
		p.M, p.Batch = m*batch, 1
		return p, true
	}
	if (aB != batch && aB != 1) || (bB != batch && bB != 1) {
		return MatMul{}, false
	}
	p.BroadcastA, p.BroadcastB = aB == 1 && batch > 1, bB == 1 && batch > 1
	return p, true
}

// matMulSupported accepts every product matMulPlan maps: f32 ones (of reduced
// precision on cooperative matrices where the device has them, else in f32), and
// f16/bf16 ones, on cooperative matrices where the device has them for the type and
// shape (halfMatMulShader), else widened to f32.
func matMulSupported(d *Device, n *tensor.Node) bool {
	if n.Input(0).DType().IsQuantized() || n.Input(1).DType().IsQuantized() {
		return quantMatMulSupported(n)
	}
	_, ok := matMulPlan(n)
	dt := n.DType()
	return ok && n.Input(0).DType() == dt && n.Input(1).DType() == dt && (dt == tensor.F32 || dt == tensor.F16 || dt == tensor.BF16)
}

// denseHalf is p for 16-bit inputs once transposed operands have been copied out
// untransposed (halfOperands): the cooperative-matrix shaders read row-major operands
// only.
func denseHalf(p MatMul, dt tensor.DType) MatMul {
	p.Input = inputType(dt)
	p.TransA, p.TransB = false, false
	p.LDA, p.LDB, p.LDC = p.K, p.N, p.N
	return p
}

// inputType is the matrix-product input type of a tensor dtype (F32 for any other).
func inputType(dt tensor.DType) DType {
	switch dt {
	case tensor.F16:
		return F16
	case tensor.BF16:
		return BF16
	}
	return F32
}

// halfMatMulShader returns the shader override a dense 16-bit product needs: none when
// the automatic choice can run it (K and N multiples of 8), else the workgroup-scope
// shader, whose tensor loads take any size. It fails where neither can.
func halfMatMulShader(d *Device, p MatMul) (string, error) {
	if _, err := coopShader(d.Info, p.Input); err != nil {
		return "", err
	}
	if p.K%8 == 0 && p.N%8 == 0 {
		return "", nil
	}
	p.Shader = "matmul_cm2_" + p.Input.String() + "_" + coopMat2Tile
	push := mmPush{lda: uint32(p.LDA), ldb: uint32(p.LDB), sA: uint32(p.M * p.K), sB: uint32(p.K * p.N), sC: uint32(p.M * p.N)}
	if p.BroadcastA {
		push.sA = 0
	}
	if p.BroadcastB {
		push.sB = 0
	}
	if _, err := coopMat2Shader(d.Info, p, push); err != nil {
		return "", fmt.Errorf("%w: %s matmul with K=%d, N=%d (not multiples of 8) needs VK_NV_cooperative_matrix2: %v", ErrUnsupported, p.Input, p.K, p.N, err)
	}
	return p.Shader, nil
}

// halfOperands returns A and B of p as dense, untransposed matrices of type half for
// the cooperative-matrix shaders: f32 operands (mixed precision) are rounded into
// scratch first, and transposed ones are copied out untransposed.
func halfOperands(r *Recorder, n *tensor.Node, p MatMul, in []*Buffer, half tensor.DType) ([2]*Buffer, error) {
	ops := [2]*Buffer{in[0], in[1]}
	for i, trans := range []bool{p.TransA, p.TransB} {
		src := n.Input(i).Shape()
		size := src.Size()
		if from := n.Input(i).DType(); from != half {
			t, err := r.scratchBuffer(uint64(2 * size))
			if err != nil {
				return ops, err
			}
			if err := r.cast("matmul_round", from, half, size, ops[i], t); err != nil {
				return ops, err
			}
			ops[i] = t
		}
		if !trans {
			continue
		}
		// Stored [count, cols, rows] for the product's [count, rows, cols].
		rank := len(src)
		t, err := r.transposed(2, src[:rank-2].Size(), src[rank-2], src[rank-1], ops[i])
		if err != nil {
			return ops, err
		}
		ops[i] = t
	}
	return ops, nil
}

// transposed copies count [rows, cols] matrices of esize-byte elements at src into
// scratch as [cols, rows] matrices, and returns the scratch buffer.
func (r *Recorder) transposed(esize, count, rows, cols int, src *Buffer) (*Buffer, error) {
	size := count * rows * cols
	t, err := r.scratchBuffer(uint64(esize * size))
	if err != nil {
		return nil, err
	}
	plan := layoutPlan{axes: []layoutAxis{
		{dim: count, stride: rows * cols, inDim: count},
		{dim: cols, stride: 1, inDim: cols},
		{dim: rows, stride: cols, inDim: rows},
	}}
	return t, r.layoutCopy("matmul_transpose", plan, esize, size, 0, size, src, t)
}

// recordHalfMatMul runs a product on cooperative matrices of type half: an f16/bf16
// node, whose f32 accumulation is cast to the node's type from scratch, or an f32 node
// of that precision (MatMulAttr.Precision), which is written directly.
func recordHalfMatMul(r *Recorder, n *tensor.Node, p MatMul, out *Buffer, in []*Buffer, half tensor.DType) error {
	q := denseHalf(p, half)
	shader, err := halfMatMulShader(r.d, q)
	if err != nil {
		return err
	}
	ops, err := halfOperands(r, n, p, in, half)
	if err != nil {
		return err
	}
	q.A, q.B, q.Label, q.Shader = ops[0], ops[1], "matmul", shader
	return recordProductInto(r, n, q, out)
}

// recordProductInto records the product q of node n with its result in out: written
// directly when n is f32, else accumulated in f32 scratch and rounded once to n's type.
func recordProductInto(r *Recorder, n *tensor.Node, q MatMul, out *Buffer) error {
	if n.DType() == tensor.F32 {
		q.C = out
		return r.MatMul(q)
	}
	acc, err := r.scratchBuffer(uint64(4 * n.Shape().Size()))
	if err != nil {
		return err
	}
	q.C = acc
	if err := r.MatMul(q); err != nil {
		return err
	}
	return r.cast("matmul", tensor.F32, n.DType(), n.Shape().Size(), acc, out)
}

// minRoundedWork is the least number of multiply-adds (M·N·K over the batch) for which
// an f32 product that allows half precision is rounded: smaller products are computed
// in f32, since the two rounding passes then cost more than the faster product saves.
// On the H200, rounding every product made a step of the transformer benchmark (products
// of 2048x128x128 and 2048x512x128) 25% slower and the 784-128-10 MLP 30% slower, while
// the 1024x4096x4096 products of mlp4096x4_b1024 ran 2.9x faster.
var minRoundedWork = 1 << 28

// mixedPrecision returns the type of the cooperative matrices a product runs on: the
// node's own 16-bit type, or for an f32 node the precision it allows when the product
// is big enough to gain from it. It is F32 when the product runs on the f32 shader:
// f32 products, and products the device has no cooperative matrices for.
func mixedPrecision(d *Device, n *tensor.Node, p MatMul) tensor.DType {
	half := n.DType()
	if half == tensor.F32 {
		half = n.Attr().(tensor.MatMulAttr).Precision
		if half == tensor.F32 || p.Batch*p.M*p.N*p.K < minRoundedWork {
			return tensor.F32
		}
	}
	if _, err := halfMatMulShader(d, denseHalf(p, half)); err != nil {
		return tensor.F32
	}
	return half
}

// recordWidenedMatMul runs an f16/bf16 product that no cooperative-matrix shader takes
// on the f32 shader: the operands are widened into scratch (exactly), and the f32
// result is rounded once to the node's type, as the cooperative shaders' f32
// accumulation is.
func recordWidenedMatMul(r *Recorder, n *tensor.Node, p MatMul, out *Buffer, in []*Buffer) error {
	var ops [2]*Buffer
	for i := range ops {
		x := n.Input(i)
		size := x.Shape().Size()
		t, err := r.scratchBuffer(uint64(4 * size))
		if err != nil {
			return err
		}
		if err := r.cast("matmul_widen", x.DType(), tensor.F32, size, in[i], t); err != nil {
			return err
		}
		ops[i] = t
	}
	p.A, p.B, p.Label = ops[0], ops[1], "matmul"
	return recordProductInto(r, n, p, out)
}

func recordMatMul(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	if n.Input(0).DType().IsQuantized() || n.Input(1).DType().IsQuantized() {
		return recordQuantMatMul(r, n, out, in)
	}
	p, _ := matMulPlan(n)
	if n.Shape().Size() == 0 {
		return nil
	}
	if p.K == 0 {
		return r.zero("matmul", n.DType().Size(), n.Shape().Size(), out)
	}
	if ok, err := recordFastMatMul(r, n, p, out, in); ok || err != nil {
		return err
	}
	return recordMatMulShaders(r, n, p, out, in)
}

// recordMatMulShaders records the product p of node n on the shaders.
func recordMatMulShaders(r *Recorder, n *tensor.Node, p MatMul, out *Buffer, in []*Buffer) error {
	if half := mixedPrecision(r.d, n, p); half != tensor.F32 {
		return recordHalfMatMul(r, n, p, out, in, half)
	}
	if n.DType() != tensor.F32 {
		return recordWidenedMatMul(r, n, p, out, in)
	}
	p.A, p.B, p.C, p.Label = in[0], in[1], out, "matmul"
	if transposeFirst(p) {
		t, err := r.transposed(4, 1, p.M, p.K, p.A)
		if err != nil {
			return err
		}
		p.A, p.TransA = t, true
	}
	return r.MatMul(p)
}

// transposeFirst reports whether an f32 product of untransposed operands runs faster
// with a transposed copy of A: the f32 shader multiplies 10% faster with A transposed
// (41.8 against 37.7 TFLOP/s at n=4096 on the H200; gpu/PERF.md items 12 and 14),
// which outweighs copying A once N is large (the copy reads and writes A once; the
// product reads it N/128 times).
func transposeFirst(p MatMul) bool {
	return !p.TransA && !p.TransB && p.Batch == 1 && p.N >= 1024 && p.M >= 1024 && p.K >= 256
}
