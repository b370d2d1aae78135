package cpu_test

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

var unaryCases = []struct {
	name   string
	build  func(x *tensor.Node) *tensor.Node
	ref    func(v float64) float64
	lo, hi float64
}{
	{"neg", tensor.Neg, func(v float64) float64 { return -v }, -2, 2},
	{"abs", tensor.Abs, math.Abs, -2, 2},
	{"sign", tensor.Sign, func(v float64) float64 { return b2f(v > 0) - b2f(v < 0) }, -2, 2},
	{"exp", tensor.Exp, math.Exp, -2, 2},
	{"log", tensor.Log, math.Log, 0.1, 3},
	{"sqrt", tensor.Sqrt, math.Sqrt, 0, 3},
	{"rsqrt", tensor.Rsqrt, func(v float64) float64 { return 1 / math.Sqrt(v) }, 0.1, 3},
	{"square", tensor.Square, func(v float64) float64 { return v * v }, -2, 2},
	{"sin", tensor.Sin, math.Sin, -3, 3},
	{"cos", tensor.Cos, math.Cos, -3, 3},
	{"tanh", tensor.Tanh, math.Tanh, -3, 3},
	{"sigmoid", tensor.Sigmoid, sigmoid, -6, 6},
	{"relu", tensor.Relu, func(v float64) float64 { return math.Max(v, 0) }, -2, 2},
	{"leaky_relu", func(x *tensor.Node) *tensor.Node { return tensor.LeakyRelu(x, 0.1) },
		func(v float64) float64 { return math.Max(v, 0.1*v) }, -2, 2},
	{"elu", func(x *tensor.Node) *tensor.Node { return tensor.Elu(x, 1.5) },
		func(v float64) float64 {
			if v > 0 {
				return v
			}
			return 1.5 * (math.Exp(v) - 1)
		}, -2, 2},
	{"gelu_erf", func(x *tensor.Node) *tensor.Node { return tensor.Gelu(x, tensor.GeluErf) },
		func(v float64) float64 { return v * 0.5 * (1 + math.Erf(v/math.Sqrt2)) }, -3, 3},
	{"gelu_tanh", func(x *tensor.Node) *tensor.Node { return tensor.Gelu(x, tensor.GeluTanh) },
		func(v float64) float64 {
			return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		}, -3, 3},
	{"silu", tensor.Silu, func(v float64) float64 { return v * sigmoid(v) }, -4, 4},
	{"softplus", tensor.Softplus, func(v float64) float64 { return math.Log(1 + math.Exp(v)) }, -20, 20},
	{"hardsigmoid", func(x *tensor.Node) *tensor.Node { return tensor.HardSigmoid(x, 0.2, 0.5) },
		func(v float64) float64 { return math.Min(math.Max(0.2*v+0.5, 0), 1) }, -4, 4},
	{"hardswish", tensor.HardSwish, func(v float64) float64 { return v * math.Min(math.Max(v/6+0.5, 0), 1) }, -4, 4},
	{"erf", tensor.Erf, math.Erf, -2, 2},
	{"floor", tensor.Floor, math.Floor, -3, 3},
	{"ceil", tensor.Ceil, math.Ceil, -3, 3},
	{"round", tensor.Round, math.RoundToEven, -4, 4},
	{"tan", tensor.Tan, math.Tan, -1.2, 1.2},
	{"atan", tensor.Atan, math.Atan, -4, 4},
	{"clamp", func(x *tensor.Node) *tensor.Node { return tensor.Clamp(x, -0.5, 1) },
		func(v float64) float64 { return math.Min(math.Max(v, -0.5), 1) }, -2, 2},
	{"scale", func(x *tensor.Node) *tensor.Node { return tensor.ScaleBias(x, 3, -1) },
		func(v float64) float64 { return 3*v - 1 }, -2, 2},
}

func TestUnaryKernels(t *testing.T) {
	shapes := []tensor.Shape{{3, 5}, {}, {0, 4}, {70000}}
	for _, c := range unaryCases {
		for _, s := range shapes {
			e := newEnv(t)
			x, xv := e.input(tensor.F32, c.lo, c.hi, s...)
			want := make([]float64, len(xv))
			for i, v := range xv {
				want[i] = c.ref(v)
			}
			check(t, c.name+s.String(), e.run(c.build(x))[0], s, want, 2e-6)
		}
	}
}

