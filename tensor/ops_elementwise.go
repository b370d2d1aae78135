package tensor

import "fmt"

// Unary elementwise ops keep shape and dtype; which dtypes each accepts is in the op
// table. Binary ops broadcast as NumPy does. Comparisons, logical ops and Where are in
// ops_compare.go, Cast in ops_cast.go.

func init() {
	// Every unary op but Cast gets the one elementwise rule: same shape and dtype, the
	// dtypes its table row accepts (checked by Apply), and its attribute (unaryAttrs).
	for op := Op(1); op < numOps; op++ {
		if op.Kind() == KindUnary && op != OpCast {
			registerShape(op, unaryRule(op))
		}
	}
	for _, op := range []Op{OpAdd, OpSub, OpMul, OpDiv, OpPow, OpMod, OpMaximum, OpMinimum,
		OpBitAnd, OpBitOr, OpBitXor, OpShiftLeft, OpShiftRight} {
		registerShape(op, binaryRule(false))
	}
}

// unaryAttrs gives each parameterised unary op its attribute type and default.
var unaryAttrs = map[Op]any{
	OpLeakyRelu:   AlphaAttr{Alpha: 0.01},
	OpElu:         AlphaAttr{Alpha: 1},
	OpGelu:        GeluAttr{},
	OpHardSigmoid: HardSigmoidAttr{Alpha: 0.2, Beta: 0.5},
	OpClamp:       ClampAttr{},
	OpScale:       ScaleAttr{Scale: 1},
}

func unaryRule(op Op) shapeRule {
	return func(attr any, in []*Node) (DType, Shape, any, error) {
		x := in[0]
		def, parameterised := unaryAttrs[op]
		switch {
		case !parameterised && attr != nil:
			return 0, nil, nil, fmt.Errorf("takes no attribute, got %T", attr)
		case parameterised && attr == nil:
			attr = def
		case parameterised && fmt.Sprintf("%T", attr) != fmt.Sprintf("%T", def):
			return 0, nil, nil, fmt.Errorf("attribute must be %T, got %T", def, attr)
		}
		if c, ok := attr.(ClampAttr); ok && c.Min > c.Max {
			return 0, nil, nil, fmt.Errorf("lower bound %v exceeds upper bound %v", c.Min, c.Max)
		}
		return x.dtype, x.shape, attr, nil
	}
}

// broadcastInputs checks that the inputs share a dtype and broadcast, and returns the
// broadcast shape.
func broadcastInputs(in []*Node) (Shape, error) {
	s := in[0].shape
	for _, x := range in[1:] {
		if x.dtype != in[0].dtype {
			return nil, fmt.Errorf("dtypes differ: %s (cast one input first)", shapesOf(in))
		}
		var ok bool
		if s, ok = Broadcast(s, x.shape); !ok {
			return nil, fmt.Errorf("shapes do not broadcast: %s", shapesOf(in))
		}
	}
	return s, nil
}

func binaryRule(boolOut bool) shapeRule {
	return func(attr any, in []*Node) (DType, Shape, any, error) {
		if attr != nil {
			return 0, nil, nil, fmt.Errorf("takes no attribute, got %T", attr)
		}
		s, err := broadcastInputs(in)
		if err != nil {
			return 0, nil, nil, err
		}
		if boolOut {
			return Bool, s, nil, nil
		}
		return in[0].dtype, s, nil, nil
	}
}

// Neg returns -x.
func Neg(x *Node) *Node { return Apply(OpNeg, nil, x) }

// Abs returns |x| elementwise.
func Abs(x *Node) *Node { return Apply(OpAbs, nil, x) }

// Sign returns -1, 0 or 1 by the sign of x.
func Sign(x *Node) *Node { return Apply(OpSign, nil, x) }

// Exp returns eˣ elementwise.
func Exp(x *Node) *Node { return Apply(OpExp, nil, x) }

// Log returns the natural logarithm elementwise.
func Log(x *Node) *Node { return Apply(OpLog, nil, x) }

// Sqrt returns the square root elementwise.
func Sqrt(x *Node) *Node { return Apply(OpSqrt, nil, x) }

