package tensor

import "fmt"

// Unary elementwise ops keep shape and dtype. The float-only ones reject integer inputs.

func init() {
	for _, op := range []Op{OpNeg, OpAbs, OpSign, OpExp, OpLog, OpSqrt, OpRsqrt, OpSquare, OpSin, OpCos,
		OpTanh, OpSigmoid, OpRelu, OpLeakyRelu, OpElu, OpGelu, OpSilu, OpSoftplus, OpHardSigmoid,
		OpHardSwish, OpErf, OpFloor, OpCeil, OpClamp, OpScale} {
		registerShape(op, unaryRule(op))
	}
	for _, op := range []Op{OpAdd, OpSub, OpMul, OpDiv, OpPow, OpMaximum, OpMinimum} {
		registerShape(op, binaryRule(false))
	}
	for _, op := range []Op{OpEqual, OpNotEqual, OpLess, OpLessEqual, OpGreater, OpGreaterEqual, OpAnd, OpOr, OpXor} {
		registerShape(op, binaryRule(true))
	}
}

// floatOnly lists unary ops that make no sense on integers.
var floatOnly = map[Op]bool{OpExp: true, OpLog: true, OpSqrt: true, OpRsqrt: true, OpSin: true, OpCos: true,
	OpTanh: true, OpSigmoid: true, OpElu: true, OpGelu: true, OpSilu: true, OpSoftplus: true,
	OpHardSigmoid: true, OpHardSwish: true, OpErf: true}

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
		if floatOnly[op] && !x.dtype.IsFloat() {
			return 0, nil, nil, fmt.Errorf("needs a floating-point input, have %v", x.dtype)
		}
		if x.dtype == Bool {
			return 0, nil, nil, fmt.Errorf("does not take a bool input")
		}
		def, parameterised := unaryAttrs[op]
		switch {
		case !parameterised && attr != nil:
			return 0, nil, nil, fmt.Errorf("takes no attribute, got %T", attr)
		case parameterised && attr == nil:
			attr = def
		case parameterised && fmt.Sprintf("%T", attr) != fmt.Sprintf("%T", def):
			return 0, nil, nil, fmt.Errorf("attribute must be %T, got %T", def, attr)
		}
		return x.dtype, x.shape, attr, nil
	}
}

func binaryRule(boolOut bool) shapeRule {
	return func(attr any, in []*Node) (DType, Shape, any, error) {
		a, b := in[0], in[1]
		if a.dtype != b.dtype {
			return 0, nil, nil, fmt.Errorf("dtypes differ: %s (cast one input first)", shapesOf(in))
		}
		s, ok := Broadcast(a.shape, b.shape)
		if !ok {
			return 0, nil, nil, fmt.Errorf("shapes %v and %v do not broadcast", a.shape, b.shape)
		}
		if boolOut {
			return Bool, s, nil, nil
		}
		if a.dtype == Bool {
			return 0, nil, nil, fmt.Errorf("arithmetic on bool inputs: %s", shapesOf(in))
		}
		return a.dtype, s, nil, nil
	}
}

// Neg returns -x.
func Neg(x *Node) *Node { return Apply(OpNeg, nil, x) }

// Exp returns eˣ elementwise.
func Exp(x *Node) *Node { return Apply(OpExp, nil, x) }

// Log returns the natural logarithm elementwise.
func Log(x *Node) *Node { return Apply(OpLog, nil, x) }

// Tanh returns the hyperbolic tangent elementwise.
func Tanh(x *Node) *Node { return Apply(OpTanh, nil, x) }

// Sigmoid returns 1/(1+e⁻ˣ) elementwise.
func Sigmoid(x *Node) *Node { return Apply(OpSigmoid, nil, x) }

// Relu returns max(x, 0) elementwise.
func Relu(x *Node) *Node { return Apply(OpRelu, nil, x) }

// LeakyRelu returns x for x > 0 and alpha*x otherwise.
func LeakyRelu(x *Node, alpha float32) *Node { return Apply(OpLeakyRelu, AlphaAttr{alpha}, x) }

// ScaleBias returns x*scale + bias elementwise.
func ScaleBias(x *Node, scale, bias float32) *Node { return Apply(OpScale, ScaleAttr{scale, bias}, x) }

// Add returns a + b with NumPy broadcasting.
func Add(a, b *Node) *Node { return Apply(OpAdd, nil, a, b) }

// Sub returns a - b with NumPy broadcasting.
func Sub(a, b *Node) *Node { return Apply(OpSub, nil, a, b) }

// Mul returns a * b elementwise with NumPy broadcasting.
func Mul(a, b *Node) *Node { return Apply(OpMul, nil, a, b) }

// Div returns a / b elementwise with NumPy broadcasting.
func Div(a, b *Node) *Node { return Apply(OpDiv, nil, a, b) }
