package onnx

import (
	"github.com/gml-dev/gml/tensor"
)

// Products: MatMul (NumPy semantics), Gemm.

func init() {
	register(7, lowerMatMul, "MatMul")
	register(7, lowerGemm, "Gemm")
}

// matmul multiplies with NumPy's rules for 1-D operands (a vector on the left is a row,
// on the right a column, and the added axis is dropped again). Integer operands are
// multiplied in float32, exact while the sums stay below 2^24.
func matmul(c *ctx, a, b *tensor.Node) *tensor.Node {
	ra, rb := a.Shape().Rank(), b.Shape().Rank()
	if ra == 0 || rb == 0 {
		c.failf("matmul of a scalar (%v, %v)", a.Shape(), b.Shape())
	}
	if ra == 1 {
		a = tensor.Reshape(a, 1, a.Shape()[0])
	}
	if rb == 1 {
		b = tensor.Reshape(b, b.Shape()[0], 1)
	}
	dt := a.DType()
	if !dt.IsFloat() {
		a, b = tensor.Cast(a, tensor.F32), tensor.Cast(b, tensor.F32)
	}
	y := tensor.MatMul(a, b)
	if !dt.IsFloat() {
		y = tensor.Cast(tensor.Round(y), dt)
	}
	s := y.Shape()
	switch {
	case ra == 1 && rb == 1:
		y = tensor.Reshape(y)
	case ra == 1:
		y = tensor.Reshape(y, append(s[:len(s)-2].Clone(), s[len(s)-1])...)
	case rb == 1:
		y = tensor.Reshape(y, s[:len(s)-1]...)
	}
	return y
}

func lowerMatMul(c *ctx) {
	dt := c.sameTypes(0, 1)
	c.requireNumeric(0)
	c.set(0, c.wrap(matmul(c, c.x(0), c.x(1)), dt), dt)
}

// lowerGemm is alpha*op(A)*op(B) + beta*C with C broadcast to the result.
func lowerGemm(c *ctx) {
	dt := c.sameTypes(0, 1, 2)
	alpha, beta := c.attrFloat("alpha", 1), c.attrFloat("beta", 1)
	ta, tb := c.attrInt("transA", 0) != 0, c.attrInt("transB", 0) != 0
	c.ignore("broadcast")
	a, b := c.x(0), c.x(1)
	if a.Shape().Rank() != 2 || b.Shape().Rank() != 2 {
		c.failf("A %v and B %v must be matrices", a.Shape(), b.Shape())
	}
	if !dt.IsFloat() {
		a, b = tensor.Cast(a, tensor.F32), tensor.Cast(b, tensor.F32)
	}
	y := tensor.MatMulT(a, b, ta, tb)
	if alpha != 1 {
		y = tensor.Scale(y, alpha)
	}
	if c.has(2) && beta != 0 {
		bias := c.x(2)
		if !dt.IsFloat() {
			bias = tensor.Cast(bias, tensor.F32)
		}
		if beta != 1 {
			bias = tensor.Scale(bias, beta)
		}
		y = tensor.Add(y, bias)
	}
	if !dt.IsFloat() {
		y = c.wrap(tensor.Cast(tensor.Round(y), dt.Carrier()), dt)
	}
	c.set(0, y, dt)
}
