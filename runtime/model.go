package runtime

import "github.com/gml-dev/gml/tensor"

// Model is what a compiled model shows of itself so that another API can run its
// computation inside that API's own graphs on the same resident weights: nn's Net
// implements it and ag.FromNet consumes it, and neither of those packages imports the
// other. Everything it exposes is engine material (variables, graph nodes, a runtime),
// so a view of a model is a view, not a conversion.
type Model interface {
	// ModelRuntime returns the runtime holding the model's variables, opening it if
	// needed.
	ModelRuntime() (*Runtime, error)
	// ModelVariables lists the trainable variables, then the non-trainable state
	// (running statistics), in a fixed order.
	ModelVariables() (params, state []*tensor.Variable)
	// ModelInputs describes the inputs, batch axis excluded, once the model is built.
	ModelInputs() []ModelInput
	// EmitForward adds the model's forward pass on xs (batch-first nodes of one graph)
	// to their graph and returns the output nodes and, in training mode, the
	// side-effect nodes that update its state.
	EmitForward(xs []*tensor.Node, opts EmitOptions) (outs, updates []*tensor.Node, err error)
}

// ModelInput is one input of a Model: its name, dtype and per-sample shape.
type ModelInput struct {
	Name  string
	DType tensor.DType
	Shape tensor.Shape
}

// EmitOptions configures Model.EmitForward.
type EmitOptions struct {
	// Training selects the training computation (dropout on, batch statistics used and
	// state updates emitted).
	Training bool
	// Seed, when set, returns the seed node of each dropout site in turn (an I32
	// scalar the caller feeds), instead of the model adding inputs of its own.
	Seed func() *tensor.Node
	// Vars, when set, replaces the model's variables by the given nodes: the caller's
	// reads of them (a Var node of the same graph, or a pending value).
	Vars map[*tensor.Variable]*tensor.Node
}
