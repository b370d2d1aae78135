package nn

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// CustomLayer is a layer written by the user, in a notebook cell or in a Go program;
// Custom wraps it into a Layer that works everywhere a built-in one does (Sequential,
// the functional API, Summary, Fit, Evaluate, Predict, Trainer, Save).
//
// Build declares the layer's weights by name; Call reads them by the same names. The
// variables themselves belong to the Layer that Custom returns, not to the CustomLayer
// value, so one value may back several layers (Net.Clone and Trainer.Model rebuild the
// layer from it) and should hold only hyperparameters.
//
//	type Scale struct{}
//
//	func (Scale) Build(b *nn.Builder, in []nn.Spec) error {
//		b.Weight("gain", in[0].Shape[len(in[0].Shape)-1:], nn.Ones())
//		return nil
//	}
//
//	func (Scale) Call(f *nn.Forward, in []*tensor.Node) *tensor.Node {
//		return tensor.Mul(in[0], f.Weight("gain"))
//	}
//
//	layer := nn.Custom("scale", Scale{})
type CustomLayer interface {
	// Build declares the layer's weights for the specs of its inputs (batch axis
	// excluded). It runs once, the first time the layer is applied; an error rejects
	// the inputs and is reported by Model, Fit or Compile.
	Build(b *Builder, in []Spec) error
	// Call emits the layer's computation on its inputs (batch axis first) with the
	// engine's ops and returns the output (batch axis first).
	Call(f *Forward, in []*tensor.Node) *tensor.Node
}

// custom is the Layer of a CustomLayer; Lambda is one too.
type custom struct {
	layerBase
	impl CustomLayer
	// C is the configuration given with the Config option, saved with the model.
	C json.RawMessage
	// vars holds the variables Build declared, by the name given to the Builder.
	vars map[string]*tensor.Variable
}

// Custom wraps a CustomLayer into a Layer of the given kind. The kind names the layer
// type in Summary and in saved files; Load rebuilds layers of that kind from the
// constructor passed with the CustomKind option. Options: Config (saved with the model
// and handed to that constructor), InputShape, Name.
func Custom(kind string, impl CustomLayer, opts ...LayerOption) Layer {
	l := &custom{impl: impl}
	s := layerSettings{}
	initBase(l, kind, &s, []string{"Config"}, opts)
	l.C = s.config
	switch _, builtin := layerKinds[kind]; {
	case l.err != nil:
	case kind == "":
		l.err = fmt.Errorf("nn: Custom: the kind is empty (name the layer type, e.g. %q)", "scale")
	case builtin || kind == "lambda":
		l.err = fmt.Errorf("nn: Custom: kind %q is a built-in layer kind; choose another", kind)
	case impl == nil:
		l.err = fmt.Errorf("nn: Custom(%q): the CustomLayer is nil", kind)
	}
	return l
}

// lambdaLayer is the CustomLayer of Lambda.
type lambdaLayer func(x *tensor.Node) *tensor.Node

func (lambdaLayer) Build(b *Builder, in []Spec) error {
	return wantInputs(b.l.name, in, 1, 1)
}

func (f lambdaLayer) Call(_ *Forward, in []*tensor.Node) *tensor.Node { return f(in[0]) }

// Lambda is a layer without weights that applies f to its input (batch axis first):
// nn.Lambda(func(x *tensor.Node) *tensor.Node { return tensor.MulScalar(x, 2) }).
// A function cannot be saved, so Load needs it again: pass LambdaFunc with the layer's
// name. Options: InputShape, Name.
func Lambda(f func(x *tensor.Node) *tensor.Node, opts ...LayerOption) Layer {
	l := &custom{}
	initBase(l, "lambda", &layerSettings{}, nil, opts)
	if f == nil && l.err == nil {
		l.err = fmt.Errorf("nn: Lambda: the function is nil")
	}
	l.impl = lambdaLayer(f)
	return l
}

func (l *custom) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *custom) config() any             { return &l.C }

func (l *custom) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 64); err != nil {
		return err
	}
	first, err := l.checkRebuild(in)
	if !first || err != nil {
		return err
	}
	b := &Builder{l: l}
	if perr := callUser("Build", func() { err = l.impl.Build(b, cloneSpecs(in)) }); perr != nil {
		err = perr
	}
	if err == nil {
		err = b.err
	}
	if err != nil {
		// Forget the failed build, so the layer can be applied again.
		l.built, l.params, l.state, l.vars = nil, nil, nil, nil
		return fmt.Errorf("layer %s (%s): %w", l.name, l.kind, err)
	}
	return nil
}

func (l *custom) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	var y *tensor.Node
	err := callUser("Call", func() { y = l.impl.Call(&Forward{c: c, l: l}, in) })
	switch {
	case err != nil:
	case y == nil:
		err = fmt.Errorf("Call returned a nil node")
	case y.Graph() != in[0].Graph():
		err = fmt.Errorf("Call returned a node of another graph (build on the input nodes, not on a new graph)")
	case y.Shape().Rank() == 0 || y.Shape()[0] != in[0].Shape()[0]:
		err = fmt.Errorf("Call returned shape %v for a batch of %d: the batch axis must stay first", y.Shape(), in[0].Shape()[0])
	}
	if err != nil {
		panic(&tensor.Error{Op: "layer " + l.name, Err: err})
	}
	return y
}