// TestHalfWidening runs F16 and BF16 nodes through the F32 kernels.
func TestHalfWidening(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
		e := newEnv(t)
		a, av := e.input(dt, -2, 2, 4, 3)
		b, bv := e.input(dt, -2, 2, 3)
		y := tensor.Add(tensor.Tanh(a), b)
		s := tensor.Sum(y, []int{0}, false)
		res := e.run(y, s)
		want := make([]float64, 12)
		sum := make([]float64, 3)
		for i := range want {
			want[i] = math.Tanh(av[i]) + bv[i%3]
			sum[i%3] += want[i]
		}
		check(t, dt.String()+" add(tanh)", res[0], tensor.Shape{4, 3}, want, 1e-2)
		check(t, dt.String()+" sum", res[1], tensor.Shape{3}, sum, 3e-2)
		if res[0].DType() != dt {
			t.Errorf("%v: result dtype %v", dt, res[0].DType())
		}
	}
}

var binaryShapes = [][2]tensor.Shape{
	{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1, 3}, {4, 1}}, {{}, {2, 2}}, {{1}, {3, 1}},
	{{0, 3}, {1, 3}}, {{3, 1, 2, 1}, {1, 4, 1, 5}}, {{300, 200}, {200}}, {{5, 1}, {}},
}

func TestBinaryKernels(t *testing.T) {
	ops := []struct {
		name  string
		build func(a, b *tensor.Node) *tensor.Node
		ref   func(a, b float64) float64
		lo    float64
	}{
		{"add", tensor.Add, func(a, b float64) float64 { return a + b }, -2},
		{"sub", tensor.Sub, func(a, b float64) float64 { return a - b }, -2},
		{"mul", tensor.Mul, func(a, b float64) float64 { return a * b }, -2},
		{"div", tensor.Div, func(a, b float64) float64 { return a / b }, -2},
		{"pow", tensor.Pow, math.Pow, 0.1},
		{"mod", tensor.Mod, math.Mod, -2},
		{"maximum", tensor.Maximum, math.Max, -2},
		{"minimum", tensor.Minimum, math.Min, -2},
		{"less", tensor.Less, func(a, b float64) float64 { return b2f(a < b) }, -2},
		{"less_equal", tensor.LessEqual, func(a, b float64) float64 { return b2f(a <= b) }, -2},
		{"greater", tensor.Greater, func(a, b float64) float64 { return b2f(a > b) }, -2},
		{"greater_equal", tensor.GreaterEqual, func(a, b float64) float64 { return b2f(a >= b) }, -2},
		{"equal", tensor.Equal, func(a, b float64) float64 { return b2f(a == b) }, -2},
		{"not_equal", tensor.NotEqual, func(a, b float64) float64 { return b2f(a != b) }, -2},
	}
	for _, op := range ops {
		for _, sh := range binaryShapes {
			for _, dt := range []tensor.DType{tensor.F32, tensor.I32, tensor.I64} {
				if dt != tensor.F32 && (op.name == "pow" || op.name == "div" || op.name == "mod") {
					continue // integer forms are checked in TestIntegerArithmetic
				}
				e := newEnv(t)
				a, av := e.input(dt, op.lo, 2, sh[0]...)
				b, bv := e.input(dt, op.lo, 2, sh[1]...)
				out := broadcastShape(sh[0], sh[1])
				want := make([]float64, out.Size())
				for i := range want {
					want[i] = op.ref(av[bcast(i, sh[0], out)], bv[bcast(i, sh[1], out)])
				}
				check(t, op.name+" "+dt.String()+sh[0].String()+sh[1].String(), e.run(op.build(a, b))[0], out, want, 2e-6)
			}
		}
	}
}

func b2f(v bool) float64 {
	if v {
		return 1
	}
	return 0
}

func TestIntegerArithmetic(t *testing.T) {
	e := newEnv(t)
	a := e.feed(tensor.I32, []float64{7, -7, 3, 5, 2, -2}, 6)
	b := e.feed(tensor.I32, []float64{2, 2, 0, -1, 10, 3}, 6)
	res := e.run(tensor.Div(a, b), tensor.Pow(a, b), tensor.Abs(a), tensor.Relu(a), tensor.Mod(a, b))
	check(t, "div", res[0], tensor.Shape{6}, []float64{3, -3, 0, -5, 0, 0}, 0)
	check(t, "mod", res[4], tensor.Shape{6}, []float64{1, -1, 0, 0, 2, -2}, 0)
	check(t, "pow", res[1], tensor.Shape{6}, []float64{49, 49, 1, 0, 1024, -8}, 0)
	check(t, "abs", res[2], tensor.Shape{6}, []float64{7, 7, 3, 5, 2, 2}, 0)
	check(t, "relu", res[3], tensor.Shape{6}, []float64{7, 0, 3, 5, 2, 0}, 0)
}

