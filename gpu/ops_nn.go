package gpu

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/tensor"
)

func init() {
	ops[tensor.OpMatMul] = opImpl{typed: true, record: recordMatMul, supports: matMulSupported}
	for op := tensor.Op(1); int(op) < tensor.NumOps; op++ {
		if op.GPU().Shader == "reduce" {
			ops[op] = opImpl{record: reduceRecorder(opCode[op]), supports: func(_ *Device, n *tensor.Node) bool { return planReduce(n).feasible }}
		}
	}
	softmaxOK := func(_ *Device, n *tensor.Node) bool { return planSoftmax(n).feasible }
	ops[tensor.OpSoftmax] = opImpl{record: recordSoftmax, supports: softmaxOK}
	ops[tensor.OpLogSoftmax] = opImpl{record: recordSoftmax, supports: softmaxOK}
	normOK := func(_ *Device, n *tensor.Node) bool { _, _, ok := normRows(n); return ok }
	ops[tensor.OpLayerNorm] = opImpl{record: recordNorm, supports: normOK}
	ops[tensor.OpRMSNorm] = opImpl{record: recordNorm, supports: normOK}
	ops[tensor.OpSGDUpdate] = opImpl{record: recordOptim}
	ops[tensor.OpAdamUpdate] = opImpl{record: recordOptim}
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
	p, _ := matMulPlan(n)
	if n.Shape().Size() == 0 {
		return nil
	}
	if p.K == 0 {
		return r.zero("matmul", n.DType().Size(), n.Shape().Size(), out)
	}
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

// reducePlan describes a reduction: which reduce.comp mode runs it and the view it
// needs. Axes of extent 1 are dropped and neighbouring axes of the same kind (kept or
// reduced) merged; one run of reduced axes is [outer, red, inner] (rows when inner is
// 1, columns otherwise); interleaved runs use the general mode with up to four kept and
// four reduced groups.
type reducePlan struct {
	mode              uint32
	outer, red, inner int
	kd, ks, rd, rs    [4]uint32
	keptRuns, redRuns int
	feasible          bool
}

func planReduce(n *tensor.Node) reducePlan {
	s := n.Input(0).Shape()
	axes := n.Attr().(tensor.ReduceAttr).Axes
	reduced := make([]bool, len(s))
	for _, a := range axes {
		reduced[a] = true
	}
	if len(axes) == 0 {
		for i := range reduced {
			reduced[i] = true
		}
	}
	type group struct {
		red         bool
		dim, stride int
	}
	var groups []group
	stride := 1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 1 {
			if k := len(groups) - 1; k >= 0 && groups[k].red == reduced[i] {
				groups[k].dim *= s[i]
			} else {
				groups = append(groups, group{reduced[i], s[i], stride})
			}
		}
		stride *= s[i]
	}
	p := reducePlan{outer: 1, red: 1, inner: 1, feasible: true}
	for i := range p.kd {
		p.kd[i], p.rd[i] = 1, 1
	}
	// groups run innermost first; fill the four slots of each kind right-aligned.
	for _, g := range groups {
		if g.red {
			p.red *= g.dim
			p.redRuns++
			if p.redRuns <= 4 {
				p.rd[4-p.redRuns], p.rs[4-p.redRuns] = uint32(g.dim), uint32(g.stride)
			}
		} else {
			p.outer *= g.dim
			p.keptRuns++
			if p.keptRuns <= 4 {
				p.kd[4-p.keptRuns], p.ks[4-p.keptRuns] = uint32(g.dim), uint32(g.stride)
			}
		}
	}
	switch {
	case p.redRuns <= 1 && (len(groups) == 0 || groups[0].red):
		p.mode = 0 // [kept..., red]: rows
	case p.redRuns == 1 && p.keptRuns <= 2:
		// [outer, red, inner]: columns, inner the innermost kept group.
		p.mode, p.inner = 1, groups[0].dim
		p.outer /= p.inner
	case p.redRuns <= 4 && p.keptRuns <= 4:
		p.mode = 2
	default:
		p.feasible = false
	}
	return p
}

// reduceView returns the [outer, red, inner] view of a reduction over one contiguous
// run of axes (size-1 axes are ignored when judging contiguity).
func reduceView(n *tensor.Node) (outer, red, inner int, ok bool) {
	p := planReduce(n)
	if !p.feasible || p.mode == 2 {
		return 0, 0, 0, false
	}
	return p.outer, p.red, p.inner, true
}

