package backendtest

import (
	"math"
	"math/rand/v2"

	t "github.com/gml-dev/gml/tensor"
)

// Cases of the elementwise ops. A unary or binary op is one row of unarySpecs or
// binarySpecs: its float64 reference and where its inputs come from. Each row expands
// to cases over odd, scalar, empty and multi-workgroup shapes (binary ops: broadcast
// patterns), every dtype the op table accepts for the op, and, for a differentiable
// op, a gradient case.

var (
	floatTypes = []t.DType{t.F32, t.F16, t.BF16}
	intTypes   = []t.DType{t.I32, t.I64}
)

// unarySpec is one unary op's row.
type unarySpec struct {
	op  t.Op
	ref func(x float64, attr any) float64
	// attrs are the attributes to test (nil: the op takes none).
	attrs  []any
	lo, hi float64 // the range of float inputs
	// kinks are points where the function is not smooth: gradient inputs keep 0.05
	// away from them.
	kinks []float64
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

var unarySpecs = []unarySpec{
	{op: t.OpNeg, ref: func(x float64, _ any) float64 { return -x }, lo: -2, hi: 2},
	{op: t.OpAbs, ref: func(x float64, _ any) float64 { return math.Abs(x) }, lo: -2, hi: 2, kinks: []float64{0}},
	{op: t.OpSign, ref: func(x float64, _ any) float64 { return b2f(x > 0) - b2f(x < 0) }, lo: -2, hi: 2},
	{op: t.OpExp, ref: func(x float64, _ any) float64 { return math.Exp(x) }, lo: -3, hi: 3},
	{op: t.OpLog, ref: func(x float64, _ any) float64 { return math.Log(x) }, lo: 0.1, hi: 3},
	{op: t.OpSqrt, ref: func(x float64, _ any) float64 { return math.Sqrt(x) }, lo: 0.1, hi: 3},
	{op: t.OpRsqrt, ref: func(x float64, _ any) float64 { return 1 / math.Sqrt(x) }, lo: 0.1, hi: 3},
	{op: t.OpSquare, ref: func(x float64, _ any) float64 { return x * x }, lo: -2, hi: 2},
	{op: t.OpSin, ref: func(x float64, _ any) float64 { return math.Sin(x) }, lo: -3, hi: 3},
	{op: t.OpCos, ref: func(x float64, _ any) float64 { return math.Cos(x) }, lo: -3, hi: 3},
	{op: t.OpTanh, ref: func(x float64, _ any) float64 { return math.Tanh(x) }, lo: -4, hi: 4},
	{op: t.OpSigmoid, ref: func(x float64, _ any) float64 { return sigmoid(x) }, lo: -8, hi: 8},
	{op: t.OpRelu, ref: func(x float64, _ any) float64 { return math.Max(x, 0) }, lo: -2, hi: 2, kinks: []float64{0}},
	{op: t.OpLeakyRelu, ref: func(x float64, a any) float64 {
		if x < 0 {
			return float64(a.(t.AlphaAttr).Alpha) * x
		}
		return x
	}, attrs: []any{t.AlphaAttr{Alpha: 0.1}}, lo: -2, hi: 2, kinks: []float64{0}},
	{op: t.OpElu, ref: func(x float64, a any) float64 {
		if x > 0 {
			return x
		}
		return float64(a.(t.AlphaAttr).Alpha) * math.Expm1(x)
	}, attrs: []any{t.AlphaAttr{Alpha: 1.5}}, lo: -3, hi: 2, kinks: []float64{0}},
	{op: t.OpGelu, ref: func(x float64, a any) float64 {
		if a.(t.GeluAttr).Form == t.GeluTanh {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}
		return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
	}, attrs: []any{t.GeluAttr{Form: t.GeluErf}, t.GeluAttr{Form: t.GeluTanh}}, lo: -4, hi: 4},
	{op: t.OpSilu, ref: func(x float64, _ any) float64 { return x * sigmoid(x) }, lo: -5, hi: 5},
	{op: t.OpSoftplus, ref: func(x float64, _ any) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }, lo: -20, hi: 20},
	{op: t.OpSoftsign, ref: func(x float64, _ any) float64 { return x / (1 + math.Abs(x)) }, lo: -6, hi: 6},
	{op: t.OpHardSigmoid, ref: func(x float64, a any) float64 {
		at := a.(t.HardSigmoidAttr)
		return math.Min(math.Max(float64(at.Alpha)*x+float64(at.Beta), 0), 1)
	}, attrs: []any{t.HardSigmoidAttr{Alpha: 0.2, Beta: 0.5}}, lo: -4, hi: 4, kinks: []float64{-2.5, 2.5}},
	{op: t.OpHardSwish, ref: func(x float64, _ any) float64 { return x * math.Min(math.Max(x/6+0.5, 0), 1) }, lo: -5, hi: 5, kinks: []float64{-3, 3}},
	{op: t.OpErf, ref: func(x float64, _ any) float64 { return math.Erf(x) }, lo: -2.5, hi: 2.5},
	{op: t.OpFloor, ref: func(x float64, _ any) float64 { return math.Floor(x) }, lo: -3, hi: 3},
	{op: t.OpCeil, ref: func(x float64, _ any) float64 { return math.Ceil(x) }, lo: -3, hi: 3},
	{op: t.OpRound, ref: func(x float64, _ any) float64 { return math.RoundToEven(x) }, lo: -4, hi: 4},
	{op: t.OpTan, ref: func(x float64, _ any) float64 { return math.Tan(x) }, lo: -1.2, hi: 1.2},
	{op: t.OpAtan, ref: func(x float64, _ any) float64 { return math.Atan(x) }, lo: -4, hi: 4},
	{op: t.OpSinh, ref: func(x float64, _ any) float64 { return math.Sinh(x) }, lo: -3, hi: 3},
	{op: t.OpCosh, ref: func(x float64, _ any) float64 { return math.Cosh(x) }, lo: -3, hi: 3},
	{op: t.OpAsin, ref: func(x float64, _ any) float64 { return math.Asin(x) }, lo: -0.9, hi: 0.9},
	{op: t.OpAcos, ref: func(x float64, _ any) float64 { return math.Acos(x) }, lo: -0.9, hi: 0.9},
	{op: t.OpAsinh, ref: func(x float64, _ any) float64 { return math.Asinh(x) }, lo: -4, hi: 4},
	{op: t.OpAcosh, ref: func(x float64, _ any) float64 { return math.Acosh(x) }, lo: 1.1, hi: 4},
	{op: t.OpAtanh, ref: func(x float64, _ any) float64 { return math.Atanh(x) }, lo: -0.9, hi: 0.9},
	{op: t.OpClamp, ref: func(x float64, a any) float64 {
		at := a.(t.ClampAttr)
		return math.Min(math.Max(x, float64(at.Min)), float64(at.Max))
	}, attrs: []any{t.ClampAttr{Min: -0.5, Max: 1}}, lo: -2, hi: 2, kinks: []float64{-0.5, 1}},
	{op: t.OpScale, ref: func(x float64, a any) float64 {
		at := a.(t.ScaleAttr)
		return x*float64(at.Scale) + float64(at.Bias)
	}, attrs: []any{t.ScaleAttr{Scale: 3, Bias: -1}}, lo: -2, hi: 2},
	{op: t.OpNot, ref: func(x float64, _ any) float64 { return b2f(x == 0) }},
	{op: t.OpBitNot, ref: func(x float64, _ any) float64 { return float64(^int64(x)) }},
}

