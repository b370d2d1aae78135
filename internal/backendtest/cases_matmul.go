package backendtest

import (
	"fmt"

	t "github.com/gml-dev/gml/tensor"
)

// Cases of MatMul: transposes, batches, broadcast operands, sizes that are not
// multiples of a tile or of 8 (batched ones included), an empty K, a product big enough
// for the GPU to copy A out transposed first, mixed precision, and every float dtype.

func matMulCases() []Case {
	shapes := []struct {
		a, b           t.Shape
		transA, transB bool
	}{
		{t.Shape{3, 4}, t.Shape{4, 5}, false, false},
		{t.Shape{37, 29}, t.Shape{29, 41}, false, false},
		{t.Shape{2, 5, 7}, t.Shape{7, 3}, false, false},
		{t.Shape{2, 5, 7}, t.Shape{2, 7, 3}, false, false},
		{t.Shape{7, 5}, t.Shape{2, 3, 7}, true, true},
		{t.Shape{4, 2, 9, 6}, t.Shape{6, 11}, false, false},
		{t.Shape{130, 70}, t.Shape{90, 70}, false, true},
		{t.Shape{64, 32}, t.Shape{32, 48}, false, false},
		{t.Shape{3, 24, 32}, t.Shape{32, 16}, false, false},
		{t.Shape{40, 64}, t.Shape{40, 24}, true, false},
		{t.Shape{72, 16}, t.Shape{40, 16}, false, true},
		{t.Shape{2, 16, 40}, t.Shape{2, 24, 16}, true, true},
		{t.Shape{16, 24}, t.Shape{3, 24, 32}, false, false},
		{t.Shape{8, 0}, t.Shape{0, 16}, false, false},
		{t.Shape{1, 64}, t.Shape{64, 33}, false, false}, // a matrix-vector product
	}
	var cs []Case
	for _, s := range shapes {
		name := fmt.Sprintf("matmul%v%v_t%v%v", s.a, s.b, b2i(s.transA), b2i(s.transB))
		mm := func(a, b *t.Node) *t.Node { return t.MatMulT(a, b, s.transA, s.transB) }
		cs = append(cs, binary(name, in(s.a...), in(s.b...), mm).in(t.F32, t.F16, t.BF16))
		// f32 operands that allow f16 or bf16 products: a backend may round them.
		for _, p := range []t.DType{t.F16, t.BF16} {
			mixed := func(a, b *t.Node) *t.Node {
				return t.MatMulWith(a, b, t.MatMulAttr{TransA: s.transA, TransB: s.transB, Precision: p})
			}
			tol := 4e-3
			if p == t.BF16 {
				tol = 3e-2
			}
			cs = append(cs, binary(name+"_precision_"+p.String(), in(s.a...), in(s.b...), mixed).tol(tol))
		}
		// f32 operands that allow TensorFloat-32 (10 bits of mantissa, f32 accumulation).
		tf32 := func(a, b *t.Node) *t.Node {
			return t.MatMulWith(a, b, t.MatMulAttr{TransA: s.transA, TransB: s.transB, TF32: true})
		}
		cs = append(cs, binary(name+"_tf32", in(s.a...), in(s.b...), tf32).tol(4e-3))
	}
	return append(cs,
		// Big enough for the GPU to copy A out transposed first, through the tall path
		// of a batched A times an unbatched B.
		binary("matmul_big_tall", in(2, 512, 256), in(256, 1024), t.MatMul).tol(1e-5),
		grad(binary("matmul_grad", in(2, 3), in(3, 4), t.MatMul)),
		grad(binary("matmul_trans_a", in(3, 2), in(3, 4), func(a, b *t.Node) *t.Node { return t.MatMulT(a, b, true, false) })),
		grad(binary("matmul_trans_b", in(2, 3), in(4, 3), func(a, b *t.Node) *t.Node { return t.MatMulT(a, b, false, true) })),
		grad(binary("matmul_trans_both", in(3, 2), in(4, 3), func(a, b *t.Node) *t.Node { return t.MatMulT(a, b, true, true) })),
		// Batch axes that broadcast on both sides ((2, 1) against (3)) are not one strided
		// batch: the GPU leaves the product to the CPU.
		withDecline(grad(binary("matmul_batch_broadcast", in(2, 1, 2, 3), in(3, 3, 2), t.MatMul)),
			"batch axes broadcast on both operands"),
		grad(binary("matmul_broadcast_a", in(2, 3), in(2, 3, 2), t.MatMul)),
		// One matrix for every row of a batch: its gradient is one product over all rows.
		grad(binary("matmul_shared_b", in(2, 3, 4), in(4, 2), t.MatMul)),
		grad(binary("matmul_shared_b_trans_b", in(2, 2, 3, 4), in(5, 4), func(a, b *t.Node) *t.Node { return t.MatMulT(a, b, false, true) })),
		grad(binary("outer", in(3), in(4), t.Outer)),
		grad(binary("matmul_empty_inner", in(2, 0), in(0, 3), t.MatMul)),
	)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