func TestLogicalWhereCast(t *testing.T) {
	e := newEnv(t)
	p := e.feed(tensor.Bool, []float64{1, 0, 1, 0}, 4)
	q := e.feed(tensor.Bool, []float64{1, 1, 0, 0}, 4)
	x, xv := e.f32(2, 4)
	y, yv := e.f32(1)
	res := e.run(tensor.And(p, q), tensor.Or(p, q), tensor.Xor(p, q), tensor.Not(p),
		tensor.Where(p, x, y), tensor.Cast(x, tensor.I32), tensor.Cast(p, tensor.F32),
		tensor.Cast(x, tensor.Bool), tensor.Cast(tensor.Cast(x, tensor.F16), tensor.F32), tensor.Cast(tensor.Cast(x, tensor.I64), tensor.I32))
	check(t, "and", res[0], tensor.Shape{4}, []float64{1, 0, 0, 0}, 0)
	check(t, "or", res[1], tensor.Shape{4}, []float64{1, 1, 1, 0}, 0)
	check(t, "xor", res[2], tensor.Shape{4}, []float64{0, 1, 1, 0}, 0)
	check(t, "not", res[3], tensor.Shape{4}, []float64{0, 1, 0, 1}, 0)
	where := make([]float64, 8)
	trunc := make([]float64, 8)
	nonzero := make([]float64, 8)
	for i := range where {
		where[i] = yv[0]
		if i%2 == 0 {
			where[i] = xv[i]
		}
		trunc[i] = math.Trunc(xv[i])
		nonzero[i] = b2f(xv[i] != 0)
	}
	check(t, "where", res[4], tensor.Shape{2, 4}, where, 0)
	check(t, "cast f32->i32", res[5], tensor.Shape{2, 4}, trunc, 0)
	check(t, "cast bool->f32", res[6], tensor.Shape{4}, []float64{1, 0, 1, 0}, 0)
	check(t, "cast f32->bool", res[7], tensor.Shape{2, 4}, nonzero, 0)
	check(t, "cast f32->f16->f32", res[8], tensor.Shape{2, 4}, xv, 1e-3)
	check(t, "cast f32->i64->i32", res[9], tensor.Shape{2, 4}, trunc, 0)
}

// TestRandomBroadcasts checks the broadcast walk on random shape pairs of ranks 0 to 5
// with size-1 and missing axes, including tensors large enough to split across workers.
func TestRandomBroadcasts(t *testing.T) {
	e := newEnv(t)
	for trial := 0; trial < 60; trial++ {
		rank := e.rng.IntN(6)
		out := make(tensor.Shape, rank)
		for i := range out {
			out[i] = 1 + e.rng.IntN(5)
		}
		if trial%10 == 0 && rank > 0 {
			out[rank-1] = 5000 // large rows
		}
		pick := func() tensor.Shape {
			drop := e.rng.IntN(rank + 1)
			s := out[drop:].Clone()
			for i := range s {
				if e.rng.IntN(3) == 0 {
					s[i] = 1
				}
			}
			return s
		}
		sa, sb, sc := pick(), pick(), pick()
		ee := newEnv(t)
		a, av := ee.f32(sa...)
		b, bv := ee.f32(sb...)
		c, cv := ee.f32(sc...)
		full := broadcastShape(broadcastShape(sa, sb), sc)
		res := ee.run(tensor.Sub(a, b), tensor.Where(tensor.Greater(c, tensor.Full(ee.g, tensor.F32, nil, 0)), a, b))
		sub := make([]float64, full.Size())
		where := make([]float64, full.Size())
		ab := broadcastShape(sa, sb)
		for i := range where {
			if i < ab.Size() {
				sub[i] = av[bcast(i, sa, ab)] - bv[bcast(i, sb, ab)]
			}
			x, y := av[bcast(i, sa, full)], bv[bcast(i, sb, full)]
			where[i] = y
			if cv[bcast(i, sc, full)] > 0 {
				where[i] = x
			}
		}
		name := sa.String() + sb.String() + sc.String()
		check(t, "sub "+name, res[0], ab, sub[:ab.Size()], 1e-6)
		check(t, "where "+name, res[1], full, where, 0)
	}
}