// binarySpec is one binary op's row: its reference (integer selects the integer
// semantics: division truncates and a zero divisor gives 0) and its inputs' ranges.
type binarySpec struct {
	op       t.Op
	ref      func(a, b float64, integer bool) float64
	a, b     func(r *rand.Rand, n int) []float64 // float operands
	ia, ib   func(r *rand.Rand, n int) []float64 // integer operands (nil: whole numbers in [-20, 20])
	gradA    func(r *rand.Rand, n int) []float64 // gradient-case operands (nil: a, b)
	gradB    func(r *rand.Rand, n int) []float64
	smallInt bool
}

// modDividends draws values of either sign with magnitudes in (2.2, 2.8).
func modDividends(r *rand.Rand, n int) []float64 {
	v := Uniform(2.2, 2.8)(r, n)
	for i := range v {
		if r.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	return v
}

var (
	smooth   = Uniform(-1, 1)
	positive = Uniform(0.5, 2)
	wide     = Uniform(-3, 3)
	// fewValues draws from a handful of values, so comparisons meet ties.
	fewValues = func(r *rand.Rand, n int) []float64 {
		v := Ints(-2, 2)(r, n)
		for i := range v {
			v[i] /= 2
		}
		return v
	}
)

var binarySpecs = []binarySpec{
	{op: t.OpAdd, ref: func(a, b float64, _ bool) float64 { return a + b }},
	{op: t.OpSub, ref: func(a, b float64, _ bool) float64 { return a - b }},
	{op: t.OpMul, ref: func(a, b float64, _ bool) float64 { return a * b }},
	{op: t.OpDiv, ref: func(a, b float64, integer bool) float64 {
		if integer && b == 0 {
			return 0
		}
		return a / b
	}, b: positive},
	{op: t.OpPow, ref: func(a, b float64, _ bool) float64 { return math.Pow(a, b) },
		a: Uniform(0.1, 2), b: Uniform(-2, 2), ia: Ints(-4, 4), ib: Ints(0, 4), gradA: positive, gradB: Uniform(-1.5, 1.5)},
	// Quotients stay away from the jumps at integers: |a| in (2.2, 2.8), b in (1, 1.05).
	{op: t.OpMod, ref: func(a, b float64, integer bool) float64 {
		if integer && b == 0 {
			return 0
		}
		return math.Mod(a, b)
	}, a: modDividends, b: Uniform(1, 1.05)},
	{op: t.OpMaximum, ref: func(a, b float64, _ bool) float64 { return math.Max(a, b) },
		gradA: Distinct(-1, 1), gradB: Distinct(-0.9, 1.1)},
	{op: t.OpMinimum, ref: func(a, b float64, _ bool) float64 { return math.Min(a, b) },
		gradA: Distinct(-1, 1), gradB: Distinct(-0.95, 1.05)},
	{op: t.OpEqual, ref: func(a, b float64, _ bool) float64 { return b2f(a == b) }, a: fewValues, b: fewValues},
	{op: t.OpNotEqual, ref: func(a, b float64, _ bool) float64 { return b2f(a != b) }, a: fewValues, b: fewValues},
	{op: t.OpLess, ref: func(a, b float64, _ bool) float64 { return b2f(a < b) }, a: fewValues, b: fewValues},
	{op: t.OpLessEqual, ref: func(a, b float64, _ bool) float64 { return b2f(a <= b) }, a: fewValues, b: fewValues},
	{op: t.OpGreater, ref: func(a, b float64, _ bool) float64 { return b2f(a > b) }, a: fewValues, b: fewValues},
	{op: t.OpGreaterEqual, ref: func(a, b float64, _ bool) float64 { return b2f(a >= b) }, a: fewValues, b: fewValues},
	{op: t.OpAnd, ref: func(a, b float64, _ bool) float64 { return b2f(a != 0 && b != 0) }},
	{op: t.OpOr, ref: func(a, b float64, _ bool) float64 { return b2f(a != 0 || b != 0) }},
	{op: t.OpXor, ref: func(a, b float64, _ bool) float64 { return b2f((a != 0) != (b != 0)) }},
	{op: t.OpBitAnd, ref: func(a, b float64, _ bool) float64 { return float64(int64(a) & int64(b)) }},
	{op: t.OpBitOr, ref: func(a, b float64, _ bool) float64 { return float64(int64(a) | int64(b)) }},
	{op: t.OpBitXor, ref: func(a, b float64, _ bool) float64 { return float64(int64(a) ^ int64(b)) }},
	// Non-negative values and small counts: the results do not depend on the width.
	{op: t.OpShiftLeft, ref: func(a, b float64, _ bool) float64 { return float64(int64(a) << uint(b)) },
		ia: Ints(-50, 50), ib: Ints(0, 6)},
	{op: t.OpShiftRight, ref: func(a, b float64, _ bool) float64 { return float64(int64(a) >> uint(b)) },
		ia: Ints(0, 1000), ib: Ints(0, 6)},
}

// Shapes of the elementwise cases: odd, scalar, empty, and large enough to split
// across goroutines and workgroups with a ragged end.
var unaryShapes = []t.Shape{{3, 5}, {}, {0, 4}, {70001}}

// binaryShapes pair operands that broadcast in every pattern: equal, a trailing
// vector, both sides, scalars, empty, interleaved ones, a large broadcast row, and
// seven axes that collapse to six.
var binaryShapes = [][2]t.Shape{
	{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1, 3}, {4, 1}}, {{}, {2, 2}}, {{1}, {3, 1}},
	{{0, 3}, {1, 3}}, {{3, 1, 2, 1}, {1, 4, 1, 5}}, {{300, 200}, {200}}, {{5, 1}, {}},
	{{2, 3, 1, 2, 3, 1, 2}, {3, 2, 1, 1, 2}},
}

