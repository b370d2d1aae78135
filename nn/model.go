package nn

import (
	"errors"
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// Net is a model: a graph of layers from inputs to outputs, built either by Sequential
// or by the functional Model. Compile attaches an optimizer, losses and metrics; Fit,
// Evaluate and Predict then run compiled graphs on the runtime, where the weights stay
// between calls.
type Net struct {
	name    string
	inputs  []*Node
	outputs []*Node
	nodes   []*Node // every layer node, in topological order
	layers  []Layer // distinct layers in order of first use

	// pending holds a Sequential model's layers until it knows its input shape.
	pending []Layer

	comp    *compiled
	History *History

	// noted records the one-time notes said about this model's data (noteReshape).
	noted map[string]bool
}

// Sequential stacks layers, each applied to the previous one's output. The model is
// built when its input shape is known: from the InputShape option of the first layer,
// or from the data the first Fit, Evaluate or Predict receives.
func Sequential(layers ...Layer) *Net {
	m := &Net{name: "sequential", pending: layers}
	if len(layers) > 0 && layers[0] != nil && layers[0].base().inputShape != nil {
		// An error here is kept in the nodes and reported by the first call that
		// needs the built model.
		_ = m.buildSequential(*layers[0].base().inputShape)
	}
	return m
}

// Model builds a functional model from its input nodes to its output nodes. Every layer
// between them must be reachable from the inputs; errors met while applying layers are
// reported here.
func Model(inputs []*Node, outputs []*Node, opts ...ModelOption) (*Net, error) {
	s := modelSettings{}
	if err := applyOptions("Model", &s, nil, opts, ModelOption.modelSetting); err != nil {
		return nil, err
	}
	m := &Net{name: s.name}
	if m.name == "" {
		m.name = "model"
	}
	if err := m.link(inputs, outputs); err != nil {
		return nil, err
	}
	return m, nil
}

// link records the graph between inputs and outputs in topological order.
func (m *Net) link(inputs, outputs []*Node) error {
	if len(inputs) == 0 || len(outputs) == 0 {
		return errors.New("nn: Model needs at least one input and one output")
	}
	isInput := map[*Node]int{}
	for i, in := range inputs {
		if in == nil {
			return fmt.Errorf("nn: Model: input %d is nil", i)
		}
		if in.err != nil {
			return in.err
		}
		if in.layer != nil {
			return fmt.Errorf("nn: Model: input %d is %v, a layer output, not an nn.Input", i, in)
		}
		if in.name == "" {
			in.name = fmt.Sprintf("input_%d", i)
		}
		isInput[in] = i
	}
	seen := map[*Node]bool{}
	var visit func(n *Node, path int) error
	visit = func(n *Node, depth int) error {
		if n.err != nil {
			return n.err
		}
		if _, ok := isInput[n]; ok || seen[n] {
			return nil
		}
		if n.layer == nil {
			return fmt.Errorf("nn: Model: %v is not among the model's inputs", n)
		}
		if depth > 100000 {
			return errors.New("nn: Model: graph too deep")
		}
		for _, in := range n.inputs {
			if err := visit(in, depth+1); err != nil {
				return err
			}
		}
		seen[n] = true
		m.nodes = append(m.nodes, n)
		return nil
	}
	for i, out := range outputs {
		if out == nil {
			return fmt.Errorf("nn: Model: output %d is nil", i)
		}
		if err := visit(out, 0); err != nil {
			return err
		}
	}
	layerSeen := map[Layer]bool{}
	for _, n := range m.nodes {
		if !layerSeen[n.layer] {
			layerSeen[n.layer] = true
			m.layers = append(m.layers, n.layer)
		}
	}
	m.inputs, m.outputs = inputs, outputs
	return nil
}

// buildSequential applies the pending layers to an input of the given spec.
func (m *Net) buildSequential(in Spec) error {
	x := &Node{spec: Spec{DType: in.DType, Shape: in.Shape.Clone()}, name: "input"}
	y := x
	for i, l := range m.pending {
		if l == nil {
			return fmt.Errorf("nn: Sequential: layer %d is nil", i)
		}
		y = l.Apply(y)
		if y.err != nil {
			return y.err
		}
	}
	if len(m.pending) == 0 {
		return errors.New("nn: Sequential model has no layers")
	}
	if err := m.link([]*Node{x}, []*Node{y}); err != nil {
		return err
	}
	m.pending = nil
	return nil
}

// ensureBuilt builds a Sequential model from the sample spec of its first input tensor.
func (m *Net) ensureBuilt(x []*tensor.Tensor) error {
	if m.inputs != nil {
		return nil
	}
	if len(x) != 1 {
		return fmt.Errorf("nn: a Sequential model takes one input tensor, got %d", len(x))
	}
	if x[0].Shape().Rank() == 0 {
		return errors.New("nn: input data needs a batch axis, got a scalar")
	}
	dt := x[0].DType()
	if !dt.IsInt() {
		dt = tensor.F32
	}
	return m.buildSequential(Spec{DType: dt, Shape: x[0].Shape()[1:].Clone()})
}

// Built reports whether the model knows its shapes (a Sequential model without
// InputShape is built by its first Fit, Evaluate or Predict).
func (m *Net) Built() bool { return m.inputs != nil }

// Layers returns the model's layers in order of first use.
func (m *Net) Layers() []Layer {
	if m.inputs == nil {
		return append([]Layer(nil), m.pending...)
	}
	return append([]Layer(nil), m.layers...)
}

// Params returns every trainable variable of the model.
func (m *Net) Params() []*tensor.Variable {
	var out []*tensor.Variable
	for _, l := range m.layers {
		out = append(out, l.Params()...)
	}
	return out
}

// stateVars returns every non-trainable variable of the model.
func (m *Net) stateVars() []*tensor.Variable {
	var out []*tensor.Variable
	for _, l := range m.layers {
		out = append(out, l.State()...)
	}
	return out
}

// OutputNames names the outputs: the producing layer's name for each head.
func (m *Net) OutputNames() []string {
	names := make([]string, len(m.outputs))
	for i, o := range m.outputs {
		names[i] = o.layer.Name()
	}
	return names
}

// forward emits the model's computation for concrete input nodes and returns the
// output nodes.
func (m *Net) forward(c *fwd, xs []*tensor.Node) []*tensor.Node {
	val := make(map[*Node]*tensor.Node, len(m.nodes)+len(xs))
	for i, in := range m.inputs {
		val[in] = xs[i]
	}
	for _, n := range m.nodes {
		args := make([]*tensor.Node, len(n.inputs))
		for i, in := range n.inputs {
			args[i] = val[in]
		}
		val[n] = n.layer.forward(c, args)
	}
	outs := make([]*tensor.Node, len(m.outputs))
	for i, o := range m.outputs {
		outs[i] = val[o]
	}
	return outs
}
