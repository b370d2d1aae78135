package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// batchNorm normalises over the batch (and spatial axes) per channel.
type batchNorm struct {
	layerBase
	C struct {
		Axis     int // sample axis of the channels
		Eps      float64
		Momentum float64
	}
	gamma, beta, mean, variance *tensor.Variable
}

// BatchNorm normalises each channel (sample axis 0 by default, as channels-first data
// has it; Axis to change) with the batch's statistics while training, and with running
// averages (Momentum, default 0.99) in Evaluate and Predict. Options: Axis, Epsilon
// (default 1e-3), Momentum, InputShape, Name.
func BatchNorm(opts ...LayerOption) Layer {
	l := &batchNorm{}
	s := layerSettings{eps: 1e-3, momentum: 0.99}
	initBase(l, "batch_norm", &s, []string{"Axis", "Epsilon", "Momentum"}, opts)
	l.C.Axis, l.C.Eps, l.C.Momentum = s.axis, s.eps, s.momentum
	return l
}

func (l *batchNorm) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *batchNorm) config() any             { return &l.C }

func (l *batchNorm) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if err := wantFloat(l.name, in[0]); err != nil {
		return err
	}
	r := in[0].Shape.Rank()
	if l.C.Axis < -r || l.C.Axis >= r {
		return fmt.Errorf("layer %s: axis %d out of range for samples %v", l.name, l.C.Axis, in[0].Shape)
	}
	first, err := l.checkRebuild(in)
	if first && err == nil {
		ch := in[0].Shape[(l.C.Axis+r)%r]
		l.gamma = l.param("gamma", filled(1, ch))
		l.beta = l.param("beta", tensor.New(tensor.F32, ch))
		l.mean = l.stateVar("moving_mean", tensor.New(tensor.F32, ch))
		l.variance = l.stateVar("moving_variance", filled(1, ch))
	}
	return err
}

func (l *batchNorm) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	x := in[0]
	r := x.Shape().Rank()
	axis := (l.C.Axis+r-1)%(r-1) + 1
	var axes []int
	bshape := make([]int, r)
	for i := range bshape {
		bshape[i] = 1
		if i != axis {
			axes = append(axes, i)
		}
	}
	bshape[axis] = x.Shape()[axis]
	b := func(v *tensor.Variable) *tensor.Node { return tensor.Reshape(c.v(v), bshape...) }
	var mean, variance *tensor.Node
	if c.training {
		mean = tensor.Mean(x, axes, true)
		variance = tensor.Variance(x, axes, true, 0)
		m := l.C.Momentum
		update := func(v *tensor.Variable, batch *tensor.Node) {
			old := c.v(v)
			next := tensor.Add(tensor.MulScalar(old, m), tensor.MulScalar(tensor.Reshape(batch, old.Shape()...), 1-m))
			c.updates = append(c.updates, tensor.Assign(old, next))
		}
		update(l.mean, mean)
		update(l.variance, variance)
	} else {
		mean, variance = b(l.mean), b(l.variance)
	}
	scale := tensor.Mul(tensor.Rsqrt(tensor.AddScalar(variance, l.C.Eps)), b(l.gamma))
	return tensor.Add(tensor.Mul(tensor.Sub(x, mean), scale), b(l.beta))
}

// featureNorm is LayerNorm or RMSNorm over the last axis.
type featureNorm struct {
	layerBase
	C struct {
		RMS bool
		Eps float64
	}
	gamma, beta *tensor.Variable
}

// LayerNorm normalises each sample over its last axis to zero mean and unit variance,
// then scales and shifts it with learned gamma and beta. Options: Epsilon, Name.
func LayerNorm(opts ...LayerOption) Layer { return newFeatureNorm("layer_norm", false, opts) }

// RMSNorm divides each sample by the root mean square over its last axis and scales it
// with a learned gamma. Options: Epsilon, Name.
func RMSNorm(opts ...LayerOption) Layer { return newFeatureNorm("rms_norm", true, opts) }

func newFeatureNorm(kind string, rms bool, opts []LayerOption) Layer {
	l := &featureNorm{}
	s := layerSettings{eps: 1e-5}
	initBase(l, kind, &s, []string{"Epsilon"}, opts)
	l.C.RMS, l.C.Eps = rms, s.eps
	return l
}

func (l *featureNorm) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *featureNorm) config() any             { return &l.C }

func (l *featureNorm) setup(in []Spec) error {
	if err := wantFeatures(l.name, in); err != nil {
		return err
	}
	first, err := l.checkRebuild(in)
	if first && err == nil {
		d := in[0].Shape[in[0].Shape.Rank()-1]
		l.gamma = l.param("gamma", filled(1, d))
		if !l.C.RMS {
			l.beta = l.param("beta", tensor.New(tensor.F32, d))
		}
	}
	return err
}

func (l *featureNorm) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	if l.C.RMS {
		return tensor.RMSNorm(in[0], c.v(l.gamma), []int{-1}, float32(l.C.Eps))
	}
	return tensor.LayerNorm(in[0], c.v(l.gamma), c.v(l.beta), []int{-1}, float32(l.C.Eps))
}
