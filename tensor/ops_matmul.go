package tensor

import "fmt"

// Matrix products.

func init() { registerShape(OpMatMul, matMulRule) }

// MatMul returns a @ b over the last two axes, batched over the leading axes with
// broadcasting (a [B, M, K] @ b [K, N] is allowed). Rank-1 operands are not promoted:
// reshape them first.
//
// One operand may be quantised (Q4_0, Q8_0, Q4_K) with the other f32, if the product
// reduces along the quantised operand's innermost axis, the one its blocks run along:
// a quantised b transposed (MatMulT(x, w, false, true) with w [N, K], the layout of a
// linear layer in a GGUF file) or a quantised a untransposed. Backends decode the
// blocks inside the product, so the weights stay quantised in device memory. The
// result is f32. The quantised operand is a matrix; the other may carry batch axes.
func MatMul(a, b *Node) *Node { return Apply(OpMatMul, MatMulAttr{}, a, b) }

// MatMulT returns op(a) @ op(b), where op transposes the last two axes when the
// corresponding flag is set. Backends read the transposed operand in place.
func MatMulT(a, b *Node, transA, transB bool) *Node {
	return Apply(OpMatMul, MatMulAttr{TransA: transA, TransB: transB}, a, b)
}

// MatMulWith returns the product that at describes: transposes and the precision the
// backend may use (MatMulAttr).
func MatMulWith(a, b *Node, at MatMulAttr) *Node { return Apply(OpMatMul, at, a, b) }

func matMulRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(MatMulAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be MatMulAttr, got %T", attr)
	}
	a, b := in[0], in[1]
	out := a.dtype
	switch {
	case a.dtype.IsQuantized() || b.dtype.IsQuantized():
		q, qt, other := a, at.TransA, b
		if b.dtype.IsQuantized() {
			q, qt, other = b, !at.TransB, a
		}
		if other.dtype != F32 || at.Precision != F32 {
			return 0, nil, nil, fmt.Errorf("a quantised operand multiplies an f32 one at f32 precision, have %s", shapesOf(in))
		}
		if q.shape.Rank() != 2 {
			return 0, nil, nil, fmt.Errorf("a quantised operand must be a matrix (batch the other operand), have %v", q)
		}
		if qt {
			return 0, nil, nil, fmt.Errorf("the product must reduce along the innermost axis of the quantised operand %v, where its blocks run: pass it as b with TransB (MatMulT(x, w, false, true), w [N, K]) or as a without TransA; Cast it to f32 for other layouts", q)
		}
		out = F32
	case a.dtype != b.dtype || !a.dtype.IsFloat():
		return 0, nil, nil, fmt.Errorf("needs two inputs of the same float dtype, have %s", shapesOf(in))
	}
	if at.Precision != F32 && (a.dtype != F32 || !at.Precision.IsFloat()) {
		return 0, nil, nil, fmt.Errorf("precision %s applies to f32 operands, and must be f16 or bf16; have %s", at.Precision, shapesOf(in))
	}
	if at.TF32 && (a.dtype != F32 || at.Precision != F32) {
		return 0, nil, nil, fmt.Errorf("TF32 applies to f32 operands at f32 precision; have %s at precision %s", shapesOf(in), at.Precision)
	}
	if a.shape.Rank() < 2 || b.shape.Rank() < 2 {
		return 0, nil, nil, fmt.Errorf("needs rank >= 2 operands, have %v and %v", a.shape, b.shape)
	}
	m, k := a.shape[a.shape.Rank()-2], a.shape[a.shape.Rank()-1]
	if at.TransA {
		m, k = k, m
	}
	k2, n := b.shape[b.shape.Rank()-2], b.shape[b.shape.Rank()-1]
	if at.TransB {
		k2, n = n, k2
	}
	if k != k2 {
		return 0, nil, nil, fmt.Errorf("inner dimensions differ: %v (transA=%v) @ %v (transB=%v): %d vs %d", a.shape, at.TransA, b.shape, at.TransB, k, k2)
	}
	batch, ok := Broadcast(a.shape[:a.shape.Rank()-2], b.shape[:b.shape.Rank()-2])
	if !ok {
		return 0, nil, nil, fmt.Errorf("batch dimensions of %v and %v do not broadcast", a.shape, b.shape)
	}
	return out, append(batch.Clone(), m, n), at, nil
}

// Outer returns the outer product of two vectors: a [n], b [m] -> [n, m].
func Outer(a, b *Node) *Node {
	if a.shape.Rank() != 1 || b.shape.Rank() != 1 {
		panic(&Error{Op: "outer", Err: fmt.Errorf("needs two vectors, have %s", shapesOf([]*Node{a, b}))})
	}
	return Mul(Reshape(a, a.shape[0], 1), Reshape(b, 1, b.shape[0]))
}
