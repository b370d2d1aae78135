package ag

import (
	"github.com/gml-dev/gml/tensor"
)

// Elementwise ops and reductions. Binary ops broadcast as NumPy does; both operands must
// have the same dtype. Each records the engine op of the same name, whose gradient rule
// Backward applies.

// Add returns a + b.
func Add(a, b *Tensor) *Tensor { return binOp("add", a, b, tensor.Add) }

// Sub returns a - b.
func Sub(a, b *Tensor) *Tensor { return binOp("sub", a, b, tensor.Sub) }

// Mul returns a * b, elementwise.
func Mul(a, b *Tensor) *Tensor { return binOp("mul", a, b, tensor.Mul) }

// Div returns a / b, elementwise.
func Div(a, b *Tensor) *Tensor { return binOp("div", a, b, tensor.Div) }

// Pow returns a raised to b, elementwise.
func Pow(a, b *Tensor) *Tensor { return binOp("pow", a, b, tensor.Pow) }

// Maximum returns the larger of a and b, elementwise.
func Maximum(a, b *Tensor) *Tensor { return binOp("maximum", a, b, tensor.Maximum) }

// Minimum returns the smaller of a and b, elementwise.
func Minimum(a, b *Tensor) *Tensor { return binOp("minimum", a, b, tensor.Minimum) }

// Scale returns x * s.
func Scale(x *Tensor, s float64) *Tensor {
	return unary("scale", x, func(n *tensor.Node) *tensor.Node { return tensor.Scale(n, float32(s)) })
}

// AddScalar returns x + v.
func AddScalar(x *Tensor, v float64) *Tensor {
	return unary("add_scalar", x, func(n *tensor.Node) *tensor.Node { return tensor.ScaleBias(n, 1, float32(v)) })
}

// PowScalar returns x raised to p, elementwise.
func PowScalar(x *Tensor, p float64) *Tensor {
	return unary("pow", x, func(n *tensor.Node) *tensor.Node { return tensor.Pow(n, n.Graph().Scalar(n.DType(), p)) })
}

// Neg returns -x.
func Neg(x *Tensor) *Tensor { return unary("neg", x, tensor.Neg) }

// Abs returns |x|.
func Abs(x *Tensor) *Tensor { return unary("abs", x, tensor.Abs) }

// Exp returns eˣ.
func Exp(x *Tensor) *Tensor { return unary("exp", x, tensor.Exp) }

// Log returns the natural logarithm.
func Log(x *Tensor) *Tensor { return unary("log", x, tensor.Log) }

// Sqrt returns the square root.
func Sqrt(x *Tensor) *Tensor { return unary("sqrt", x, tensor.Sqrt) }

// Rsqrt returns 1/√x.
func Rsqrt(x *Tensor) *Tensor { return unary("rsqrt", x, tensor.Rsqrt) }

// Square returns x².
func Square(x *Tensor) *Tensor { return unary("square", x, tensor.Square) }

// Sin returns the sine.
func Sin(x *Tensor) *Tensor { return unary("sin", x, tensor.Sin) }

// Cos returns the cosine.
func Cos(x *Tensor) *Tensor { return unary("cos", x, tensor.Cos) }

// Tanh returns the hyperbolic tangent.
func Tanh(x *Tensor) *Tensor { return unary("tanh", x, tensor.Tanh) }

// Sigmoid returns 1/(1+e⁻ˣ).
func Sigmoid(x *Tensor) *Tensor { return unary("sigmoid", x, tensor.Sigmoid) }

// Relu returns max(x, 0).
func Relu(x *Tensor) *Tensor { return unary("relu", x, tensor.Relu) }

// LeakyRelu returns x where x > 0, else alpha·x.
func LeakyRelu(x *Tensor, alpha float64) *Tensor {
	return unary("leaky_relu", x, func(n *tensor.Node) *tensor.Node { return tensor.LeakyRelu(n, float32(alpha)) })
}

// Elu returns x where x > 0, else alpha·(eˣ-1).
func Elu(x *Tensor, alpha float64) *Tensor {
	return unary("elu", x, func(n *tensor.Node) *tensor.Node { return tensor.Elu(n, float32(alpha)) })
}

