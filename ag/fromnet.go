package ag

import (
	"fmt"
	goruntime "runtime"
	"weak"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// NetView is an nn model seen from ag (FromNet): its weights are ag parameters — the
// model's own variables on its own runtime, not copies — and its forward pass is an ag
// operation, so a custom loop, loss or optimizer trains the model itself, and nn's Fit,
// Evaluate and Predict then continue from what ag did. It is a Module: Parameters,
// NamedParameters (nn's variable names), SetTraining and SaveModel work on it.
type NetView struct {
	net      runtime.Model
	tape     *Tape
	params   []*Tensor
	state    []*Tensor
	vars     []*tensor.Variable // params then state, as the recorded op's trailing inputs
	inputs   []runtime.ModelInput
	seeds    int // dropout sites in training mode
	training bool
	// last memoises the emission of the forward pass, so the outputs of one call share
	// one copy of the computation in a trace.
	last struct {
		g    *tensor.Graph
		in   []*tensor.Node
		outs []*tensor.Node
	}
}

var netTapes = map[*runtime.Runtime]*Tape{}

// FromNet views an nn model (anything implementing runtime.Model: nn's *Net does) as ag
// parameters and an ag function. The model must be built (a Sequential model given its
// InputShape, or one that has run). Ops on the view run on the model's runtime: the
// current tape when it uses that runtime, else a tape made for it (the view's Tape).
// The view starts in training mode (dropout on, batch statistics used and running
// statistics updated), as ag's layers do; SetTraining(view, false) switches it.
func FromNet(net runtime.Model) (*NetView, error) {
	if net == nil {
		return nil, fmt.Errorf("ag: FromNet: nil model")
	}
	rt, err := net.ModelRuntime()
	if err != nil {
		return nil, fmt.Errorf("ag: FromNet: %w", err)
	}
	inputs := net.ModelInputs()
	if len(inputs) == 0 {
		return nil, fmt.Errorf("ag: FromNet: the model is not built yet: give its first layer an InputShape, or run it once")
	}
	tp := CurrentTape()
	if tp.rt != rt {
		currentMu.Lock()
		tp = netTapes[rt]
		currentMu.Unlock()
		if tp == nil {
			if tp, err = NewTape(OnRuntime(rt)); err != nil {
				return nil, err
			}
			currentMu.Lock()
			netTapes[rt] = tp
			currentMu.Unlock()
		}
	}
	v := &NetView{net: net, tape: tp, inputs: inputs, training: true}
	params, state := net.ModelVariables()
	for _, p := range params {
		v.params = append(v.params, tp.wrap(p, false))
	}
	for _, s := range state {
		v.state = append(v.state, tp.wrap(s, true))
	}
	v.vars = append(append(v.vars, params...), state...)
	// Count the dropout sites of the training computation on a scratch graph.
	g := tensor.NewGraph()
	xs := make([]*tensor.Node, len(inputs))
	for i, in := range inputs {
		xs[i] = g.Input(in.Name, in.DType, append([]int{1}, in.Shape...)...)
	}
	seed := func() *tensor.Node { v.seeds++; return g.Input(fmt.Sprintf("seed%d", v.seeds), tensor.I32) }
	if _, _, err := net.EmitForward(xs, runtime.EmitOptions{Training: true, Seed: seed}); err != nil {
		return nil, fmt.Errorf("ag: FromNet: %w", err)
	}
	return v, nil
}

// wrap returns the parameter (or buffer) tensor of an existing variable, one per
// variable and tape.
func (t *Tape) wrap(v *tensor.Variable, buffer bool) *Tensor {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.params[v]; p != nil && p.v == v {
		if x := p.t.Value(); x != nil {
			return x
		}
	}
	x := &Tensor{tape: t, dtype: v.DType(), shape: v.Shape().Clone(), op: "param", requiresGrad: !buffer}
	x.p = &param{t: weak.Make(x), v: v, name: v.Name(), version: 1, buffer: buffer}
	t.params[v] = x.p
	goruntime.AddCleanup(x, t.forget, x.p)
	return x
}

// Tape returns the tape the view's operations run on.
func (v *NetView) Tape() *Tape { return v.tape }

// namedTensors lists the model's variables under nn's names, for NamedParameters,
// Buffers, SaveModel and LoadModel.
func (v *NetView) namedTensors() []Named {
	var out []Named
	for _, t := range append(append([]*Tensor(nil), v.params...), v.state...) {
		out = append(out, Named{Name: t.p.name, Tensor: t})
	}
	return out
}

func (v *NetView) setTraining(on bool) { v.training = on }

// Forward runs a model with one input and one output.
func (v *NetView) Forward(x *Tensor) *Tensor {
	outs := v.Call(x)
	if len(outs) != 1 {
		fail("net_forward", "the model has %d outputs: use Call", len(outs))
	}
	return outs[0]
}

// Call runs the model's forward pass on its inputs and returns its outputs.
func (v *NetView) Call(xs ...*Tensor) []*Tensor {
	const op = "net_forward"
	if len(xs) != len(v.inputs) {
		fail(op, "the model takes %d inputs, got %d", len(v.inputs), len(xs))
	}
	for i, x := range xs {
		in := v.inputs[i]
		if x == nil || x.Rank() != len(in.Shape)+1 || !x.shape[1:].Equal(in.Shape) {
			fail(op, "input %d (%s) must be [batch %v]", i, describeOrNil(x), in.Shape)
		}
		if x.dtype != in.DType {
			x = Cast(x, in.DType)
			xs[i] = x
		}
	}
	training := v.training
	in := append([]*Tensor(nil), xs...)
	if training {
		for i := 0; i < v.seeds; i++ {
			in = append(in, seedTensor(v.tape))
		}
	}
	in = append(in, v.params...)
	in = append(in, v.state...)
	nx := len(xs)
	// The number of outputs, from a first emission.
	var outs []*Tensor
	for i := 0; ; i++ {
		k := i
		var count int
		t := recordIn(op, func(ctx emitContext, nodes []*tensor.Node) *tensor.Node {
			o := v.emit(ctx, nodes, nx, training)
			count = len(o)
			return o[k]
		}, in...)
		outs = append(outs, t)
		if i+1 >= count {
			return outs
		}
	}
}

// emit adds the forward pass to ctx's trace (or reuses the copy just added for the
// same inputs) and returns the outputs; nodes are the inputs, the seeds in training
// mode, then the variables' nodes.
func (v *NetView) emit(ctx emitContext, nodes []*tensor.Node, nx int, training bool) []*tensor.Node {
	g := nodes[0].Graph()
	if v.last.g == g && equalNodes(v.last.in, nodes) {
		return v.last.outs
	}
	seeds := 0
	if training {
		seeds = v.seeds
	}
	vars := make(map[*tensor.Variable]*tensor.Node, len(v.vars))
	for i, vr := range v.vars {
		vars[vr] = nodes[nx+seeds+i]
	}
	next := nx
	opts := runtime.EmitOptions{Training: training, Vars: vars, Seed: func() *tensor.Node {
		if next >= nx+seeds {
			panic(&tensor.Error{Op: "net_forward", Err: fmt.Errorf("the model has more dropout sites than the %d counted", seeds)})
		}
		next++
		return nodes[next-1]
	}}
	outs, updates, err := v.net.EmitForward(nodes[:nx], opts)
	if err != nil {
		panic(&tensor.Error{Op: "net_forward", Err: err})
	}
	if !ctx.replay && len(updates) > 0 {
		tr := ctx.tr
		for _, u := range updates {
			tr.sinks = append(tr.sinks, u)
			for _, w := range u.Op().Writes() {
				tr.inplace[u.Input(w).Variable()] = true
			}
		}
	}
	v.last.g, v.last.in, v.last.outs = g, append([]*tensor.Node(nil), nodes...), outs
	return outs
}

func equalNodes(a, b []*tensor.Node) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// seedTensor makes the seed of one dropout site: a fresh value from the tape, except
// while a Capture records (its replays feed fresh seeds instead).
func seedTensor(tp *Tape) *Tensor {
	tp.mu.Lock()
	var s uint32
	if tp.rec == nil {
		s = tp.nextSeed()
	}
	tp.mu.Unlock()
	return &Tensor{dtype: tensor.I32, shape: tensor.Shape{}, op: "seed", host: tensor.Scalar(tensor.I32, float64(int32(s)))}
}
