package ag_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

// uniform makes a constant of the shape with values in [lo, hi], at least gap away from
// each kink (piecewise ops are not differentiable there).
func uniform(r *rand.Rand, lo, hi float64, shape []int, gap float64, kinks ...float64) *ag.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
	draw:
		x := lo + (hi-lo)*r.Float64()
		for _, k := range kinks {
			if math.Abs(x-k) < gap {
				goto draw
			}
		}
		v[i] = x
	}
	return ag.FromFloat64s(shape, v)
}

// distinct makes a constant whose values are pairwise apart (max, min, pooling).
func distinct(r *rand.Rand, shape []int) *ag.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)/float64(n)*2 - 1
	}
	r.Shuffle(n, func(i, j int) { v[i], v[j] = v[j], v[i] })
	return ag.FromFloat64s(shape, v)
}

type gradCase struct {
	name string
	in   func(r *rand.Rand) []*ag.Tensor
	fn   func(x ...*ag.Tensor) *ag.Tensor
	tol  float64
}

func u(shape ...int) func(r *rand.Rand) *ag.Tensor {
	return func(r *rand.Rand) *ag.Tensor { return uniform(r, -1, 1, shape, 0) }
}

func pos(shape ...int) func(r *rand.Rand) *ag.Tensor {
	return func(r *rand.Rand) *ag.Tensor { return uniform(r, 0.5, 2, shape, 0) }
}

func inputs(gens ...func(r *rand.Rand) *ag.Tensor) func(r *rand.Rand) []*ag.Tensor {
	return func(r *rand.Rand) []*ag.Tensor {
		out := make([]*ag.Tensor, len(gens))
		for i, g := range gens {
			out[i] = g(r)
		}
		return out
	}
}

func fixed(t *ag.Tensor) func(r *rand.Rand) *ag.Tensor {
	return func(*rand.Rand) *ag.Tensor { return t }
}

func away(shape []int, kinks ...float64) func(r *rand.Rand) *ag.Tensor {
	return func(r *rand.Rand) *ag.Tensor { return uniform(r, -2, 2, shape, 0.05, kinks...) }
}

func un(f func(*ag.Tensor) *ag.Tensor) func(x ...*ag.Tensor) *ag.Tensor {
	return func(x ...*ag.Tensor) *ag.Tensor { return f(x[0]) }
}

func bin(f func(a, b *ag.Tensor) *ag.Tensor) func(x ...*ag.Tensor) *ag.Tensor {
	return func(x ...*ag.Tensor) *ag.Tensor { return f(x[0], x[1]) }
}