// accepted keeps the dtypes of dts that op accepts.
func accepted(op t.Op, dts []t.DType) []t.DType {
	var out []t.DType
	for _, d := range dts {
		if op.DTypes().Has(d) {
			out = append(out, d)
		}
	}
	return out
}

func elementwiseCases() []Case {
	var cs []Case
	for _, s := range unarySpecs {
		attrs := s.attrs
		if attrs == nil {
			attrs = []any{nil}
		}
		for _, attr := range attrs {
			name := s.op.String()
			if g, ok := attr.(t.GeluAttr); ok && g.Form == t.GeluTanh {
				name += "_tanh"
			}
			build := func(x []*t.Node) *t.Node { return t.Apply(s.op, attr, x[0]) }
			floats := accepted(s.op, floatTypes)
			for i, sh := range unaryShapes {
				dts := floats
				if i > 0 || s.op == t.OpNot {
					dts = accepted(s.op, []t.DType{t.F32})
				}
				if len(dts) > 0 {
					cs = append(cs, Case{Name: name + sh.String(), Inputs: []Input{{Shape: sh, Gen: Uniform(s.lo, s.hi)}}, Build: build, DTypes: dts})
				}
			}
			if ints := accepted(s.op, intTypes); len(ints) > 0 {
				cs = append(cs, Case{Name: name + "_int", Inputs: []Input{{Shape: t.Shape{7, 9}}}, Build: build, DTypes: ints})
			}
			if s.op.DTypes().Has(t.Bool) {
				cs = append(cs, Case{Name: name + "_bool", Inputs: []Input{{Shape: t.Shape{7, 9}}}, Build: build, DTypes: []t.DType{t.Bool}})
			}
			if t.Differentiable(s.op) {
				cs = append(cs, Case{Name: name + "_grad", Inputs: []Input{{Shape: t.Shape{3, 4}, Gen: Away(s.lo, s.hi, 0.05, s.kinks...)}},
					Build: build, Grad: true})
			}
		}
	}
	for _, s := range binarySpecs {
		build := func(x []*t.Node) *t.Node { return t.Apply(s.op, nil, x[0], x[1]) }
		a, b := s.a, s.b
		if a == nil {
			a = Uniform(-2, 2)
		}
		if b == nil {
			b = Uniform(-2, 2)
		}
		if s.op.DTypes().Has(t.Bool) {
			for _, sh := range binaryShapes[:4] {
				cs = append(cs, Case{Name: s.op.String() + sh[0].String() + sh[1].String(),
					Inputs: []Input{{Shape: sh[0]}, {Shape: sh[1]}}, Build: build, DTypes: []t.DType{t.Bool}})
			}
			continue
		}
		for i, sh := range binaryShapes {
			if !s.op.DTypes().Has(t.F32) {
				break // an integer op: the integer cases below
			}
			dts := []t.DType{t.F32}
			if i == 2 {
				dts = floatTypes
			}
			cs = append(cs, Case{Name: s.op.String() + sh[0].String() + sh[1].String(),
				Inputs: []Input{{Shape: sh[0], Gen: a}, {Shape: sh[1], Gen: b}}, Build: build, DTypes: dts})
		}
		for _, sh := range [][2]t.Shape{{{4, 5}, {4, 5}}, {{2, 1, 3}, {4, 1}}} {
			cs = append(cs, Case{Name: s.op.String() + "_int" + sh[0].String() + sh[1].String(),
				Inputs: []Input{{Shape: sh[0], Gen: s.ia}, {Shape: sh[1], Gen: s.ib}}, Build: build, DTypes: intTypes})
		}
		if t.Differentiable(s.op) {
			ga, gb := s.gradA, s.gradB
			if ga == nil {
				ga, gb = smooth, smooth
			}
			if s.op == t.OpDiv {
				gb = positive
			}
			cs = append(cs, Case{Name: s.op.String() + "_grad", Inputs: []Input{{Shape: t.Shape{2, 3}, Gen: ga}, {Shape: t.Shape{3}, Gen: gb}},
				Build: build, Grad: true})
		}
	}
	return append(cs, elementwiseMiscCases()...)
}

