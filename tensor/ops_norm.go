package tensor

import (
	"fmt"
	"math"
)

// Softmax, log-softmax and the norms: fused ops whose semantics Decompose (decompose.go)
// defines, and the normalisation composites built on them.

func init() {
	registerShape(OpSoftmax, softmaxRule)
	registerShape(OpLogSoftmax, softmaxRule)
	registerShape(OpLayerNorm, normRule(3))
	registerShape(OpRMSNorm, normRule(2))
}

// Softmax returns exp(x) / sum(exp(x)) along axis (negative counts from the end),
// computed stably.
func Softmax(x *Node, axis int) *Node { return Apply(OpSoftmax, SoftmaxAttr{Axis: axis}, x) }

// LogSoftmax returns x - log(sum(exp(x))) along axis, computed stably.
func LogSoftmax(x *Node, axis int) *Node { return Apply(OpLogSoftmax, SoftmaxAttr{Axis: axis}, x) }

// SoftmaxMasked returns softmax(x*scale + mask) along axis. mask (nil for none) is
// additive, has x's dtype and broadcasts to x's shape: 0 keeps a position, -Inf removes
// it (a row with every position removed is NaN). A scale of 0 means 1.
func SoftmaxMasked(x, mask *Node, axis int, scale float32) *Node {
	at := SoftmaxAttr{Axis: axis, Scale: scale}
	if mask == nil {
		return Apply(OpSoftmax, at, x)
	}
	return Apply(OpSoftmax, at, x, mask)
}

func softmaxRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(SoftmaxAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be SoftmaxAttr, got %T", attr)
	}
	if len(in) > 2 {
		return 0, nil, nil, fmt.Errorf("takes x and an optional mask, got %d inputs", len(in))
	}
	x := in[0]
	axis, err := ResolveAxis("softmax", at.Axis, x.shape.Rank())
	if err != nil {
		return 0, nil, nil, fmt.Errorf("input %v: %w", x.shape, err)
	}
	if len(in) == 2 {
		if err := checkMask(in[1], x.dtype, x.shape); err != nil {
			return 0, nil, nil, err
		}
	}
	if at.Scale == 0 {
		at.Scale = 1
	}
	return x.dtype, x.shape, SoftmaxAttr{Axis: axis, Scale: at.Scale}, nil
}

// checkMask checks that an additive mask has dtype dt and broadcasts to shape.
func checkMask(mask *Node, dt DType, shape Shape) error {
	if mask.dtype != dt {
		return fmt.Errorf("additive mask %v%v must have the input's dtype %v", mask.dtype, mask.shape, dt)
	}
	if b, ok := Broadcast(shape, mask.shape); !ok || !b.Equal(shape) {
		return fmt.Errorf("mask %v does not broadcast to %v", mask.shape, shape)
	}
	return nil
}

// LayerNorm normalises x over axes (trailing and contiguous, e.g. {-1} or {-2, -1}; nil
// means the last axis) to zero mean and unit variance, (x-mean)/sqrt(var+eps), then
// scales by gamma and shifts by beta. gamma and beta (either may be nil) have the shape of
// the normalised axes.
func LayerNorm(x, gamma, beta *Node, axes []int, eps float32) *Node {
	at := NormAttr{Axes: axes, Eps: eps}
	switch {
	case gamma == nil && beta == nil:
		return Apply(OpLayerNorm, at, x)
	case beta == nil:
		return Apply(OpLayerNorm, at, x, gamma)
	case gamma == nil:
		gamma = filled(beta, 1)
	}
	return Apply(OpLayerNorm, at, x, gamma, beta)
}

// RMSNorm returns x/sqrt(mean(x²)+eps) over axes (trailing, nil means the last axis),
// times gamma (nil for none) of the normalised axes' shape.
func RMSNorm(x, gamma *Node, axes []int, eps float32) *Node {
	at := NormAttr{Axes: axes, Eps: eps}
	if gamma == nil {
		return Apply(OpRMSNorm, at, x)
	}
	return Apply(OpRMSNorm, at, x, gamma)
}

// filled returns a constant of like's dtype and shape holding v everywhere.
func filled(like *Node, v float64) *Node {
	t := New(like.dtype, like.shape...)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat(i, v)
	}
	return like.graph.Const(t)
}

// normRule is the shape rule of LayerNorm (up to 3 inputs) and RMSNorm (up to 2).
func normRule(maxInputs int) shapeRule {
	return func(attr any, in []*Node) (DType, Shape, any, error) {
		at, ok := attr.(NormAttr)
		if !ok {
			return 0, nil, nil, fmt.Errorf("attribute must be NormAttr, got %T", attr)
		}
		if len(in) > maxInputs {
			return 0, nil, nil, fmt.Errorf("takes at most %d inputs, got %d", maxInputs, len(in))
		}
		x := in[0]
		axes, err := trailingAxes(at.Axes, x.shape)
		if err != nil {
			return 0, nil, nil, err
		}
		if at.Eps < 0 || math.IsNaN(float64(at.Eps)) {
			return 0, nil, nil, fmt.Errorf("eps %v must be non-negative", at.Eps)
		}
		inner := x.shape[axes[0]:]
		for i, p := range in[1:] {
			if p.dtype != x.dtype || !p.shape.Equal(inner) {
				return 0, nil, nil, fmt.Errorf("%s %v%v must have dtype %v and the normalised shape %v of input %v",
					[]string{"gamma", "beta"}[i], p.dtype, p.shape, x.dtype, inner, x.shape)
			}
		}
		return x.dtype, x.shape, NormAttr{Axes: axes, Eps: at.Eps}, nil
	}
}

