package ag

import (
	"slices"
)

// Option configures a layer or an optimizer. Each constructor names the options it
// takes; any other is an error naming the constructor and the option.
type Option struct {
	name  string
	apply func(*settings)
}

// settings is the union of what options set; constructors read the fields they use.
type settings struct {
	momentum, weightDecay, beta1, beta2, eps, alpha float64
	nesterov, centered, noBias, causal              bool
	stride, padding, groups                         int
	samePadding                                     bool
	dropout                                         float64
	maxVariants                                     int
	clipNorm, clipValue                             float64
	shuffle, dropLast                               bool
	shuffleSeed                                     uint64
	replicas, epochs                                int
	tapes                                           []*Tape
	optFn                                           func([]*Tensor) *Optimizer
	set                                             map[string]bool
}

func option(name string, f func(*settings)) Option { return Option{name: name, apply: f} }

// apply applies opts to s, failing for options the constructor op does not take.
func (s *settings) apply(op string, allowed []string, opts []Option) {
	if s.set == nil {
		s.set = map[string]bool{}
	}
	for _, o := range opts {
		if o.apply == nil {
			fail(op, "an empty Option")
		}
		if !slices.Contains(allowed, o.name) {
			fail(op, "takes no %s option (it takes %v)", o.name, allowed)
		}
		o.apply(s)
		s.set[o.name] = true
	}
}

// Momentum sets SGD's or RMSprop's momentum, or the update rate of BatchNorm's running
// statistics (0.1 by default).
func Momentum(m float64) Option { return option("Momentum", func(s *settings) { s.momentum = m }) }

// Nesterov turns on Nesterov momentum (SGD).
func Nesterov() Option { return option("Nesterov", func(s *settings) { s.nesterov = true }) }

// WeightDecay sets the weight decay: L2 added to the gradient (SGD, Adam, RMSprop) or
// decoupled (AdamW).
func WeightDecay(w float64) Option {
	return option("WeightDecay", func(s *settings) { s.weightDecay = w })
}

// Betas sets Adam's moment decays (0.9 and 0.999 by default).
func Betas(beta1, beta2 float64) Option {
	return option("Betas", func(s *settings) { s.beta1, s.beta2 = beta1, beta2 })
}

// Eps sets the term added to denominators: optimizers (1e-8 by default, as PyTorch) and
// normalisation layers (1e-5; RMSNorm 1e-6).
func Eps(eps float64) Option { return option("Eps", func(s *settings) { s.eps = eps }) }

// Alpha sets RMSprop's mean-square decay (0.99 by default).
func Alpha(a float64) Option { return option("Alpha", func(s *settings) { s.alpha = a }) }

// Centered makes RMSprop divide by the estimated variance rather than the mean square.
func Centered() Option { return option("Centered", func(s *settings) { s.centered = true }) }

// NoBias leaves out a layer's bias (Linear, Conv2D, MultiheadAttention's projections).
func NoBias() Option { return option("NoBias", func(s *settings) { s.noBias = true }) }

// Stride sets a convolution's stride (1 by default).
func Stride(n int) Option { return option("Stride", func(s *settings) { s.stride = n }) }

// Padding pads a convolution's input by n on every side (0 by default).
func Padding(n int) Option { return option("Padding", func(s *settings) { s.padding = n }) }

// SamePadding pads a convolution so the output has the input's size (stride 1).
func SamePadding() Option { return option("SamePadding", func(s *settings) { s.samePadding = true }) }

// Groups splits a convolution's channels into groups (1 by default).
func Groups(n int) Option { return option("Groups", func(s *settings) { s.groups = n }) }

// DropoutRate sets the dropout of MultiheadAttention's attention output (0 by default).
func DropoutRate(rate float64) Option {
	return option("DropoutRate", func(s *settings) { s.dropout = rate })
}

// Causal makes MultiheadAttention's self-attention causal: position i attends to
// positions j <= i.
func Causal() Option { return option("Causal", func(s *settings) { s.causal = true }) }