// elementwiseMiscCases: Where, Cast, ties and reuse.
func elementwiseMiscCases() []Case {
	cond := func(shape ...int) Input { return Input{Shape: shape, DType: t.Bool, Own: true} }
	where := func(x []*t.Node) *t.Node { return t.Where(x[0], x[1], x[2]) }
	cs := []Case{
		{Name: "where", Inputs: []Input{cond(2, 3), {Shape: t.Shape{2, 3}}, {Shape: t.Shape{3}}}, Build: where,
			DTypes: []t.DType{t.F32, t.F16, t.BF16, t.I32, t.I64, t.Bool}},
		{Name: "where_broadcast_all", Inputs: []Input{cond(4, 1, 3), {Shape: t.Shape{2, 1}}, {Shape: t.Shape{}}}, Build: where},
		{Name: "where_large", Inputs: []Input{cond(300, 70), {Shape: t.Shape{300, 70}}, {Shape: t.Shape{70}}}, Build: where},
		{Name: "where_grad", Inputs: []Input{{Shape: t.Shape{2, 3}, DType: t.Bool, Own: true, Values: []float64{1, 0, 1, 0, 0, 1}},
			{Shape: t.Shape{2, 3}}, {Shape: t.Shape{3}}}, Build: where, Grad: true},
		// max(x, x) = x: the tie splits the gradient in halves that add up to one.
		{Name: "maximum_tie_grad", Inputs: []Input{{Shape: t.Shape{2, 3}}},
			Build: func(x []*t.Node) *t.Node { return t.Maximum(x[0], x[0]) }, Grad: true},
		// A value used several times accumulates its gradients.
		{Name: "reuse_grad", Inputs: []Input{{Shape: t.Shape{2, 3}}},
			Build: func(x []*t.Node) *t.Node { return t.Mul(t.Exp(x[0]), t.Add(x[0], t.Sin(x[0]))) }, Grad: true},
		// floor, ceil, round and sign pass no gradient: only the square term contributes.
		{Name: "piecewise_constant_grad", Inputs: []Input{{Shape: t.Shape{2, 3}, Gen: Away(-1, 1, 0.03, -5.0/6, -2.0/3, -0.5, -1.0/3, -1.0/6, 0, 1.0/6, 1.0/3, 0.5, 2.0/3, 5.0/6)}},
			Build: func(x []*t.Node) *t.Node {
				k := t.MulScalar(x[0], 3)
				return t.Add(t.Square(x[0]), t.Add(t.Floor(k), t.Add(t.Ceil(k), t.Add(t.Round(k), t.Sign(x[0])))))
			}, Grad: true},
		// Through f16 and back: linear, so a large step keeps f16 rounding out of the way.
		{Name: "cast_f16_grad", Inputs: []Input{{Shape: t.Shape{2, 3}}}, Grad: true, GradStep: 0.1, GradTol: 2e-2,
			Build: func(x []*t.Node) *t.Node { return t.Cast(t.Square(t.Cast(x[0], t.F16)), t.F32) }},
	}
	// Integer division truncates toward zero, a zero divisor gives 0, and a negative
	// exponent truncates to 0 (or ±1).
	a := Input{Shape: t.Shape{6}, Values: []float64{7, -7, 3, 5, 2, -2}}
	b := Input{Shape: t.Shape{6}, Values: []float64{2, 2, 0, -1, 10, 3}}
	cs = append(cs,
		binary("div_int_signs_and_zero", a, b, t.Div).in(intTypes...),
		binary("pow_int_negative_exponent", a, b, t.Pow).in(intTypes...),
		binary("mod_int_signs_and_zero", a, b, t.Mod).in(intTypes...),
		// C's pow where GLSL's is undefined: negative bases with integral exponents, and
		// zero bases.
		binary("pow_negative_and_zero_base",
			Input{Shape: t.Shape{6}, Values: []float64{-2, -1.5, -3, 0, 0, 2}},
			Input{Shape: t.Shape{6}, Values: []float64{3, 2, -1, 2, 0, 0.5}}, t.Pow).in(t.F32),
	)
	all := []t.DType{t.F32, t.F16, t.BF16, t.I32, t.I64, t.Bool}
	for _, from := range all {
		for _, to := range all {
			cs = append(cs, Case{Name: "cast_" + from.String() + "_to_" + to.String(),
				Inputs: []Input{{Shape: t.Shape{6, 41}, DType: from, Own: true, Gen: castValues(from, to)}},
				Build:  func(x []*t.Node) *t.Node { return t.Cast(x[0], to) }})
		}
	}
	return cs
}

