package ag

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gml-dev/gml/tensor"
)

// Layers. Each owns its parameters (made on the current tape, initialised as PyTorch
// does, from ag's seeded generator) and computes with this package's ops, so its
// gradients and optimizers are the engine's. Weights are stored batch-first, for x·W:
// a Linear weight is (in, out).

// A layer type whose name an op already has (Conv2D, LayerNorm, RMSNorm, Dropout)
// ends in Layer; constructors are New plus the op's name.

// uniformParam makes a parameter of samples uniform in [-bound, bound].
func uniformParam(name string, bound float64, shape ...int) *Tensor {
	t := randomTensor(shape, func(r *rand.Rand) float32 { return float32((2*r.Float64() - 1) * bound) })
	return newVariable(CurrentTape(), t, false).SetName(name)
}

// constParam makes a parameter (or buffer) filled with v.
func constParam(name string, v float32, buffer bool, shape ...int) *Tensor {
	t := tensor.New(tensor.F32, shape...)
	if v != 0 {
		for i, d := 0, t.Float32s(); i < len(d); i++ {
			d[i] = v
		}
	}
	return newVariable(CurrentTape(), t, buffer).SetName(name)
}

func positive(op, what string, n int) {
	if n <= 0 {
		fail(op, "%s must be positive, got %d", what, n)
	}
}

// Linear is y = x·W + b over the last axis of x: W is (in, out), b is (out).
type Linear struct {
	Weight, Bias *Tensor
}

// NewLinear makes a Linear layer from in to out features (NoBias leaves b out).
func NewLinear(in, out int, opts ...Option) *Linear {
	var s settings
	s.apply("linear", []string{"NoBias"}, opts)
	positive("linear", "in", in)
	positive("linear", "out", out)
	bound := 1 / math.Sqrt(float64(in))
	l := &Linear{Weight: uniformParam("weight", bound, in, out)}
	if !s.noBias {
		l.Bias = uniformParam("bias", bound, out)
	}
	return l
}

// Forward applies the layer.
func (l *Linear) Forward(x *Tensor) *Tensor {
	y := MatMul(x, l.Weight)
	if l.Bias != nil {
		y = Add(y, l.Bias)
	}
	return y
}

// Conv2DLayer is a 2-D convolution over (N, C, H, W) with weights (out, in/groups, k, k) and
// a bias per output channel.
type Conv2DLayer struct {
	Weight, Bias *Tensor
	opts         tensor.ConvOptions
}

// NewConv2D makes a k×k convolution from in to out channels; Stride, Padding,
// SamePadding, Groups and NoBias configure it.
func NewConv2D(in, out, k int, opts ...Option) *Conv2DLayer {
	s := settings{stride: 1, groups: 1}
	s.apply("conv2d", []string{"Stride", "Padding", "SamePadding", "Groups", "NoBias"}, opts)
	positive("conv2d", "in", in)
	positive("conv2d", "out", out)
	positive("conv2d", "kernel size", k)
	positive("conv2d", "stride", s.stride)
	positive("conv2d", "groups", s.groups)
	if in%s.groups != 0 || out%s.groups != 0 {
		fail("conv2d", "%d groups do not divide %d input and %d output channels", s.groups, in, out)
	}
	bound := 1 / math.Sqrt(float64(in/s.groups*k*k))
	c := &Conv2DLayer{Weight: uniformParam("weight", bound, out, in/s.groups, k, k)}
	c.opts = tensor.ConvOptions{Stride: []int{s.stride, s.stride}, Groups: s.groups, Padding: tensor.PadSymmetric(s.padding)}
	if s.samePadding {
		c.opts.Padding = tensor.ConvPadding{Mode: tensor.PaddingSame}
	}
	if !s.noBias {
		c.Bias = uniformParam("bias", bound, out)
	}
	return c
}

// Forward applies the convolution.
func (c *Conv2DLayer) Forward(x *Tensor) *Tensor {
	y := Conv2D(x, c.Weight, c.opts)
	if c.Bias != nil {
		y = Add(y, Reshape(c.Bias, 1, c.Bias.shape[0], 1, 1))
	}
	return y
}

// LayerNormLayer normalises the last axis and applies a learned scale and shift.
type LayerNormLayer struct {
	Weight, Bias *Tensor
	eps          float64
}

// NewLayerNorm makes a LayerNorm over a last axis of dim features (Eps: 1e-5).
func NewLayerNorm(dim int, opts ...Option) *LayerNormLayer {
	s := settings{eps: 1e-5}
	s.apply("layer_norm", []string{"Eps", "NoBias"}, opts)
	positive("layer_norm", "dim", dim)
	l := &LayerNormLayer{Weight: constParam("weight", 1, false, dim), eps: s.eps}
	if !s.noBias {
		l.Bias = constParam("bias", 0, false, dim)
	}
	return l
}

// Forward applies the layer.
func (l *LayerNormLayer) Forward(x *Tensor) *Tensor { return LayerNorm(x, l.Weight, l.Bias, l.eps) }

// RMSNormLayer scales the last axis by its reciprocal root mean square and a learned gain.
type RMSNormLayer struct {
	Weight *Tensor
	eps    float64
}

// NewRMSNorm makes an RMSNorm over a last axis of dim features (Eps: 1e-6).
func NewRMSNorm(dim int, opts ...Option) *RMSNormLayer {
	s := settings{eps: 1e-6}
	s.apply("rms_norm", []string{"Eps"}, opts)
	positive("rms_norm", "dim", dim)
	return &RMSNormLayer{Weight: constParam("weight", 1, false, dim), eps: s.eps}
}

