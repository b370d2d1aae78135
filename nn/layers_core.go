package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// dense is a fully connected layer on the last axis.
type dense struct {
	layerBase
	C struct {
		Units      int
		Activation string
		NoBias     bool
	}
	kernel, bias *tensor.Variable
}

// Dense is a fully connected layer: activation(x @ kernel + bias) on the last axis, so
// on a sequence (batch, time, features) it applies to every step. Options: Activation,
// NoBias, InputShape, Name.
func Dense(units int, opts ...LayerOption) Layer {
	l := &dense{}
	s := layerSettings{}
	initBase(l, "dense", &s, []string{"Activation", "NoBias"}, opts)
	if l.err == nil && units <= 0 {
		l.err = fmt.Errorf("nn: Dense: units must be positive, got %d", units)
	}
	l.C.Units, l.C.Activation, l.C.NoBias = units, s.activation, s.noBias
	return l
}

func (l *dense) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *dense) config() any             { return &l.C }

func (l *dense) setup(in []Spec) error {
	if err := wantFeatures(l.name, in); err != nil {
		return err
	}
	first, err := l.checkRebuild(in)
	if first && err == nil {
		fanIn := in[0].Shape[in[0].Shape.Rank()-1]
		l.kernel = l.param("kernel", glorot(fanIn, l.C.Units, fanIn, l.C.Units))
		if !l.C.NoBias {
			l.bias = l.param("bias", tensor.New(tensor.F32, l.C.Units))
		}
	}
	return err
}

func (l *dense) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	y := c.matmul(in[0], c.v(l.kernel))
	if l.bias != nil {
		y = tensor.Add(y, c.v(l.bias))
	}
	return c.activate(l.C.Activation, y)
}

// flatten reshapes each sample to one axis.
type flatten struct {
	layerBase
	C struct{}
}

// Flatten reshapes each sample to a vector (the batch axis is kept).
func Flatten(opts ...LayerOption) Layer {
	l := &flatten{}
	initBase(l, "flatten", &layerSettings{}, nil, opts)
	return l
}

func (l *flatten) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *flatten) config() any             { return &l.C }
func (l *flatten) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	_, err := l.checkRebuild(in)
	return err
}
func (l *flatten) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	return tensor.Reshape(in[0], in[0].Shape()[0], -1)
}

// reshape gives each sample a new shape.
type reshape struct {
	layerBase
	C struct{ Shape []int }
}

// Reshape gives each sample a new shape of the same size (batch axis excluded); one
// dimension may be -1.
func Reshape(shape []int, opts ...LayerOption) Layer {
	l := &reshape{}
	initBase(l, "reshape", &layerSettings{}, nil, opts)
	l.C.Shape = append([]int(nil), shape...)
	return l
}

func (l *reshape) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *reshape) config() any             { return &l.C }
func (l *reshape) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if _, err := tensor.ResolveReshape(in[0].Shape, l.C.Shape); err != nil {
		return fmt.Errorf("layer %s: %w", l.name, err)
	}
	_, err := l.checkRebuild(in)
	return err
}
func (l *reshape) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	return tensor.Reshape(in[0], append([]int{in[0].Shape()[0]}, l.C.Shape...)...)
}

// permute reorders the axes of each sample.
type permute struct {
	layerBase
	C struct{ Perm []int }
}

// Permute reorders the axes of each sample: output axis i is input axis perm[i], axes
// counted from 0 without the batch axis (Permute([]int{1, 0}) swaps the two axes of a
// (time, features) sample).
func Permute(perm []int, opts ...LayerOption) Layer {
	l := &permute{}
	initBase(l, "permute", &layerSettings{}, nil, opts)
	l.C.Perm = append([]int(nil), perm...)
	return l
}

func (l *permute) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *permute) config() any             { return &l.C }
func (l *permute) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if len(l.C.Perm) != in[0].Shape.Rank() {
		return fmt.Errorf("layer %s: permutation %v for samples of rank %d", l.name, l.C.Perm, in[0].Shape.Rank())
	}
	_, err := l.checkRebuild(in)
	return err
}
func (l *permute) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	perm := []int{0}
	for _, p := range l.C.Perm {
		perm = append(perm, p+1)
	}
	return tensor.Permute(in[0], perm...)
}

// dropout zeroes random elements while training.
type dropout struct {
	layerBase
	C struct{ Rate float64 }
}

// Dropout zeroes each element with probability rate during training and scales the rest
// by 1/(1-rate); it is the identity in Evaluate and Predict.
func Dropout(rate float64, opts ...LayerOption) Layer {
	l := &dropout{}
	initBase(l, "dropout", &layerSettings{}, nil, opts)
	if l.err == nil && (rate < 0 || rate >= 1) {
		l.err = fmt.Errorf("nn: Dropout: rate %v outside [0, 1)", rate)
	}
	l.C.Rate = rate
	return l
}

func (l *dropout) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *dropout) config() any             { return &l.C }
func (l *dropout) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	_, err := l.checkRebuild(in)
	return err
}
func (l *dropout) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	return c.dropout(in[0], l.C.Rate)
}

// dropout applies dropout at rate in training graphs and nothing otherwise.
func (c *fwd) dropout(x *tensor.Node, rate float64) *tensor.Node {
	if !c.training || rate == 0 {
		return x
	}
	return tensor.Dropout(x, c.dropoutSeed(), float32(rate))
}

// merge adds or concatenates several inputs.
type merge struct {
	layerBase
	C struct {
		Op   string // "add" or "concat"
		Axis int    // concat: sample axis, negative from the end
	}
}

// Add sums its inputs elementwise (a residual connection); shapes must match or
// broadcast.
func Add(opts ...LayerOption) Layer {
	l := &merge{}
	initBase(l, "add", &layerSettings{}, nil, opts)
	l.C.Op = "add"
	return l
}

// Concatenate joins its inputs along an axis of the samples (Axis option, default -1,
// the last).
func Concatenate(opts ...LayerOption) Layer {
	l := &merge{}
	s := layerSettings{axis: -1}
	initBase(l, "concatenate", &s, []string{"Axis"}, opts)
	l.C.Op, l.C.Axis = "concat", s.axis
	return l
}

func (l *merge) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *merge) config() any             { return &l.C }
func (l *merge) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 2, 64); err != nil {
		return err
	}
	_, err := l.checkRebuild(in)
	return err
}
func (l *merge) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	if l.C.Op == "concat" {
		axis := l.C.Axis
		if axis >= 0 {
			axis++
		}
		return tensor.Concat(axis, in...)
	}
	y := in[0]
	for _, x := range in[1:] {
		y = tensor.Add(y, x)
	}
	return y
}
