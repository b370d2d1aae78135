package cpu

import (
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
	if mm.DType() != tensor.F32 || mm.Input(0).DType() != tensor.F32 || mm.Input(1).DType() != tensor.F32 ||
		!mm.Shape().Equal(add.Shape()) || mm.Shape().Size() == 0 {
		return nil
	}
	g, ok := oneProduct(mm)
	if !ok || g.k == 0 {
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