// callUser runs user code (what names it in messages) and turns a panic into an
// error; a graph-building panic (*tensor.Error, a misused op) keeps its message.
func callUser(what string, f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			var te *tensor.Error
			if e, ok := r.(error); ok && errors.As(e, &te) {
				err = fmt.Errorf("%s: %w", what, e)
				return
			}
			err = fmt.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
	return err
}

func cloneSpecs(in []Spec) []Spec {
	out := make([]Spec, len(in))
	for i, s := range in {
		out[i] = Spec{DType: s.DType, Shape: s.Shape.Clone()}
	}
	return out
}

// Builder declares the weights of a CustomLayer in its Build method. A mistake (a
// duplicate name, a bad shape, an initializer returning the wrong shape) is reported
// as Build's error.
type Builder struct {
	l   *custom
	err error
}

// Weight declares a trainable float32 variable of the shape, named "layer/name" in
// Summary, Weights and saved files, with initial values from init. Call reads it with
// Forward.Weight(name).
func (b *Builder) Weight(name string, shape []int, init Initializer) {
	if v := b.variable(name, shape, init); v != nil {
		b.l.params = append(b.l.params, v)
	}
}

// State declares a non-trainable float32 variable (running statistics, counters),
// saved with the model; Call reads it with Forward.Weight(name) and changes it in
// training graphs with Forward.Update.
func (b *Builder) State(name string, shape []int, init Initializer) {
	if v := b.variable(name, shape, init); v != nil {
		b.l.state = append(b.l.state, v)
	}
}

func (b *Builder) variable(name string, shape []int, init Initializer) *tensor.Variable {
	if b.err != nil {
		return nil
	}
	sh := tensor.Shape(shape).Clone()
	switch _, dup := b.l.vars[name]; {
	case name == "" || strings.Contains(name, "/"):
		b.err = fmt.Errorf("weight name %q: want a non-empty name without '/'", name)
	case dup:
		b.err = fmt.Errorf("weight %q declared twice", name)
	case init == nil:
		b.err = fmt.Errorf("weight %q: the initializer is nil", name)
	default:
		b.err = sh.Validate()
	}
	if b.err != nil {
		return nil
	}
	var t *tensor.Tensor
	if b.err = callUser("the initializer of weight "+name, func() { t = init(sh.Clone()) }); b.err != nil {
		return nil
	}
	if t == nil || t.DType() != tensor.F32 || !t.Shape().Equal(sh) {
		got := "nil"
		if t != nil {
			got = fmt.Sprintf("%v%v", t.DType(), t.Shape())
		}
		b.err = fmt.Errorf("weight %q: the initializer returned %s, want f32%v", name, got, sh)
		return nil
	}
	v := tensor.NewVariable(b.l.name+"/"+name, t)
	if b.l.vars == nil {
		b.l.vars = map[string]*tensor.Variable{}
	}
	b.l.vars[name] = v
	return v
}

// Forward is what a CustomLayer's Call emits its computation with: the layer's
// weights as graph nodes, whether the graph trains, dropout and state updates.
type Forward struct {
	c *fwd
	l *custom
}

// Weight returns the graph node of the weight (or state) that Build declared as name.
func (f *Forward) Weight(name string) *tensor.Node {
	v, ok := f.l.vars[name]
	if !ok {
		names := make([]string, 0, len(f.l.vars))
		for n := range f.l.vars {
			names = append(names, n)
		}
		sort.Strings(names)
		panic(&tensor.Error{Op: "layer " + f.l.name, Err: fmt.Errorf("no weight %q (Build declared: %s)", name, strings.Join(names, ", "))})
	}
	return f.c.v(v)
}

// Training reports whether the graph being built trains (Fit, Trainer.Step) rather
// than evaluates or predicts.
func (f *Forward) Training() bool { return f.c.training }

// Dropout zeroes each element of x with probability rate in training graphs (scaling
// the rest by 1/(1-rate)) and returns x unchanged otherwise.
func (f *Forward) Dropout(x *tensor.Node, rate float64) *tensor.Node {
	if rate < 0 || rate >= 1 {
		panic(&tensor.Error{Op: "layer " + f.l.name, Err: fmt.Errorf("dropout rate %v outside [0, 1)", rate)})
	}
	return f.c.dropout(x, rate)
}

// Update writes value into the state variable declared as name after each training
// step (as BatchNorm updates its running statistics); outside training graphs it does
// nothing. value must have the variable's shape.
func (f *Forward) Update(name string, value *tensor.Node) {
	if !f.c.training {
		return
	}
	v := f.Weight(name)
	for _, s := range f.l.state {
		if s == f.l.vars[name] {
			f.c.updates = append(f.c.updates, tensor.Assign(v, value))
			return
		}
	}
	panic(&tensor.Error{Op: "layer " + f.l.name, Err: fmt.Errorf("Update of %q: it is a trainable Weight; declare it with Builder.State", name)})
}