// Gelu returns x·Φ(x), the exact (erf) form.
func Gelu(x *Tensor) *Tensor {
	return unary("gelu", x, func(n *tensor.Node) *tensor.Node { return tensor.Gelu(n, tensor.GeluErf) })
}

// GeluTanh returns the tanh approximation of Gelu (GPT-2's).
func GeluTanh(x *Tensor) *Tensor {
	return unary("gelu_tanh", x, func(n *tensor.Node) *tensor.Node { return tensor.Gelu(n, tensor.GeluTanh) })
}

// Silu returns x·sigmoid(x) (swish).
func Silu(x *Tensor) *Tensor { return unary("silu", x, tensor.Silu) }

// Softplus returns log(1+eˣ).
func Softplus(x *Tensor) *Tensor { return unary("softplus", x, tensor.Softplus) }

// Clamp limits x to [lo, hi]; the gradient passes where x is inside.
func Clamp(x *Tensor, lo, hi float64) *Tensor {
	return unary("clamp", x, func(n *tensor.Node) *tensor.Node { return tensor.Clamp(n, float32(lo), float32(hi)) })
}

// Where picks a where cond (Bool) is true, else b; all three broadcast.
func Where(cond, a, b *Tensor) *Tensor {
	return record("where", func(in []*tensor.Node) *tensor.Node { return tensor.Where(in[0], in[1], in[2]) }, cond, a, b)
}

// Greater returns the Bool tensor a > b.
func Greater(a, b *Tensor) *Tensor { return binOp("greater", a, b, tensor.Greater) }

// Less returns the Bool tensor a < b.
func Less(a, b *Tensor) *Tensor { return binOp("less", a, b, tensor.Less) }

// Equal returns the Bool tensor a == b.
func Equal(a, b *Tensor) *Tensor { return binOp("equal", a, b, tensor.Equal) }

// Cast converts x to dtype dt (no gradient flows through integer or Bool results).
func Cast(x *Tensor, dt tensor.DType) *Tensor {
	return unary("cast", x, func(n *tensor.Node) *tensor.Node { return tensor.Cast(n, dt) })
}

// MatMul returns the matrix product a·b over the last two axes, batched over the
// leading ones with broadcasting.
func MatMul(a, b *Tensor) *Tensor { return binOp("matmul", a, b, tensor.MatMul) }

// Sum adds x's elements over axes (all when none are given), keeping the reduced axes
// as size 1 when keepDims is set.
func Sum(x *Tensor, keepDims bool, axes ...int) *Tensor {
	return reduce("sum", tensor.Sum, x, keepDims, axes)
}

// Mean averages x's elements over axes (all when none are given).
func Mean(x *Tensor, keepDims bool, axes ...int) *Tensor {
	return reduce("mean", tensor.Mean, x, keepDims, axes)
}

// Max takes the largest element over axes (all when none are given); the gradient is
// shared among the positions that attain it.
func Max(x *Tensor, keepDims bool, axes ...int) *Tensor {
	return reduce("max", tensor.Max, x, keepDims, axes)
}

// Min takes the smallest element over axes (all when none are given).
func Min(x *Tensor, keepDims bool, axes ...int) *Tensor {
	return reduce("min", tensor.Min, x, keepDims, axes)
}

func reduce(op string, f func(*tensor.Node, []int, bool) *tensor.Node, x *Tensor, keepDims bool, axes []int) *Tensor {
	axes = append([]int(nil), axes...)
	return unary(op, x, func(n *tensor.Node) *tensor.Node { return f(n, axes, keepDims) })
}

// Var is the variance over axes (all when none are given), with the given correction
// (0: population, 1: sample).
func Var(x *Tensor, keepDims bool, correction int, axes ...int) *Tensor {
	axes = append([]int(nil), axes...)
	return unary("var", x, func(n *tensor.Node) *tensor.Node { return tensor.Variance(n, axes, keepDims, correction) })
}

// ArgMax returns the I64 index of the largest element along axis.
func ArgMax(x *Tensor, axis int) *Tensor {
	return unary("argmax", x, func(n *tensor.Node) *tensor.Node { return tensor.ArgMax(n, axis, false) })
}
