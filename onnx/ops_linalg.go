package onnx

import (
	"github.com/gml-dev/gml/tensor"
)

// Products: MatMul (NumPy semantics), Gemm.

func init() {
	register(7, lowerMatMul, "MatMul")
	register(7, lowerGemm, "Gemm")
	register(11, lowerDet, "Det")
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

// lowerDet is the determinant of the trailing n×n matrices by Gaussian elimination with
// partial pivoting, unrolled over the n columns: at column k the row of the largest
// |a[i][k]| (i >= k) is swapped into place (flipping the sign), its pivot joins the
// product, and the rows below lose their multiple of it. A zero pivot makes the
// determinant 0.
func lowerDet(c *ctx) {
	c.requireFloat(0)
	s := c.shape(0)
	r := len(s)
	if r < 2 || s[r-1] != s[r-2] {
		c.failf("input %v: want (..., n, n)", s)
	}
	n := s[r-1]
	a := toF32(c.x(0))
	batch := s[:r-2]
	one, zero := c.scalar(tensor.F32, 1), c.scalar(tensor.F32, 0)
	rows := tensor.New(tensor.I64, n, 1)
	for i := range n {
		rows.Int64s()[i] = int64(i)
	}
	idx := c.constant(rows) // (n, 1): the row numbers
	det := tensor.Full(c.g, tensor.F32, batch, 1)
	for k := range n {
		// The pivot row p: the largest |a[i][k]| for i >= k.
		col := tensor.SliceAxis(tensor.SliceAxis(a, r-1, k, k+1), r-2, k, n) // (..., n-k, 1)
		p := tensor.Add(tensor.ArgMax(tensor.Abs(col), r-2, true), c.scalar(tensor.I64, float64(k)))
		kk := c.scalar(tensor.I64, float64(k))
		// Swap rows k and p: row i reads row perm[i].
		perm := tensor.Where(tensor.Equal(idx, kk), p, tensor.Where(tensor.Equal(idx, p), kk, idx))
		a = tensor.TakeAlong(a, tensor.Expand(perm, s...), r-2)
		det = tensor.Mul(det, tensor.Reshape(tensor.Where(tensor.Equal(p, kk), one, c.scalar(tensor.F32, -1)), batch...))
		pivotRow := tensor.SliceAxis(a, r-2, k, k+1)     // (..., 1, n)
		pivot := tensor.SliceAxis(pivotRow, r-1, k, k+1) // (..., 1, 1)
		det = tensor.Mul(det, tensor.Reshape(pivot, batch...))
		if k == n-1 {
			break
		}
		isZero := tensor.Equal(pivot, zero)
		safe := tensor.Where(isZero, one, pivot)
		below := tensor.Cast(tensor.Greater(idx, kk), tensor.F32) // (n, 1): rows under the pivot
		factor := tensor.Mul(tensor.Div(tensor.SliceAxis(a, r-1, k, k+1), safe), below)
		factor = tensor.Where(isZero, zero, factor)
		a = tensor.Sub(a, tensor.Mul(factor, pivotRow))
	}
	c.set(0, c.cast(det, Float, c.dtype(0), true), c.dtype(0))
}
