package nn

import (
	"errors"
	"fmt"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Net implements runtime.Model, the view of its weights and forward pass that another
// API (ag.FromNet) runs inside its own graphs: a custom training loop or loss on this
// model trains these very weights, and Fit continues from them.
var _ runtime.Model = (*Net)(nil)

// ModelRuntime returns the runtime that holds the model's weights.
func (m *Net) ModelRuntime() (*runtime.Runtime, error) { return m.rtime() }

// ModelVariables lists the trainable variables, then the state variables.
func (m *Net) ModelVariables() (params, state []*tensor.Variable) { return m.Params(), m.stateVars() }

// ModelInputs describes the model's inputs (none before a Sequential model is built).
func (m *Net) ModelInputs() []runtime.ModelInput {
	out := make([]runtime.ModelInput, len(m.inputs))
	for i, in := range m.inputs {
		out[i] = runtime.ModelInput{Name: in.name, DType: in.spec.DType, Shape: in.spec.Shape.Clone()}
	}
	return out
}

// EmitForward adds the model's forward pass on xs to their graph (building a
// Sequential model from xs' shapes first if needed), in the precision policy it was
// compiled with.
func (m *Net) EmitForward(xs []*tensor.Node, opts runtime.EmitOptions) (outs, updates []*tensor.Node, err error) {
	if !m.Built() {
		if len(xs) != 1 || xs[0] == nil || xs[0].Shape().Rank() == 0 {
			return nil, nil, errors.New("nn: EmitForward: an unbuilt Sequential model needs one batched input")
		}
		if err := m.buildSequential(Spec{DType: xs[0].DType(), Shape: xs[0].Shape()[1:].Clone()}); err != nil {
			return nil, nil, err
		}
	}
	if len(xs) != len(m.inputs) {
		return nil, nil, fmt.Errorf("nn: EmitForward: the model takes %d inputs, got %d", len(m.inputs), len(xs))
	}
	for i, x := range xs {
		in := m.inputs[i]
		if x == nil || x.Shape().Rank() != in.spec.Shape.Rank()+1 || !x.Shape()[1:].Equal(in.spec.Shape) || x.DType() != in.spec.DType {
			return nil, nil, fmt.Errorf("nn: EmitForward: input %d must be %v[batch %v], got %v", i, in.spec.DType, in.spec.Shape, x)
		}
	}
	err = tensor.Catch(func() {
		c := newFwd(xs[0].Graph(), opts.Training)
		if m.comp != nil {
			c.precision = m.comp.opts.precision
		}
		c.vars, c.seedFn = opts.Vars, opts.Seed
		outs = m.forward(c, xs)
		updates = c.updates
	})
	return outs, updates, err
}
