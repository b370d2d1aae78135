package backendtest

import t "github.com/gml-dev/gml/tensor"

// Cases of the quantised dtypes (Q4_0, Q8_0, Q4_K) in the ops that take them: products
// with quantised weights, which backends decode inside the kernel, casts from and to
// them, and reshapes. The reference decodes the blocks in float64 from their
// definition (internal/quantref). The CPU's products of few rows round the activations
// to 16 bits per block of 32 (runtime/cpu/qdot): over 512 terms, errors of a few 1e-4.

var quantTypes = []t.DType{t.Q4_0, t.Q8_0, t.Q4_K}

func quantCases() []Case {
	f32 := func(shape ...int) Input { return Input{Shape: shape, DType: t.F32, Own: true} }
	const k = 512 // two Q4_K blocks per row
	xwT := func(x, w *t.Node) *t.Node { return t.MatMulT(x, w, false, true) }
	products := []Case{
		// x @ wᵀ, a linear layer's layout (w [N, K] as in a GGUF file): a matrix-vector
		// product, a batch of 32 rows (four chunks of the shader's eight), batched rows.
		binary("matmul_quant_vec", f32(1, k), in(67, k), xwT),
		binary("matmul_quant_batch32", f32(32, k), in(67, k), xwT),
		binary("matmul_quant_batched", f32(2, 3, k), in(67, k), xwT),
		// w @ y with y a vector or a transposed batch.
		binary("matmul_quant_a", in(67, k), f32(k, 1), t.MatMul),
		binary("matmul_quant_a_trans_b", in(67, k), f32(3, 5, k), xwT),
		// A reshaped weight (free: a view of the same blocks) in a product.
		binary("matmul_quant_reshaped", f32(4, k), in(2, 5, k), func(x, w *t.Node) *t.Node {
			return t.MatMulT(x, t.Reshape(w, 10, k), false, true)
		}),
	}
	decodes := []Case{
		unary("cast_quant_to_f32", in(6, k), func(w *t.Node) *t.Node { return t.Cast(w, t.F32) }),
		unary("cast_quant_to_f16", in(6, k), func(w *t.Node) *t.Node { return t.Cast(w, t.F16) }),
		unary("cast_quant_to_bf16", in(6, k), func(w *t.Node) *t.Node { return t.Cast(w, t.BF16) }),
		unary("reshape_quant", in(6, k), func(w *t.Node) *t.Node { return t.Reshape(w, 2, 3, k) }),
	}
	var cs []Case
	for _, c := range products {
		cs = append(cs, c.in(quantTypes...).tol(5e-4))
	}
	for _, c := range decodes {
		cs = append(cs, c.in(quantTypes...))
	}
	// Rows of 32 weights: Q4_0 and Q8_0 rows whose byte length is not a multiple of four.
	cs = append(cs, binary("matmul_quant_short_rows", f32(9, 32), in(5, 32), xwT).in(t.Q4_0, t.Q8_0).tol(5e-4))
	// Encoding runs on the CPU (tensor.Quantize), from f32 and from the half types.
	for _, from := range []t.DType{t.F32, t.F16, t.BF16} {
		for _, to := range quantTypes {
			cs = append(cs, withDecline(Case{Name: "cast_" + from.String() + "_to_" + to.String(),
				Inputs: []Input{{Shape: t.Shape{6, k}, DType: from, Own: true}},
				Build:  func(x []*t.Node) *t.Node { return t.Cast(x[0], to) }}, "encoding to a quantised type runs on the CPU"))
		}
	}
	return cs
}
