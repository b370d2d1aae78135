package cpu

import (
	"slices"
	"unsafe"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/tensor"
)

// A dense layer's bias: MatMul followed by the Add of a row vector of its columns. Run
// as two steps, the add is a pass of its own over the product's output (2048×C floats
// read and written for each projection of a small transformer). Fused, the GEMM adds
// the bias to each tile of C as its sum over k completes (gemm.SgemmBias), while the
// tile is in cache: the same bits, the add after the whole sum. The step runs at the
// MatMul's place and writes the Add's output there, where writableEarly allows it. An
// Add that the elementwise fusion has taken into a group (bias and activation, bias and
// residual) is left to it: there the add costs no pass of its own already.

// fuseMatMulBias replaces the steps of each such pair not taken yet (steps) by one,
// the product's (owners).
func fuseMatMulBias(nodes []*tensor.Node, index map[*tensor.Node]int, mem []nodeMem,
	escapes func(*tensor.Node) bool, steps map[*tensor.Node]func() error, owners map[*tensor.Node]*tensor.Node) {
	users := make([]int, len(nodes))
	for _, n := range nodes {
		for _, x := range n.Inputs() {
			if xi, ok := index[x]; ok {
				users[xi]++
			}
		}
	}
	for ia, add := range nodes {
		if add.Op() != tensor.OpAdd || add.DType() != tensor.F32 {
			continue
		}
		if _, taken := steps[add]; taken {
			continue
		}
		for side := range 2 {
			mm, bias := add.Input(side), add.Input(1-side)
			im, ok := index[mm]
			if !ok || mm.Op() != tensor.OpMatMul || users[im] != 1 || escapes(mm) || !isBiasOf(bias, add) {
				continue
			}
			if _, taken := steps[mm]; taken {
				continue
			}
			if ib, ok := index[bias]; ok && ib > im {
				continue // computed after the product
			}
			if step := matMulBiasStep(mm, add, im, ia, 1-side, mem); step != nil {
				steps[mm], steps[add] = step, nil
				owners[add] = mm
				break
			}
		}
	}
}

// isBiasOf reports whether x is a row vector that add broadcasts over the rows of its
// other, F32 operand of add's shape: x holds one value per column of add.
func isBiasOf(x, add *tensor.Node) bool {
	s, out := x.Shape(), add.Shape()
	if x.DType() != tensor.F32 || len(out) < 2 || len(s) == 0 || s[len(s)-1] != out[len(out)-1] {
		return false
	}
	return s.Size() == out[len(out)-1]
}

// matMulBiasStep returns the fused step of MatMul node mm (at im) and the Add at ia,
// whose input biasIn is the bias, or nil when the product is not one F32 Sgemm or the
// Add's output may not be written at the product's place.
func matMulBiasStep(mm, add *tensor.Node, im, ia, biasIn int, mem []nodeMem) func() error {
	g, ok := f32Product(mm, add)
	if !ok {
		return nil
	}
	in, out, bias := mem[im].in, mem[ia].out, mem[ia].in[biasIn]
	if !writableEarly(out, im, ia, mem, in[0], in[1], bias) {
		return nil
	}
	a, b, c, v := f32s(in[0]), f32s(in[1]), f32s(out), f32s(bias)
	return func() error {
		return gemm.SgemmBias(g.transA, g.transB, g.m, g.n, g.k, 1, a, g.lda, b, g.ldb, 0, c, g.n, v)
	}
}

// A dense layer's bias and activation, MatMul → Add(bias) → act (GELU, ReLU, any F32
// unary op), with the sum kept for the backward: as an elementwise group the pair is a
// pass that reads the product back from memory, adds the bias and writes the sum and
// the activation. Fused into the GEMM (gemm.Impl.SgemmBiasThen), the activation runs
// on each block of rows of C as its sum completes, while the block is in cache: the
// same loops on the same values, so the same bits, without the pass. The loops cut the
// rows elsewhere than the separate step does (at the GEMM's stretches of columns, rows
// of any length), which no unary loop's bits depend on: the vector functions of package
// vec give an element the same bits wherever it falls in a call (Exp, Erf and Gelu run
// their tails through the assembly too; Relu and Arith give Go's bits), and the other
// loops are Go's, one element at a time (TestUnaryLoopsCutAnywhere).