// Rsqrt returns 1/√x elementwise.
func Rsqrt(x *Node) *Node { return Apply(OpRsqrt, nil, x) }

// Square returns x² elementwise.
func Square(x *Node) *Node { return Apply(OpSquare, nil, x) }

// Sin returns the sine elementwise.
func Sin(x *Node) *Node { return Apply(OpSin, nil, x) }

// Cos returns the cosine elementwise.
func Cos(x *Node) *Node { return Apply(OpCos, nil, x) }

// Tanh returns the hyperbolic tangent elementwise.
func Tanh(x *Node) *Node { return Apply(OpTanh, nil, x) }

// Sigmoid returns 1/(1+e⁻ˣ) elementwise.
func Sigmoid(x *Node) *Node { return Apply(OpSigmoid, nil, x) }

// Relu returns max(x, 0) elementwise.
func Relu(x *Node) *Node { return Apply(OpRelu, nil, x) }

// Silu returns x·sigmoid(x) elementwise.
func Silu(x *Node) *Node { return Apply(OpSilu, nil, x) }

// Softplus returns log(1+eˣ) elementwise, computed without overflow.
func Softplus(x *Node) *Node { return Apply(OpSoftplus, nil, x) }

// Softsign returns x / (1 + |x|) elementwise.
func Softsign(x *Node) *Node { return Apply(OpSoftsign, nil, x) }

// HardSwish returns x·max(0, min(1, x/6 + 1/2)) elementwise.
func HardSwish(x *Node) *Node { return Apply(OpHardSwish, nil, x) }

// Erf returns the error function elementwise.
func Erf(x *Node) *Node { return Apply(OpErf, nil, x) }

// Round rounds to the nearest integer, halves to the even one (NumPy's round, ONNX
// Round).
func Round(x *Node) *Node { return Apply(OpRound, nil, x) }

// Tan is the tangent.
func Tan(x *Node) *Node { return Apply(OpTan, nil, x) }

// BitNot flips every bit of an integer tensor.
func BitNot(x *Node) *Node { return Apply(OpBitNot, nil, x) }

// BitAnd is the bitwise and of two integer tensors, with broadcasting.
func BitAnd(a, b *Node) *Node { return Apply(OpBitAnd, nil, a, b) }

// BitOr is the bitwise or of two integer tensors, with broadcasting.
func BitOr(a, b *Node) *Node { return Apply(OpBitOr, nil, a, b) }

// BitXor is the bitwise exclusive or of two integer tensors, with broadcasting.
func BitXor(a, b *Node) *Node { return Apply(OpBitXor, nil, a, b) }

// ShiftLeft shifts the bits of a left by b places (0 from the width on).
func ShiftLeft(a, b *Node) *Node { return Apply(OpShiftLeft, nil, a, b) }

// ShiftRight shifts the bits of a right by b places, shifting zeros in: the logical
// shift, which treats the values as unsigned (0 from the width on).
func ShiftRight(a, b *Node) *Node { return Apply(OpShiftRight, nil, a, b) }

// Atan is the arctangent, in (-π/2, π/2).
func Atan(x *Node) *Node { return Apply(OpAtan, nil, x) }

// Sinh is the hyperbolic sine.
func Sinh(x *Node) *Node { return Apply(OpSinh, nil, x) }

// Cosh is the hyperbolic cosine.
func Cosh(x *Node) *Node { return Apply(OpCosh, nil, x) }

// Asin is the arcsine, in [-π/2, π/2] (NaN outside [-1, 1]).
func Asin(x *Node) *Node { return Apply(OpAsin, nil, x) }

// Acos is the arccosine, in [0, π] (NaN outside [-1, 1]).
func Acos(x *Node) *Node { return Apply(OpAcos, nil, x) }

// Asinh is the inverse hyperbolic sine.
func Asinh(x *Node) *Node { return Apply(OpAsinh, nil, x) }

// Acosh is the inverse hyperbolic cosine (NaN below 1).
func Acosh(x *Node) *Node { return Apply(OpAcosh, nil, x) }

// Atanh is the inverse hyperbolic tangent (NaN outside [-1, 1]).
func Atanh(x *Node) *Node { return Apply(OpAtanh, nil, x) }