// castValues draws values of dtype dt, for a cast to dtype to, that exercise every
// conversion: zeros (for Bool), fractions and negatives (float-to-integer truncation),
// integers past 2^24 and past 2^32 (rounding to float, I64 to I32 wrapping), and halfway
// cases of f16 and bf16 rounding. Floats stay inside I32's range when cast to it: out of
// range, the conversion is the machine's.
func castValues(dt, to t.DType) func(r *rand.Rand, n int) []float64 {
	return func(r *rand.Rand, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			var f float64
			switch i % 6 {
			case 1:
				f = float64(r.IntN(2000)-1000) / 7
			case 2:
				f = float64(int64(r.Uint64N(1<<40)) - 1<<39)
			case 3:
				f = float64(r.IntN(1<<26)) - 1<<25
			case 4:
				f = (1 + float64(r.IntN(1<<12))/(1<<12)) * math.Ldexp(1, r.IntN(40)-26)
			case 5:
				f = r.NormFloat64() * 1e4
			}
			switch {
			case dt == t.I32 || dt.IsFloat() && to == t.I32:
				f = math.Max(math.Min(f, 2e9), -2e9)
			}
			switch dt {
			case t.F16:
				f = math.Max(math.Min(f, 60000), -60000)
			case t.Bool:
				f = float64(i % 2)
			}
			v[i] = f
		}
		return v
	}
}
