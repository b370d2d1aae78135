package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// activationFunc emits an activation.
type activationFunc func(x *tensor.Node) *tensor.Node

// activationByName resolves the activations nn offers. The empty name is linear.
func activationByName(name string) (activationFunc, error) {
	switch name {
	case "", "linear":
		return func(x *tensor.Node) *tensor.Node { return x }, nil
	case "relu":
		return tensor.Relu, nil
	case "sigmoid":
		return tensor.Sigmoid, nil
	case "tanh":
		return tensor.Tanh, nil
	case "softmax":
		return func(x *tensor.Node) *tensor.Node { return tensor.Softmax(x, -1) }, nil
	case "silu", "swish":
		return tensor.Silu, nil
	case "gelu":
		return func(x *tensor.Node) *tensor.Node { return tensor.Gelu(x, tensor.GeluErf) }, nil
	case "leaky_relu":
		return func(x *tensor.Node) *tensor.Node { return tensor.LeakyRelu(x, 0.2) }, nil
	case "elu":
		return func(x *tensor.Node) *tensor.Node { return tensor.Elu(x, 1) }, nil
	}
	return nil, fmt.Errorf("unknown activation %q (want relu, sigmoid, tanh, softmax, silu, gelu, leaky_relu, elu or linear)", name)
}

// activate applies the named activation to pre and, for softmax and sigmoid, remembers
// pre so a cross-entropy loss on this output can work from the logits.
func (c *fwd) activate(name string, pre *tensor.Node) *tensor.Node {
	f, err := activationByName(name)
	if err != nil {
		panic(&tensor.Error{Op: "activation", Err: err})
	}
	y := f(pre)
	if name == "softmax" || name == "sigmoid" {
		c.logits[y] = logit{pre: pre, act: name}
	}
	return y
}

// actLayer applies an activation on its own: nn.Act("relu").
type actLayer struct {
	layerBase
	C struct{ Activation string }
}

// Act is a layer that only applies an activation (relu, softmax, ...).
func Act(name string, opts ...LayerOption) Layer {
	l := &actLayer{}
	initBase(l, "activation", &layerSettings{}, nil, opts)
	if _, err := activationByName(name); err != nil && l.err == nil {
		l.err = fmt.Errorf("nn: Act: %w", err)
	}
	l.C.Activation = name
	return l
}

func (l *actLayer) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *actLayer) config() any             { return &l.C }
func (l *actLayer) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	_, err := l.checkRebuild(in)
	return err
}
func (l *actLayer) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	return c.activate(l.C.Activation, in[0])
}