// trailingAxes resolves normalisation axes, which must be the last len(axes) axes of
// shape; nil means the last axis.
func trailingAxes(axes []int, shape Shape) ([]int, error) {
	r := shape.Rank()
	if r == 0 {
		return nil, fmt.Errorf("needs an input of rank at least 1, have a scalar")
	}
	if len(axes) == 0 {
		return []int{r - 1}, nil
	}
	seen := make([]bool, r)
	for _, a := range axes {
		ra, err := ResolveAxis("norm", a, r)
		if err != nil {
			return nil, err
		}
		if seen[ra] {
			return nil, fmt.Errorf("axes %v repeat axis %d", axes, ra)
		}
		seen[ra] = true
	}
	out := make([]int, len(axes))
	for i := range out {
		out[i] = r - len(axes) + i
		if !seen[out[i]] {
			return nil, fmt.Errorf("axes %v must be the trailing axes of input %v", axes, shape)
		}
	}
	return out, nil
}

// BatchNormTrain normalises x with the statistics of the current batch, taken over axes
// (for (N, C, H, W) data: {0, 2, 3}): y = (x-mean)/sqrt(var+eps)*gamma + beta. It returns
// the batch mean and the population (biased) variance, each with the shape of the
// remaining axes (for the example, [C]), and y. gamma and beta (nil for none) have that
// shape too. Running averages are the caller's (the nn layer's) business.
func BatchNormTrain(x, gamma, beta *Node, axes []int, eps float32) (mean, variance, y *Node) {
	m := Mean(x, axes, true)
	d := Sub(x, m)
	v := Mean(Mul(d, d), axes, true)
	y = Mul(d, Rsqrt(AddScalar(v, float64(eps))))
	kept := m.shape
	y = affine(y, gamma, beta, kept)
	reduced := Shape{}
	for i, s := range kept {
		if !containsAxis(axes, i, x.shape.Rank()) {
			reduced = append(reduced, s)
		}
	}
	return Reshape(m, reduced...), Reshape(v, reduced...), y
}

// BatchNormInfer normalises x with given statistics: (x-mean)/sqrt(variance+eps)*gamma +
// beta. mean, variance, gamma and beta (gamma and beta may be nil) are either rank 1 of
// the channel count, for channel axis 1 of x (N, C, ...), or broadcast to x's shape.
func BatchNormInfer(x, gamma, beta, mean, variance *Node, eps float32) *Node {
	shape := statShape(x, mean)
	scale := Rsqrt(AddScalar(Reshape(variance, shape...), float64(eps)))
	if gamma != nil {
		scale = Mul(scale, Reshape(gamma, shape...))
	}
	shift := Neg(Mul(Reshape(mean, shape...), scale))
	if beta != nil {
		shift = Add(shift, Reshape(beta, shape...))
	}
	return Add(Mul(x, scale), shift)
}

// statShape is the shape per-channel statistics take to broadcast against x: (1, C, 1...)
// for a rank-1 statistic and x of rank at least 2, else the statistic's own shape.
func statShape(x, stat *Node) Shape {
	if stat.shape.Rank() != 1 || x.shape.Rank() < 2 {
		return stat.shape
	}
	s := make(Shape, x.shape.Rank())
	for i := range s {
		s[i] = 1
	}
	s[1] = stat.shape[0]
	return s
}

// affine returns y*gamma + beta, each reshaped to shape (nil parameters are skipped).
func affine(y, gamma, beta *Node, shape Shape) *Node {
	if gamma != nil {
		y = Mul(y, Reshape(gamma, shape...))
	}
	if beta != nil {
		y = Add(y, Reshape(beta, shape...))
	}
	return y
}

// containsAxis reports whether axes (possibly negative, for rank) contains axis.
func containsAxis(axes []int, axis, rank int) bool {
	for _, a := range axes {
		if a == axis || a+rank == axis {
			return true
		}
	}
	return false
}

// GroupNorm splits the channels of x (N, C, spatial...) into groups, normalises each
// group of each sample over its channels and positions, and applies the per-channel gamma
// and beta (shape [C], nil for none).
func GroupNorm(x *Node, groups int, gamma, beta *Node, eps float32) *Node {
	if x.shape.Rank() < 2 || groups < 1 || x.shape[1]%groups != 0 {
		fail(OpLayerNorm, "group norm: %d groups must divide the channels of input (N, C, ...) %v", groups, x.shape)
	}
	y := LayerNorm(Reshape(x, x.shape[0], groups, -1), nil, nil, []int{-1}, eps)
	y = Reshape(y, x.shape...)
	if gamma == nil && beta == nil {
		return y
	}
	shape := make(Shape, x.shape.Rank())
	for i := range shape {
		shape[i] = 1
	}
	shape[1] = x.shape[1]
	return affine(y, gamma, beta, shape)
}

// InstanceNorm normalises each channel of each sample of x (N, C, spatial...) over its
// positions, then applies gamma and beta (shape [C], nil for none).
func InstanceNorm(x, gamma, beta *Node, eps float32) *Node {
	if x.shape.Rank() < 3 {
		fail(OpLayerNorm, "instance norm needs (N, C, spatial...), have %v", x.shape)
	}
	return GroupNorm(x, x.shape[1], gamma, beta, eps)
}
