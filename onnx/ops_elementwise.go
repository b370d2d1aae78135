package onnx

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Elementwise operators: arithmetic, comparisons and logic, unary math, activations,
// and casts.

func init() {
	arith := map[string]func(a, b *tensor.Node) *tensor.Node{
		"Add": tensor.Add, "Sub": tensor.Sub, "Mul": tensor.Mul, "Div": tensor.Div,
	}
	for name, f := range arith {
		register(7, func(c *ctx) { binaryArith(c, f) }, name)
	}
	register(7, lowerPow, "Pow")
	register(10, lowerMod, "Mod")
	cmp := map[string]func(a, b *tensor.Node) *tensor.Node{
		"Greater": tensor.Greater, "GreaterOrEqual": tensor.GreaterEqual,
		"Less": tensor.Less, "LessOrEqual": tensor.LessEqual,
	}
	for name, f := range cmp {
		register(7, func(c *ctx) { c.set(0, f(c.x(0), c.x(1)), Bool) }, name)
	}
	register(7, lowerEqual, "Equal")
	logic := map[string]func(a, b *tensor.Node) *tensor.Node{"And": tensor.And, "Or": tensor.Or, "Xor": tensor.Xor}
	for name, f := range logic {
		register(1, func(c *ctx) {
			c.requireType(0, Bool)
			c.requireType(1, Bool)
			c.set(0, f(c.x(0), c.x(1)), Bool)
		}, name)
	}
	register(1, func(c *ctx) { c.requireType(0, Bool); c.set(0, tensor.Not(c.x(0)), Bool) }, "Not")
	register(7, lowerWhere, "Where")
	register(7, func(c *ctx) { variadic(c, tensor.Maximum, false) }, "Max")
	register(7, func(c *ctx) { variadic(c, tensor.Minimum, false) }, "Min")
	register(7, func(c *ctx) { variadic(c, tensor.Add, true) }, "Sum")
	register(7, lowerMean, "Mean")
	register(9, func(c *ctx) { c.requireFloat(0); c.set(0, tensor.NotEqual(c.x(0), c.x(0)), Bool) }, "IsNaN")
	register(10, lowerIsInf, "IsInf")

	unary := map[string]func(x *tensor.Node) *tensor.Node{
		"Exp": tensor.Exp, "Log": tensor.Log, "Sqrt": tensor.Sqrt, "Sin": tensor.Sin, "Cos": tensor.Cos,
		"Tanh": tensor.Tanh, "Sigmoid": tensor.Sigmoid, "Erf": tensor.Erf, "Floor": tensor.Floor,
		"Ceil": tensor.Ceil, "Softplus": tensor.Softplus,
		"Reciprocal": func(x *tensor.Node) *tensor.Node { return tensor.Div(x.Graph().Scalar(x.DType(), 1), x) },
		"Tan":        tensor.Tan,
		"Atan":       tensor.Atan,
		"Softsign": func(x *tensor.Node) *tensor.Node {
			return tensor.Div(x, tensor.Add(x.Graph().Scalar(x.DType(), 1), tensor.Abs(x)))
		},
		"Mish":      func(x *tensor.Node) *tensor.Node { return tensor.Mul(x, tensor.Tanh(tensor.Softplus(x))) },
		"HardSwish": tensor.HardSwish,
		"Round":     tensor.Round,
	}
	for name, f := range unary {
		register(7, func(c *ctx) { c.requireFloat(0); c.set(0, f(c.x(0)), c.dtype(0)) }, name)
	}
	// Abs, Neg, Sign and Relu also take integers (narrow ones wrap: |-128| is -128 in
	// int8).
	numeric := map[string]func(x *tensor.Node) *tensor.Node{
		"Abs": tensor.Abs, "Neg": tensor.Neg, "Sign": tensor.Sign, "Relu": tensor.Relu,
	}
	for name, f := range numeric {
		register(7, func(c *ctx) {
			c.requireNumeric(0)
			c.set(0, c.wrap(f(c.x(0)), c.dtype(0)), c.dtype(0))
		}, name)
	}
	register(7, func(c *ctx) { c.pass(0, 0) }, "Identity")
	register(7, lowerClip, "Clip")
	register(7, lowerActivation, "LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "ThresholdedRelu", "Gelu")
	register(7, lowerPRelu, "PRelu")
	register(7, lowerCast, "Cast")
	register(15, lowerCastLike, "CastLike")
}

// requireType fails unless input i has type dt.
func (c *ctx) requireType(i int, dt DataType) {
	if c.dtype(i) != dt {
		c.failf("input %d is %v, want %v", i, c.dtype(i), dt)
	}
}

// requireFloat fails unless input i has a float type.
func (c *ctx) requireFloat(i int) {
	if !c.dtype(i).IsFloat() {
		c.failf("input %d is %v, want a float type", i, c.dtype(i))
	}
}

// requireNumeric fails for bool inputs.
func (c *ctx) requireNumeric(i int) {
	if c.dtype(i) == Bool {
		c.failf("input %d is bool, want a number type", i)
	}
}

// sameTypes fails unless the listed inputs share one type, which it returns.
func (c *ctx) sameTypes(idx ...int) DataType {
	dt := c.dtype(idx[0])
	for _, i := range idx[1:] {
		if c.has(i) && c.dtype(i) != dt {
			c.failf("inputs %d and %d have different types (%v, %v)", idx[0], i, dt, c.dtype(i))
		}
	}
	return dt
}

// binaryArith lowers Add, Sub, Mul and Div.
func binaryArith(c *ctx, f func(a, b *tensor.Node) *tensor.Node) {
	dt := c.sameTypes(0, 1)
	c.requireNumeric(0)
	c.set(0, c.wrap(f(c.x(0), c.x(1)), dt), dt)
}

// lowerPow: the exponent may have another numeric type than the base.
func lowerPow(c *ctx) {
	dt := c.dtype(0)
	c.requireNumeric(0)
	c.requireNumeric(1)
	e := c.x(1)
	if e.DType() != dt.Carrier() {
		e = tensor.Cast(e, dt.Carrier())
	}
	c.set(0, c.wrap(tensor.Pow(c.x(0), e), dt), dt)
}

// lowerMod: fmod=0 (integers only) takes the divisor's sign, as Python's %; fmod=1
// takes the dividend's, as C's fmod.
func lowerMod(c *ctx) {
	dt := c.sameTypes(0, 1)
	c.requireNumeric(0)
	fmod := c.attrInt("fmod", 0)
	x, y := c.x(0), c.x(1)
	if fmod == 0 && dt.IsFloat() {
		c.failf("fmod=0 is for integers; float inputs need fmod=1")
	}
	r := tensor.Mod(x, y)
	if fmod == 0 {
		r = floorMod(x, y)
	}
	c.set(0, c.wrap(r, dt), dt)
}

// lowerEqual also compares booleans (not xor).
func lowerEqual(c *ctx) {
	dt := c.sameTypes(0, 1)
	if dt == Bool {
		c.set(0, tensor.Not(tensor.Xor(c.x(0), c.x(1))), Bool)
		return
	}
	c.set(0, tensor.Equal(c.x(0), c.x(1)), Bool)
}

func lowerWhere(c *ctx) {
	c.requireType(0, Bool)
	dt := c.sameTypes(1, 2)
	c.set(0, tensor.Where(c.x(0), c.x(1), c.x(2)), dt)
}

// variadic folds Max, Min and Sum over their inputs (broadcasting).
func variadic(c *ctx, f func(a, b *tensor.Node) *tensor.Node, wrap bool) {
	idx := make([]int, c.nin())
	for i := range idx {
		idx[i] = i
	}
	dt := c.sameTypes(idx...)
	acc := c.x(0)
	for i := 1; i < c.nin(); i++ {
		acc = f(acc, c.x(i))
	}
	if c.nin() == 1 {
		c.pass(0, 0)
		return
	}
	if wrap {
		acc = c.wrap(acc, dt)
	}
	c.set(0, acc, dt)
}

func lowerMean(c *ctx) {
	c.requireFloat(0)
	variadic(c, tensor.Add, false)
	if c.nin() > 1 {
		sum := c.outs[0].node
		c.set(0, tensor.Div(sum, c.scalar(sum.DType(), float64(c.nin()))), c.dtype(0))
	}
}

func lowerIsInf(c *ctx) {
	c.requireFloat(0)
	pos, neg := c.attrInt("detect_positive", 1), c.attrInt("detect_negative", 1)
	x := c.x(0)
	dt := x.DType()
	isPos := tensor.Equal(x, c.scalar(dt, math.Inf(1)))
	isNeg := tensor.Equal(x, c.scalar(dt, math.Inf(-1)))
	var r *tensor.Node
	switch {
	case pos != 0 && neg != 0:
		r = tensor.Or(isPos, isNeg)
	case pos != 0:
		r = isPos
	case neg != 0:
		r = isNeg
	default:
		r = tensor.Full(c.g, tensor.Bool, x.Shape(), 0)
	}
	c.set(0, r, Bool)
}

// lowerClip: bounds are attributes before opset 11 and optional inputs from it.
func lowerClip(c *ctx) {
	dt := c.dtype(0)
	c.requireNumeric(0)
	x := c.x(0)
	if c.opset() < 11 {
		lo := c.attrFloat("min", -math.MaxFloat32)
		hi := c.attrFloat("max", math.MaxFloat32)
		c.set(0, tensor.Minimum(tensor.Maximum(x, c.scalar(x.DType(), float64(lo))), c.scalar(x.DType(), float64(hi))), dt)
		return
	}
	if c.has(1) {
		c.sameTypes(0, 1)
		x = tensor.Maximum(x, c.x(1))
	}
	if c.has(2) {
		c.sameTypes(0, 2)
		x = tensor.Minimum(x, c.x(2))
	}
	c.set(0, x, dt)
}

// lowerActivation lowers the parameterised activations.
func lowerActivation(c *ctx) {
	c.requireFloat(0)
	x := c.x(0)
	dt := x.DType()
	s := func(v float32) *tensor.Node { return c.scalar(dt, float64(v)) }
	var y *tensor.Node
	switch c.n.op {
	case "LeakyRelu":
		y = tensor.LeakyRelu(x, c.attrFloat("alpha", 0.01))
	case "Elu":
		y = tensor.Elu(x, c.attrFloat("alpha", 1))
	case "Selu":
		alpha := c.attrFloat("alpha", 1.67326319217681884765625)
		gamma := c.attrFloat("gamma", 1.05070102214813232421875)
		y = tensor.Mul(tensor.Elu(x, alpha), s(gamma))
	case "Celu":
		// max(0, x) + min(0, alpha*(exp(x/alpha) - 1))
		alpha := c.attrFloat("alpha", 1)
		y = tensor.Mul(tensor.Elu(tensor.Div(x, s(alpha)), 1), s(alpha))
	case "HardSigmoid":
		y = tensor.HardSigmoid(x, c.attrFloat("alpha", 0.2), c.attrFloat("beta", 0.5))
	case "ThresholdedRelu":
		alpha := s(c.attrFloat("alpha", 1))
		y = tensor.Where(tensor.Greater(x, alpha), x, s(0))
	case "Gelu":
		switch a := c.attrString("approximate", "none"); a {
		case "none":
			y = tensor.Gelu(x, tensor.GeluErf)
		case "tanh":
			y = tensor.Gelu(x, tensor.GeluTanh)
		default:
			c.failf("approximate %q: want none or tanh", a)
		}
	}
	c.set(0, y, c.dtype(0))
}

// lowerPRelu: the slope broadcasts to x (unidirectionally).
func lowerPRelu(c *ctx) {
	dt := c.sameTypes(0, 1)
	c.requireNumeric(0)
	x := c.x(0)
	zero := c.scalar(x.DType(), 0)
	c.set(0, tensor.Where(tensor.Less(x, zero), tensor.Mul(x, c.x(1)), x), dt)
}

func lowerCast(c *ctx) {
	to := DataType(c.attrInt("to", 0))
	sat := c.attrInt("saturate", 1) != 0
	c.attrString("round_mode", "up")
	c.set(0, c.cast(c.x(0), c.dtype(0), to, sat), to)
}

func lowerCastLike(c *ctx) {
	sat := c.attrInt("saturate", 1) != 0
	c.attrString("round_mode", "up")
	to := c.dtype(1)
	c.set(0, c.cast(c.x(0), c.dtype(0), to, sat), to)
}

// cast converts x of ONNX type from to type to: the engine casts between carriers,
// then the value is brought onto the target's grid (narrow integers wrap, minifloats
// round to their precision and range).
func (c *ctx) cast(x *tensor.Node, from, to DataType, saturate bool) *tensor.Node {
	if !to.Supported() {
		c.unsupported("cast to %v", to)
	}
	if from == to {
		return x
	}
	if to == Bool && !from.IsFloat() {
		return tensor.NotEqual(x, c.scalar(x.DType(), 0))
	}
	if from == Bool && to.Carrier() == tensor.I32 {
		return tensor.Cast(x, tensor.I32)
	}
	y := x
	if x.DType() != to.Carrier() {
		y = tensor.Cast(y, to.Carrier()) // floats to integers round toward zero, as in C
	}
	if from == Uint64 && to.IsFloat() {
		// The carrier holds the bit pattern: values from 2^63 read as negative.
		neg := tensor.Less(x, c.scalar(tensor.I64, 0))
		y = tensor.Where(neg, tensor.Add(y, c.scalar(y.DType(), math.Exp2(64))), y)
	}
	switch {
	case to == Float8E8M0:
		y = roundPowerOfTwo(c, toF32(y), c.attrString("round_mode", "up"), saturate)
	case minifloats[to] != minifloat{}:
		y = roundMinifloat(y, minifloats[to], saturate)
	case to == Double || to.IsFloat():
	default:
		y = c.wrap(y, to)
	}
	return y
}

// roundMinifloat rounds float32 values to an 8- or 4-bit float format, ties to even:
// magnitudes on the grid of 2^(e-mbits) for their exponent e (the subnormal grid below
// the smallest normal), then the largest finite value, infinity or NaN for those beyond
// the range. The exponent's step comes from a chain of comparisons with the powers of
// two, which is exact where a logarithm would not be.
func roundMinifloat(x *tensor.Node, f minifloat, saturate bool) *tensor.Node {
	g, dt := x.Graph(), x.DType()
	s := func(v float64) *tensor.Node { return g.Scalar(dt, v) }
	a := tensor.Abs(x)
	step := s(math.Ldexp(1, f.minExp()-f.mbits))
	top := math.Ilogb(f.maxFinite())
	for e := f.minExp() + 1; e <= top; e++ {
		step = tensor.Where(tensor.GreaterEqual(a, s(math.Ldexp(1, e))), s(math.Ldexp(1, e-f.mbits)), step)
	}
	r := tensor.Mul(tensor.Round(tensor.Div(a, step)), step)
	over := tensor.Greater(r, s(f.maxFinite()))
	switch {
	case f.noNaN:
		// No NaN to give: NaN becomes zero, as the reference conversion does.
		r = tensor.Where(over, s(f.maxFinite()), r)
		r = tensor.Where(tensor.NotEqual(a, a), s(0), r)
	case saturate:
		r = tensor.Where(over, s(f.maxFinite()), r)
	case f.inf:
		r = tensor.Where(over, s(math.Inf(1)), r)
	default:
		r = tensor.Where(over, s(math.NaN()), r)
	}
	neg := tensor.Less(x, s(0))
	return tensor.Where(neg, tensor.Neg(r), r)
}

// roundPowerOfTwo rounds positive float32 values to powers of two, as FLOAT8E8M0 holds
// them: up to the next one, down to the previous one, or to the nearest (ties up, the
// midpoint being 1.5 times the lower one), within [2^-127, 2^127] (beyond it infinity
// or NaN without saturate). The exponent comes from a logarithm and is then corrected
// against the exact power of two, so it is exact where the logarithm is not.
func roundPowerOfTwo(c *ctx, x *tensor.Node, mode string, saturate bool) *tensor.Node {
	s := func(v float64) *tensor.Node { return c.scalar(tensor.F32, v) }
	two := s(2)
	lo := tensor.Pow(two, tensor.Floor(tensor.Div(tensor.Log(x), s(math.Ln2))))
	// The logarithm may be one off near a power of two.
	lo = tensor.Where(tensor.Greater(lo, x), tensor.Div(lo, two), lo)
	lo = tensor.Where(tensor.LessEqual(tensor.Mul(lo, two), x), tensor.Mul(lo, two), lo)
	var r *tensor.Node
	switch mode {
	case "up":
		r = tensor.Where(tensor.Less(lo, x), tensor.Mul(lo, two), lo)
	case "down":
		r = lo
	case "nearest":
		r = tensor.Where(tensor.GreaterEqual(x, tensor.Mul(lo, s(1.5))), tensor.Mul(lo, two), lo)
	default:
		c.failf("round_mode %q: want up, down or nearest", mode)
	}
	top := math.Ldexp(1, 127)
	over := tensor.Greater(r, s(top))
	if saturate {
		r = tensor.Where(over, s(top), r)
	} else {
		r = tensor.Where(over, s(math.NaN()), r)
	}
	// Zero, negative and tiny values take the smallest code; NaN stays NaN.
	return tensor.Where(tensor.LessEqual(x, s(math.Ldexp(1, -127))), s(math.Ldexp(1, -127)), r)
}