// Forward applies the layer.
func (l *RMSNormLayer) Forward(x *Tensor) *Tensor { return RMSNorm(x, l.Weight, l.eps) }

// BatchNorm normalises each channel (axis 1 of (N, C) or (N, C, H, W)) by the batch's
// statistics in training mode, updating running statistics (buffers) that evaluation
// mode uses instead.
type BatchNorm struct {
	Weight, Bias            *Tensor
	RunningMean, RunningVar *Tensor
	eps, momentum           float64
	training                bool
}

// NewBatchNorm makes a BatchNorm over c channels (Eps 1e-5, Momentum 0.1 as PyTorch).
func NewBatchNorm(c int, opts ...Option) *BatchNorm {
	s := settings{eps: 1e-5, momentum: 0.1}
	s.apply("batch_norm", []string{"Eps", "Momentum"}, opts)
	positive("batch_norm", "channels", c)
	return &BatchNorm{
		Weight: constParam("weight", 1, false, c), Bias: constParam("bias", 0, false, c),
		RunningMean: constParam("running_mean", 0, true, c), RunningVar: constParam("running_var", 1, true, c),
		eps: s.eps, momentum: s.momentum, training: true,
	}
}

func (b *BatchNorm) setTraining(on bool) { b.training = on }

// Forward normalises x.
func (b *BatchNorm) Forward(x *Tensor) *Tensor {
	c := b.Weight.shape[0]
	if x.Rank() < 2 || x.shape[1] != c {
		fail("batch_norm", "input %v must be (N, %d, ...)", x.shape, c)
	}
	axes := []int{0}
	for i := 2; i < x.Rank(); i++ {
		axes = append(axes, i)
	}
	shape := make([]int, x.Rank())
	for i := range shape {
		shape[i] = 1
	}
	shape[1] = c
	var mean, variance *Tensor
	if b.training {
		mean = Mean(x, true, axes...)
		d := Sub(x, mean)
		variance = Mean(Mul(d, d), true, axes...)
		n := x.Size() / c
		NoGrad(func() {
			m := b.momentum
			unbiased := Scale(Reshape(variance, c), float64(n)/math.Max(float64(n-1), 1))
			b.RunningMean.Assign(Add(Scale(b.RunningMean, 1-m), Scale(Reshape(mean, c).Detach(), m)))
			b.RunningVar.Assign(Add(Scale(b.RunningVar, 1-m), Scale(unbiased.Detach(), m)))
		})
	} else {
		mean, variance = Reshape(b.RunningMean, shape...), Reshape(b.RunningVar, shape...)
	}
	y := Mul(Sub(x, mean), Rsqrt(AddScalar(variance, b.eps)))
	return Add(Mul(y, Reshape(b.Weight, shape...)), Reshape(b.Bias, shape...))
}

// DropoutLayer zeroes inputs with probability Rate in training mode and passes them through
// in evaluation mode.
type DropoutLayer struct {
	Rate     float64
	training bool
}

// NewDropout makes a Dropout layer.
func NewDropout(rate float64) *DropoutLayer {
	if rate < 0 || rate >= 1 {
		fail("dropout", "rate %v outside [0, 1)", rate)
	}
	return &DropoutLayer{Rate: rate, training: true}
}

func (d *DropoutLayer) setTraining(on bool) { d.training = on }

// Forward applies dropout in training mode.
func (d *DropoutLayer) Forward(x *Tensor) *Tensor {
	if !d.training {
		return x
	}
	return Dropout(x, d.Rate)
}

// Embedding maps integer ids to rows of a (vocab, dim) table.
type Embedding struct {
	Weight *Tensor
}

// NewEmbedding makes an Embedding of vocab rows of dim features, N(0, 1) as PyTorch.
func NewEmbedding(vocab, dim int) *Embedding {
	positive("embedding", "vocabulary", vocab)
	positive("embedding", "dim", dim)
	t := randomTensor([]int{vocab, dim}, func(r *rand.Rand) float32 { return float32(r.NormFloat64()) })
	return &Embedding{Weight: newVariable(CurrentTape(), t, false).SetName("weight")}
}

// Forward looks the ids up: (...) integers give (..., dim).
func (e *Embedding) Forward(ids *Tensor) *Tensor {
	if !ids.dtype.IsInt() {
		fail("embedding", "ids must be integers, have %s", ids.describe())
	}
	return Gather(e.Weight, ids, 0)
}

// Sequential applies modules in order.
type Sequential struct {
	Layers []Module
}

// NewSequential chains modules.
func NewSequential(layers ...Module) *Sequential {
	for i, l := range layers {
		if l == nil {
			fail("sequential", "layer %d is nil", i)
		}
	}
	return &Sequential{Layers: layers}
}

// Forward applies every layer to the previous one's output.
func (s *Sequential) Forward(x *Tensor) *Tensor {
	for _, l := range s.Layers {
		x = l.Forward(x)
	}
	return x
}

// Lambda is a module made of a function: an activation or any computation without
// parameters, for Sequential.
type Lambda struct {
	Fn func(*Tensor) *Tensor
}

// NewLambda wraps fn as a module: NewSequential(NewLinear(4, 8), NewLambda(ag.Relu)).
func NewLambda(fn func(*Tensor) *Tensor) *Lambda {
	if fn == nil {
		fail("lambda", "nil function")
	}
	return &Lambda{Fn: fn}
}

// Forward calls the function.
func (l *Lambda) Forward(x *Tensor) *Tensor { return l.Fn(x) }

// String names the layer kinds and sizes of common layers for summaries.
func (l *Linear) String() string {
	return fmt.Sprintf("Linear(%d -> %d, bias %v)", l.Weight.shape[0], l.Weight.shape[1], l.Bias != nil)
}