var gradCases = []gradCase{
	{name: "add broadcast", in: inputs(u(3, 4), u(4)), fn: bin(ag.Add)},
	{name: "sub broadcast", in: inputs(u(2, 3, 4), u(3, 1)), fn: bin(ag.Sub)},
	{name: "mul", in: inputs(u(3, 4), u(3, 4)), fn: bin(ag.Mul)},
	{name: "div", in: inputs(u(3, 4), pos(3, 4)), fn: bin(ag.Div)},
	{name: "pow", in: inputs(pos(5), u(5)), fn: bin(ag.Pow)},
	{name: "maximum", in: inputs(tensorGen{distinct(rand.New(rand.NewPCG(1, 1)), []int{6})}.asGen(), tensorGen{distinct(rand.New(rand.NewPCG(2, 2)), []int{6})}.asGen()), fn: bin(ag.Maximum)},
	{name: "minimum", in: inputs(tensorGen{distinct(rand.New(rand.NewPCG(3, 1)), []int{6})}.asGen(), tensorGen{distinct(rand.New(rand.NewPCG(4, 2)), []int{6})}.asGen()), fn: bin(ag.Minimum)},
	{name: "scale", in: inputs(u(4)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Scale(x, -2.5) })},
	{name: "add scalar", in: inputs(u(4)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Square(ag.AddScalar(x, 0.5)) })},
	{name: "pow scalar", in: inputs(pos(4)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.PowScalar(x, 2.5) })},
	{name: "neg", in: inputs(u(4)), fn: un(ag.Neg)},
	{name: "abs", in: inputs(away([]int{6}, 0)), fn: un(ag.Abs)},
	{name: "exp", in: inputs(u(4)), fn: un(ag.Exp)},
	{name: "log", in: inputs(pos(4)), fn: un(ag.Log)},
	{name: "sqrt", in: inputs(pos(4)), fn: un(ag.Sqrt)},
	{name: "rsqrt", in: inputs(pos(4)), fn: un(ag.Rsqrt)},
	{name: "square", in: inputs(u(4)), fn: un(ag.Square)},
	{name: "sin", in: inputs(u(4)), fn: un(ag.Sin)},
	{name: "cos", in: inputs(u(4)), fn: un(ag.Cos)},
	{name: "tanh", in: inputs(u(4)), fn: un(ag.Tanh)},
	{name: "sigmoid", in: inputs(u(4)), fn: un(ag.Sigmoid)},
	{name: "relu", in: inputs(away([]int{8}, 0)), fn: un(ag.Relu)},
	{name: "leaky relu", in: inputs(away([]int{8}, 0)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.LeakyRelu(x, 0.1) })},
	{name: "elu", in: inputs(away([]int{8}, 0)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Elu(x, 1) })},
	{name: "gelu", in: inputs(u(6)), fn: un(ag.Gelu)},
	{name: "gelu tanh", in: inputs(u(6)), fn: un(ag.GeluTanh)},
	{name: "silu", in: inputs(u(6)), fn: un(ag.Silu)},
	{name: "softplus", in: inputs(u(6)), fn: un(ag.Softplus)},
	{name: "clamp", in: inputs(away([]int{8}, -0.5, 0.5)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Clamp(x, -0.5, 0.5) })},
	{name: "where", in: inputs(u(2, 3), u(2, 3), u(2, 3)), fn: func(x ...*ag.Tensor) *ag.Tensor {
		return ag.Where(ag.Greater(x[0], ag.Scalar(0)), ag.Mul(x[1], x[1]), ag.Exp(x[2]))
	}},
	{name: "matmul", in: inputs(u(3, 4), u(4, 5)), fn: bin(ag.MatMul)},
	{name: "matmul batched", in: inputs(u(2, 3, 4), u(4, 2)), fn: bin(ag.MatMul)},
	{name: "sum all", in: inputs(u(3, 4)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Sum(x, false) })},
	{name: "sum axis keepdim", in: inputs(u(3, 4)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Mul(ag.Sum(x, true, 1), x) })},
	{name: "mean axis", in: inputs(u(3, 4, 2)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Mean(x, false, 0, 2) })},
	{name: "max axis", in: inputs(func(r *rand.Rand) *ag.Tensor { return distinct(r, []int{3, 4}) }), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Max(x, false, 1) })},
	{name: "min keepdim", in: inputs(func(r *rand.Rand) *ag.Tensor { return distinct(r, []int{3, 4}) }), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Min(x, true, 0) })},
	{name: "var", in: inputs(u(3, 5)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Var(x, false, 1, 1) })},
	{name: "reshape", in: inputs(u(2, 6)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Square(ag.Reshape(x, 3, -1)) })},
	{name: "flatten", in: inputs(u(2, 3, 2)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Exp(ag.Flatten(x, 1)) })},
	{name: "transpose", in: inputs(u(2, 3), u(2, 3)), fn: func(x ...*ag.Tensor) *ag.Tensor { return ag.MatMul(ag.Transpose(x[0], 0, 1), x[1]) }},
	{name: "permute", in: inputs(u(2, 3, 4)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Exp(ag.Permute(x, 2, 0, 1)) })},
	{name: "slice", in: inputs(u(4, 5)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Square(ag.Slice(x, 1, 1, -1)) })},
	{name: "squeeze unsqueeze", in: inputs(u(3, 1)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Unsqueeze(ag.Exp(ag.Squeeze(x)), 0) })},
	{name: "expand", in: inputs(u(3, 1)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Square(ag.Expand(x, 2, 3, 4)) })},
	{name: "concat", in: inputs(u(2, 3), u(2, 2)), fn: func(x ...*ag.Tensor) *ag.Tensor { return ag.Exp(ag.Concat(1, x[0], x[1])) }},
	{name: "stack", in: inputs(u(2, 3), u(2, 3)), fn: func(x ...*ag.Tensor) *ag.Tensor { return ag.Exp(ag.Stack(-1, x[0], x[1])) }},
	{name: "gather rows", in: inputs(u(5, 3), fixed(ag.FromInts([]int{4}, []int{3, 0, 3, 1}))), fn: func(x ...*ag.Tensor) *ag.Tensor {
		return ag.Square(ag.Gather(x[0], x[1], 0))
	}},
	{name: "softmax", in: inputs(u(3, 5)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.Softmax(x, -1) })},
	{name: "log softmax", in: inputs(u(3, 5)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.LogSoftmax(x, 0) })},
	{name: "layer norm", in: inputs(u(3, 6), u(6), u(6)), fn: func(x ...*ag.Tensor) *ag.Tensor { return ag.LayerNorm(x[0], x[1], x[2], 1e-5) }},
	{name: "rms norm", in: inputs(u(3, 6), u(6)), fn: func(x ...*ag.Tensor) *ag.Tensor { return ag.RMSNorm(x[0], x[1], 1e-6) }},
	{name: "conv2d", in: inputs(u(2, 2, 5, 5), u(3, 2, 3, 3)), fn: func(x ...*ag.Tensor) *ag.Tensor {
		return ag.Conv2D(x[0], x[1], tensor.ConvOptions{Stride: []int{2, 2}, Padding: tensor.PadSymmetric(1)})
	}},
	{name: "max pool", in: inputs(func(r *rand.Rand) *ag.Tensor { return distinct(r, []int{1, 2, 4, 4}) }), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.MaxPool2D(x, 2, 2) })},
	{name: "avg pool", in: inputs(u(1, 2, 4, 4)), fn: un(func(x *ag.Tensor) *ag.Tensor { return ag.AvgPool2D(x, 2, 2) })},
	{name: "global avg pool", in: inputs(u(2, 3, 3, 3)), fn: un(ag.GlobalAvgPool)},
	{name: "flash attention causal", in: inputs(u(1, 2, 4, 3), u(1, 2, 4, 3), u(1, 2, 4, 3)), fn: func(x ...*ag.Tensor) *ag.Tensor {
		return ag.FlashAttention(x[0], x[1], x[2], nil, true)
	}},
	{name: "flash attention masked", in: inputs(u(1, 2, 3, 4), u(1, 2, 5, 4), u(1, 2, 5, 2)), fn: func(x ...*ag.Tensor) *ag.Tensor {
		mask := ag.FromFloat32s([]int{3, 5}, []float32{0, 0, -1e9, 0, 0, 0, -1e9, 0, 0, 0, 0, 0, 0, -1e9, 0})
		return ag.FlashAttention(x[0], x[1], x[2], mask, false)
	}},
	{name: "mse", in: inputs(u(4, 3), u(4, 3)), fn: bin(ag.MSE)},
	{name: "mae", in: inputs(u(4, 3), u(4, 3)), fn: bin(ag.MAE)},
	{name: "huber", in: inputs(u(4, 3), u(4, 3)), fn: func(x ...*ag.Tensor) *ag.Tensor { return ag.Huber(x[0], x[1], 0.5) }},
	{name: "cross entropy ids", in: inputs(u(4, 5), fixed(ag.FromInts([]int{4}, []int{0, 4, 2, 2}))), fn: bin(ag.CrossEntropy)},
	{name: "cross entropy probabilities", in: inputs(u(3, 4), fixed(ag.FromFloat32s([]int{3, 4}, []float32{0.5, 0.5, 0, 0, 0, 0, 1, 0, 0.25, 0.25, 0.25, 0.25}))), fn: bin(ag.CrossEntropy)},
	{name: "binary cross entropy", in: inputs(func(r *rand.Rand) *ag.Tensor { return uniform(r, 0.3, 0.7, []int{4, 2}, 0) }, fixed(ag.FromFloat32s([]int{4, 2}, []float32{0, 1, 1, 0, 1, 1, 0, 0}))), fn: bin(ag.BinaryCrossEntropy)},
	{name: "binary cross entropy with logits", in: inputs(u(4, 2), fixed(ag.FromFloat32s([]int{4, 2}, []float32{0, 1, 1, 0, 1, 1, 0, 0}))), fn: bin(ag.BinaryCrossEntropyWithLogits)},
}

// asGen returns a generator that always yields t.
func (t tensorGen) asGen() func(r *rand.Rand) *ag.Tensor {
	return func(*rand.Rand) *ag.Tensor { return t.t }
}

type tensorGen struct{ t *ag.Tensor }

// TestOpGradients checks every op's gradient against finite differences, on the CPU
// and on the GPU (lavapipe where there is no real one).
func TestOpGradients(t *testing.T) {
	for _, device := range []string{"cpu", "gpu"} {
		t.Run(device, func(t *testing.T) {
			tp, err := ag.NewTape(ag.Device(device))
			if err != nil {
				t.Skipf("no %s device: %v", device, err)
			}
			defer tp.Free()
			ag.WithTape(tp, func() {
				for i, c := range gradCases {
					t.Run(c.name, func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(i), 42))
						rep := ag.GradCheck(c.fn, c.in(r), nil, 0, c.tol)
						if !rep.OK() {
							t.Errorf("%s", rep)
						}
					})
				}
			})
		})
	}
}