func reduceRecorder(code uint32) func(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	return func(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
		p := planReduce(n)
		if p.outer*p.inner == 0 {
			return nil
		}
		if p.mode == 1 {
			return r.reduceColumns(code, p.outer, p.red, p.inner, in[0], out, n.Op().String())
		}
		k, err := r.d.Kernel("reduce", 2, groupSize, code, p.mode)
		if err != nil {
			return err
		}
		w := []uint32{uint32(p.outer), uint32(p.red), uint32(p.inner), f32Off(in[0]), f32Off(out)}
		for _, a := range [][4]uint32{p.kd, p.ks, p.rd, p.rs} {
			w = append(w, a[:]...)
		}
		w = append(w, uint32(p.red), uint32(p.red))
		return r.Dispatch(k, rowGrid(p.outer), words(w), n.Op().String(), In(in[0]), Out(out))
	}
}

// reduceColumns records the reduction of [outer, red, inner] f32 values at src over red
// into [outer, inner] at dst (reduce.comp's MODE 1). Long columns with few workgroups
// are cut into chunks whose results a second pass combines, through scratch memory.
func (r *Recorder) reduceColumns(code uint32, outer, red, inner int, src, dst *Buffer, label string) error {
	k, err := r.d.Kernel("reduce", 2, groupSize, code, 1)
	if err != nil {
		return err
	}
	push := func(outer, red, inner int, from, to uint32, chunk, count int) []byte {
		w := make([]uint32, 5+16+2)
		w[0], w[1], w[2], w[3], w[4] = uint32(outer), uint32(red), uint32(inner), from, to
		w[21], w[22] = uint32(chunk), uint32(count)
		return words(w)
	}
	wgs := outer * ((inner + 31) / 32)
	chunks := 1
	if red >= 256 && wgs < 512 {
		chunks = min(64, red/128, (512+wgs-1)/wgs)
	}
	if chunks <= 1 {
		return r.Dispatch(k, rowGrid(wgs), push(outer, red, inner, f32Off(src), f32Off(dst), red, red), label, In(src), Out(dst))
	}
	chunk := (red + chunks - 1) / chunks
	chunks = (red + chunk - 1) / chunk
	scratch, err := r.scratchBuffer(uint64(4 * chunks * outer * inner))
	if err != nil {
		return err
	}
	groups := rowGrid(wgs)
	groups[2] = uint32(chunks)
	if err := r.Dispatch(k, groups, push(outer, red, inner, f32Off(src), f32Off(scratch), chunk, red), label, In(src), Out(scratch)); err != nil {
		return err
	}
	cols := outer * inner
	return r.Dispatch(k, rowGrid((cols+31)/32), push(1, chunks, cols, f32Off(scratch), f32Off(dst), chunks, red), label, In(scratch), Out(dst))
}

// rowGrid spreads one workgroup per row over x and y (each at most 65535).
func rowGrid(rows int) [3]uint32 {
	x := min(rows, maxGroups)
	return [3]uint32{uint32(max(x, 1)), uint32((rows + x - 1) / max(x, 1)), 1}
}

// softmaxPlan is the [outer, n, inner] view of a softmax and, with a mask, the mask's
// strides: along the axis, over the collapsed inner axes, and over up to four collapsed
// outer axes.
type softmaxPlan struct {
	outer, n, inner  int
	mstep, minner    int
	odims, ostr      [4]uint32
	masked, feasible bool
}

func planSoftmax(n *tensor.Node) softmaxPlan {
	s := n.Input(0).Shape()
	axis := n.Attr().(tensor.SoftmaxAttr).Axis
	if axis < 0 {
		axis += len(s)
	}
	if axis < 0 || axis >= len(s) || s[axis] == 0 {
		return softmaxPlan{}
	}
	p := softmaxPlan{outer: s[:axis].Size(), n: s[axis], inner: s[axis+1:].Size(), feasible: true}
	for i := range p.odims {
		p.odims[i] = 1
	}
	if len(n.Inputs()) == 1 {
		return p
	}
	p.masked = true
	st := axisStrides(s, n.Input(1).Shape())
	p.mstep = st[axis]
	// The inner axes must collapse to one stride: x is dense there, so the mask must be
	// dense (or broadcast) over them as one block.
	var innerDims, innerSt []int
	for j := axis + 1; j < len(s); j++ {
		if s[j] != 1 {
			innerDims, innerSt = append(innerDims, s[j]), append(innerSt, st[j])
		}
	}
	for j := 0; j+1 < len(innerDims); j++ {
		if innerSt[j] != innerSt[j+1]*innerDims[j+1] {
			p.feasible = false
		}
	}
	if len(innerSt) > 0 {
		p.minner = innerSt[len(innerSt)-1]
	}
	var dims, strides []int
	for j := 0; j < axis; j++ {
		if s[j] == 1 {
			continue
		}
		if k := len(dims) - 1; k >= 0 && strides[k] == st[j]*s[j] {
			dims[k] *= s[j]
			strides[k] = st[j]
			continue
		}
		dims, strides = append(dims, s[j]), append(strides, st[j])
	}
	if len(dims) > 4 {
		p.feasible = false
		return p
	}
	for i := range dims {
		j := 4 - len(dims) + i
		p.odims[j], p.ostr[j] = uint32(dims[i]), uint32(strides[i])
	}
	return p
}