// fuseMatMulBiasAct replaces the steps of each such trio not taken yet (steps) by the
// product's (owners), before the elementwise fusion would group the Add and the
// activation.
func fuseMatMulBiasAct(nodes []*tensor.Node, index map[*tensor.Node]int, mem []nodeMem,
	escapes func(*tensor.Node) bool, steps map[*tensor.Node]func() error, owners map[*tensor.Node]*tensor.Node) {
	users := make([][]int, len(nodes))
	for i, n := range nodes {
		for _, x := range n.Inputs() {
			if xi, ok := index[x]; ok {
				users[xi] = append(users[xi], i)
			}
		}
	}
	for im, mm := range nodes {
		if mm.Op() != tensor.OpMatMul || len(users[im]) != 1 || escapes(mm) {
			continue
		}
		ia := users[im][0]
		add := nodes[ia]
		if add.Op() != tensor.OpAdd || add.DType() != tensor.F32 || add.Input(0) == add.Input(1) {
			continue
		}
		side := slices.Index(add.Inputs(), mm)
		bias := add.Input(1 - side)
		if !isBiasOf(bias, add) {
			continue
		}
		if ib, ok := index[bias]; ok && ib > im {
			continue // computed after the product
		}
		// The activation: the first reader of the sum, a unary F32 op of its shape.
		var act *tensor.Node
		ig := 0
		for _, u := range users[ia] {
			if n := nodes[u]; n.Op() != tensor.OpAdd && f32UnaryOps[n.Op()] != nil && n.DType() == tensor.F32 && n.Shape().Equal(add.Shape()) {
				act, ig = n, u
				break
			}
		}
		if act == nil {
			continue
		}
		if _, taken := steps[act]; taken {
			continue
		}
		if _, taken := steps[add]; taken {
			continue
		}
		if _, taken := steps[mm]; taken {
			continue
		}
		if step := matMulBiasActStep(mm, act, im, ia, ig, 1-side, mem); step != nil {
			steps[mm], steps[add], steps[act] = step, nil, nil
			owners[add], owners[act] = mm, mm
		}
	}
}

// matMulBiasActStep returns the fused step of MatMul node mm (at im), the Add at ia
// (input biasIn the bias) and the activation act at ig, or nil when the product is not
// one F32 Sgemm or the outputs may not be written at the product's place.
func matMulBiasActStep(mm, act *tensor.Node, im, ia, ig, biasIn int, mem []nodeMem) func() error {
	g, ok := f32Product(mm, act)
	if !ok {
		return nil
	}
	in, sum, bias, out := mem[im].in, mem[ia].out, mem[ia].in[biasIn], mem[ig].out
	// The Add's read of the product is the step's own, from the tile: the activation may
	// take the product's memory, which the scheduler hands on when the Add reads it last.
	product := mem[ia].in[1-biasIn]
	mem[ia].in[1-biasIn] = nil
	free := writableEarly(out, im, ig, mem, in[0], in[1], bias, sum)
	mem[ia].in[1-biasIn] = product
	if !free || !writableEarly(sum, im, ia, mem, in[0], in[1], bias) {
		return nil
	}
	a, b, c, v, y := f32s(in[0]), f32s(in[1]), f32s(sum), f32s(bias), f32s(out)
	loop := f32UnaryOps[act.Op()](act.Attr())
	base := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
	// then applies the activation to a stretch of a row of C, into the same place of y.
	then := func(row []float32) {
		off := int(uintptr(unsafe.Pointer(unsafe.SliceData(row)))-base) / 4
		loop(y[off:off+len(row)], row)
	}
	return func() error {
		return gemm.Default().SgemmBiasThen(g.transA, g.transB, g.m, g.n, g.k, 1, a, g.lda, b, g.ldb, 0, c, g.n, v, then)
	}
}

// f32Product is the one F32 product of mm that a fused step may run, with a sum to do
// (k > 0) and the shape of the node out that takes its result on, non-empty.
func f32Product(mm, out *tensor.Node) (product, bool) {
	if mm.DType() != tensor.F32 || mm.Input(0).DType() != tensor.F32 || mm.Input(1).DType() != tensor.F32 ||
		!mm.Shape().Equal(out.Shape()) || mm.Shape().Size() == 0 {
		return product{}, false
	}
	g, ok := oneProduct(mm)
	return g, ok && g.k > 0
}
