package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// Node is a symbolic value of the functional API: a model input or the output of a
// layer applied to other nodes. It has a Spec (dtype and shape without the batch axis)
// but no data. A node whose construction failed carries the error; Model reports it.
type Node struct {
	layer  Layer
	inputs []*Node
	spec   Spec
	name   string
	err    error
}

// Input declares a model input of the given shape (batch axis excluded), float32 unless
// the DType option says otherwise; Name names it.
func Input(shape []int, opts ...InputOption) *Node {
	s := inputSettings{dtype: tensor.F32}
	n := &Node{}
	if err := applyOptions("Input", &s, nil, opts, InputOption.inputSetting); err != nil {
		n.err = err
		return n
	}
	sh := tensor.Shape(shape).Clone()
	if err := sh.Validate(); err != nil {
		n.err = fmt.Errorf("nn: Input shape %v: %w", shape, err)
		return n
	}
	n.spec = Spec{DType: s.dtype, Shape: sh}
	n.name = s.name
	return n
}

// Shape returns the node's shape without the batch axis.
func (n *Node) Shape() []int { return n.spec.Shape.Clone() }

// DType returns the node's element type.
func (n *Node) DType() tensor.DType { return n.spec.DType }

// Err returns the error that building this node (or one it depends on) met, or nil.
func (n *Node) Err() error { return n.err }

// String describes the node: "Node(dense_1: f32[128])".
func (n *Node) String() string {
	if n.err != nil {
		return fmt.Sprintf("Node(error: %v)", n.err)
	}
	who := "input"
	if n.layer != nil {
		who = n.layer.Name()
	} else if n.name != "" {
		who = "input " + n.name
	}
	return fmt.Sprintf("Node(%s: %v)", who, n.spec)
}

// applyLayer is Layer.Apply for every layer: it propagates input errors, sets the layer
// up for the input specs and infers the output spec by building the layer's forward
// computation on a scratch graph with a batch of one.
func applyLayer(l Layer, inputs []*Node) *Node {
	out := &Node{layer: l, inputs: inputs}
	if err := l.base().err; err != nil {
		out.err = err
		return out
	}
	specs := make([]Spec, len(inputs))
	for i, in := range inputs {
		if in == nil {
			out.err = fmt.Errorf("nn: layer %s: input %d is nil", l.Name(), i)
			return out
		}
		if in.err != nil {
			out.err = in.err
			return out
		}
		specs[i] = in.spec
	}
	spec, err := inferSpec(l, specs)
	if err != nil {
		out.err = fmt.Errorf("nn: %w", err)
		return out
	}
	out.spec = spec
	return out
}

// inferSpec sets l up for in and returns its output spec.
func inferSpec(l Layer, in []Spec) (Spec, error) {
	if err := l.setup(in); err != nil {
		return Spec{}, err
	}
	var spec Spec
	err := tensor.Catch(func() {
		g := tensor.NewGraph()
		c := newFwd(g, false)
		nodes := make([]*tensor.Node, len(in))
		for i, s := range in {
			nodes[i] = g.Input(fmt.Sprintf("x%d", i), s.DType, append([]int{1}, s.Shape...)...)
		}
		y := l.forward(c, nodes)
		spec = Spec{DType: y.DType(), Shape: y.Shape()[1:].Clone()}
	})
	if err != nil {
		return Spec{}, fmt.Errorf("layer %s (%s) on input %v: %w", l.Name(), l.Kind(), in, err)
	}
	return spec, nil
}

// fwd is the context in which layers emit their computation: the graph, whether it is a
// training graph (dropout active, batch statistics used), the dropout seed fed per step,
// the side-effect nodes layers add (running-statistics updates) and, for output heads,
// the pre-activation values that losses use for numerically stable cross-entropy.
type fwd struct {
	g        *tensor.Graph
	training bool
	seeds    []*tensor.Node // one I32 scalar input per dropout site
	updates  []*tensor.Node
	logits   map[*tensor.Node]logit
	// vars, when set, replaces variables by other nodes (gradient checks feed weights
	// as inputs this way).
	vars map[*tensor.Variable]*tensor.Node
	// precision is the precision of matrix products (MixedPrecision): the operand type
	// and TF32; f32 by default.
	precision tensor.MatMulAttr
	// seedFn, when set, supplies the dropout seeds (a caller's graph feeds them).
	seedFn func() *tensor.Node
}

// logit remembers that an activated node came from pre through activation act.
type logit struct {
	pre *tensor.Node
	act string
}

func newFwd(g *tensor.Graph, training bool) *fwd {
	return &fwd{g: g, training: training, logits: map[*tensor.Node]logit{}}
}

// compiledFwd starts a forward pass of a compiled model, in its precision policy.
func (m *Net) compiledFwd(g *tensor.Graph, training bool) *fwd {
	c := newFwd(g, training)
	c.precision = m.comp.opts.precision
	return c
}

// dropoutSeed adds the seed input of one more dropout site. Each site has its own input,
// fed per step from the host, so no integer arithmetic runs on the device.
func (c *fwd) dropoutSeed() *tensor.Node {
	if c.seedFn != nil {
		return c.seedFn()
	}
	s := c.g.Input(fmt.Sprintf("dropout_seed_%d", len(c.seeds)), tensor.I32)
	c.seeds = append(c.seeds, s)
	return s
}

// matmul returns x·w, in the mixed precision of the compilation (the backend may
// round the operands to it; the product and its gradients stay f32).
func (c *fwd) matmul(x, w *tensor.Node) *tensor.Node {
	return tensor.MatMulWith(x, w, c.precision)
}

// v returns the graph's node for variable v.
func (c *fwd) v(v *tensor.Variable) *tensor.Node {
	if n, ok := c.vars[v]; ok {
		return n
	}
	return c.g.Var(v)
}