func recordSoftmax(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	p := planSoftmax(n)
	scale := n.Attr().(tensor.SoftmaxAttr).Scale
	if scale == 0 {
		scale = 1
	}
	mask := in[0]
	if p.masked {
		mask = in[1]
	}
	k, err := r.d.Kernel("norm_softmax", 3, groupSize, b32(n.Op() == tensor.OpLogSoftmax), b32(p.masked))
	if err != nil {
		return err
	}
	w := []uint32{uint32(p.outer * p.inner), uint32(p.n), uint32(p.inner), f32Off(in[0]), f32Off(out), f32Off(mask),
		math.Float32bits(scale), uint32(p.mstep), uint32(p.minner)}
	w = append(w, p.odims[:]...)
	w = append(w, p.ostr[:]...)
	return r.Dispatch(k, rowGrid(p.outer*p.inner), words(w), n.Op().String(), In(in[0]), In(mask), Out(out))
}

// normRows views a normalisation as rows over its trailing axes.
func normRows(n *tensor.Node) (rows, length int, ok bool) {
	s := n.Input(0).Shape()
	axes := n.Attr().(tensor.NormAttr).Axes
	if len(axes) == 0 {
		return 0, 0, false
	}
	for i, a := range axes {
		if a != len(s)-len(axes)+i {
			return 0, 0, false
		}
	}
	length = s[len(s)-len(axes):].Size()
	if length == 0 {
		return 0, 0, false
	}
	for _, g := range n.Inputs()[1:] {
		if g.Shape().Size() != length {
			return 0, 0, false
		}
	}
	return s.Size() / length, length, true
}

func recordNorm(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	rows, length, _ := normRows(n)
	gamma, beta := in[0], in[0]
	if len(in) > 1 {
		gamma = in[1]
	}
	if len(in) > 2 {
		beta = in[2]
	}
	k, err := r.d.Kernel("norm", 4, groupSize, b32(n.Op() == tensor.OpRMSNorm), b32(len(in) > 1), b32(len(in) > 2))
	if err != nil {
		return err
	}
	eps := n.Attr().(tensor.NormAttr).Eps
	push := words([]uint32{uint32(rows), uint32(length), f32Off(in[0]), f32Off(gamma), f32Off(beta), f32Off(out), math.Float32bits(eps)})
	return r.Dispatch(k, rowGrid(rows), push, n.Op().String(), In(in[0]), In(gamma), In(beta), Out(out))
}

// recordOptim writes SGD (param, grad, velocity, lr) and Adam (param, grad, m, v, lr,
// step) updates in place.
func recordOptim(r *Recorder, n *tensor.Node, _ *Buffer, in []*Buffer) error {
	adam := n.Op() == tensor.OpAdamUpdate
	var mu, wd, b1, b2, eps float32
	nesterov, decoupled := false, false
	prm, grad, m, v, lr, step := in[0], in[1], in[2], in[2], in[3], in[3]
	if adam {
		at := n.Attr().(tensor.AdamAttr)
		b1, b2, eps, wd, decoupled = at.Beta1, at.Beta2, at.Eps, at.WeightDecay, at.Decoupled
		v, lr, step = in[3], in[4], in[5]
	} else {
		at := n.Attr().(tensor.SGDAttr)
		mu, wd, nesterov = at.Momentum, at.WeightDecay, at.Nesterov
	}
	count := n.Input(0).Shape().Size()
	if count == 0 {
		return nil
	}
	k, err := r.d.Kernel("training_optim", 6, groupSize, b32(adam), b32(nesterov), b32(decoupled))
	if err != nil {
		return err
	}
	push := words([]uint32{uint32(count), f32Off(prm), f32Off(grad), f32Off(m), f32Off(v), f32Off(lr), f32Off(step),
		math.Float32bits(b1), math.Float32bits(b2), math.Float32bits(eps), math.Float32bits(wd), math.Float32bits(mu),
		math.Float32bits(float32(math.Log(float64(b1)))), math.Float32bits(float32(math.Log(float64(b2))))})
	args := []Arg{Out(prm), In(grad), Out(m), Out(v), In(lr), In(step)}
	if !adam {
		args[3] = In(v)
	}
	return r.Dispatch(k, gridFor(count), push, n.Op().String(), args...)
}