// Floor rounds down elementwise.
func Floor(x *Node) *Node { return Apply(OpFloor, nil, x) }

// Ceil rounds up elementwise.
func Ceil(x *Node) *Node { return Apply(OpCeil, nil, x) }

// LeakyRelu returns x for x > 0 and alpha*x otherwise.
func LeakyRelu(x *Node, alpha float32) *Node { return Apply(OpLeakyRelu, AlphaAttr{alpha}, x) }

// Elu returns x for x > 0 and alpha*(eˣ-1) otherwise.
func Elu(x *Node, alpha float32) *Node { return Apply(OpElu, AlphaAttr{alpha}, x) }

// Gelu returns x·Φ(x), exactly (GeluErf) or with the tanh approximation (GeluTanh).
func Gelu(x *Node, form GeluForm) *Node { return Apply(OpGelu, GeluAttr{form}, x) }

// HardSigmoid returns max(0, min(1, alpha*x + beta)) elementwise.
func HardSigmoid(x *Node, alpha, beta float32) *Node {
	return Apply(OpHardSigmoid, HardSigmoidAttr{alpha, beta}, x)
}

// Clamp limits x to [lo, hi] elementwise.
func Clamp(x *Node, lo, hi float32) *Node { return Apply(OpClamp, ClampAttr{lo, hi}, x) }

// ScaleBias returns x*scale + bias elementwise.
func ScaleBias(x *Node, scale, bias float32) *Node { return Apply(OpScale, ScaleAttr{scale, bias}, x) }

// Scale returns x*s elementwise.
func Scale(x *Node, s float32) *Node { return Apply(OpScale, ScaleAttr{Scale: s}, x) }

// Add returns a + b with NumPy broadcasting.
func Add(a, b *Node) *Node { return Apply(OpAdd, nil, a, b) }

// Sub returns a - b with NumPy broadcasting.
func Sub(a, b *Node) *Node { return Apply(OpSub, nil, a, b) }

// Mul returns a * b elementwise with NumPy broadcasting.
func Mul(a, b *Node) *Node { return Apply(OpMul, nil, a, b) }

// Div returns a / b elementwise with NumPy broadcasting (integer division truncates).
func Div(a, b *Node) *Node { return Apply(OpDiv, nil, a, b) }

// Pow returns aᵇ elementwise with NumPy broadcasting.
func Pow(a, b *Node) *Node { return Apply(OpPow, nil, a, b) }

// Mod is the remainder of a/b with a's sign, a - b*trunc(a/b), as C's fmod and
// torch.fmod (Python's % takes b's sign instead). An integer remainder by zero is 0;
// a float one is NaN.
func Mod(a, b *Node) *Node { return Apply(OpMod, nil, a, b) }

// Maximum returns the elementwise larger of a and b with broadcasting.
func Maximum(a, b *Node) *Node { return Apply(OpMaximum, nil, a, b) }

// Minimum returns the elementwise smaller of a and b with broadcasting.
func Minimum(a, b *Node) *Node { return Apply(OpMinimum, nil, a, b) }

// scalarLike returns a rank-0 constant of x's dtype in x's graph.
func scalarLike(x *Node, v float64) *Node { return x.graph.Scalar(x.dtype, v) }

// AddScalar returns x + v, with v converted to x's dtype.
func AddScalar(x *Node, v float64) *Node { return Add(x, scalarLike(x, v)) }

// MulScalar returns x * v, with v converted to x's dtype.
func MulScalar(x *Node, v float64) *Node { return Mul(x, scalarLike(x, v)) }

// Full returns a tensor of shape filled with v (a scalar constant expanded, so it costs
// one element of constant memory).
func Full(g *Graph, dt DType, shape Shape, v float64) *Node {
	return Expand(g.Scalar(dt, v), shape...)
}

// ZerosLike returns zeros of x's dtype and shape.
func ZerosLike(x *Node) *Node { return Full(x.graph, x.dtype, x.shape, 0) }

// OnesLike returns ones of x's dtype and shape.
func OnesLike(x *Node) *Node { return Full(x.graph, x.dtype, x.shape, 1) }
