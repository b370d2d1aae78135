package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// Optimizer updates the weights from their gradients inside the training graph. Its
// learning rate and step counter live in runtime variables (the graph advances the
// step; the rate is written when it changes), so SetLR and learning-rate schedules take
// effect without recompiling and a step uploads no hyperparameters; its per-weight state
// (momentum, Adam moments) lives in runtime variables next to the weights.
type Optimizer interface {
	// Name is "sgd", "adam" or "adamw".
	Name() string
	// LR returns the current learning rate.
	LR() float64
	// SetLR changes the learning rate from the next step on.
	SetLR(lr float64)
	// Steps is the number of updates applied so far.
	Steps() int

	base() *optBase
	// update emits the in-place update of parameter p from gradient g.
	update(g *tensor.Graph, p *tensor.Variable, grad, lr, step *tensor.Node) *tensor.Node
}

// optBase holds what every optimizer keeps: the learning rate, the step count and the
// state variables per parameter, created on first use.
type optBase struct {
	C struct {
		Kind        string
		LR          float64
		Momentum    float64
		Nesterov    bool
		WeightDecay float64
		Beta1       float64
		Beta2       float64
		Eps         float64
	}
	steps int
	slots map[*tensor.Variable][]*tensor.Variable
	err   error
	// lrVar and stepVar hold the learning rate and the step count on the device: the
	// step is incremented by the training graph itself and the rate written only when
	// it changes, so a step uploads no hyperparameters.
	lrVar, stepVar *tensor.Variable
	lrSynced       float64 // the value lrVar holds on the device (0: not written)
	stepSynced     bool    // stepVar holds steps
}

func (o *optBase) Name() string     { return o.C.Kind }
func (o *optBase) LR() float64      { return o.C.LR }
func (o *optBase) SetLR(lr float64) { o.C.LR = lr }

// hyper returns the graph's learning-rate node and the node of this step's 1-based
// number, and the Assign that advances the device's step counter.
func (o *optBase) hyper(g *tensor.Graph) (lr, step, advance *tensor.Node) {
	if o.lrVar == nil {
		o.lrVar = tensor.NewVariable("optimizer/lr", tensor.Scalar(tensor.F32, o.C.LR))
		o.stepVar = tensor.NewVariable("optimizer/step", tensor.Scalar(tensor.F32, 0))
	}
	old := g.Var(o.stepVar)
	step = tensor.AddScalar(old, 1)
	return g.Var(o.lrVar), step, tensor.Assign(old, step)
}

// sync writes the learning rate and the step count to the device where they differ from
// the host's values (after SetLR, a schedule, or Load).
func (o *optBase) sync(rt interface {
	Write(*tensor.Variable, *tensor.Tensor) error
}) error {
	if o.lrVar == nil {
		return nil
	}
	if o.lrSynced != o.C.LR {
		if err := rt.Write(o.lrVar, tensor.Scalar(tensor.F32, o.C.LR)); err != nil {
			return err
		}
		o.lrSynced = o.C.LR
	}
	if !o.stepSynced {
		if err := rt.Write(o.stepVar, tensor.Scalar(tensor.F32, float64(o.steps))); err != nil {
			return err
		}
		o.stepSynced = true
	}
	return nil
}
func (o *optBase) Steps() int     { return o.steps }
func (o *optBase) base() *optBase { return o }
func (o *optBase) String() string { return fmt.Sprintf("%s(lr=%g)", o.C.Kind, o.C.LR) }

// slotsFor returns p's state variables, creating zero-filled ones on first use.
func (o *optBase) slotsFor(p *tensor.Variable) []*tensor.Variable {
	if o.slots == nil {
		o.slots = map[*tensor.Variable][]*tensor.Variable{}
	}
	if s, ok := o.slots[p]; ok {
		return s
	}
	names := map[string][]string{"sgd": {"velocity"}, "adam": {"m", "v"}, "adamw": {"m", "v"}}[o.C.Kind]
	s := make([]*tensor.Variable, len(names))
	for i, n := range names {
		s[i] = tensor.NewVariable("optimizer/"+p.Name()+"/"+o.C.Kind+"_"+n, tensor.New(p.DType(), p.Shape()...))
	}
	o.slots[p] = s
	return s
}

// allSlots lists the state variables in parameter order.
func (o *optBase) allSlots(params []*tensor.Variable) []*tensor.Variable {
	var out []*tensor.Variable
	for _, p := range params {
		out = append(out, o.slotsFor(p)...)
	}
	return out
}

type optimizer struct{ optBase }

// SGD is stochastic gradient descent with optional momentum (Momentum option, with
// Nesterov) and weight decay (WeightDecay).
func SGD(lr float64, opts ...OptimizerOption) Optimizer {
	return newOptimizer("sgd", lr, []string{"Momentum", "Nesterov", "WeightDecay"}, opts)
}

// Adam is the Adam optimizer (β1 0.9, β2 0.999, ε 1e-7 as Keras); WeightDecay adds L2
// to the gradient.
func Adam(lr float64, opts ...OptimizerOption) Optimizer {
	return newOptimizer("adam", lr, []string{"WeightDecay"}, opts)
}

// AdamW is Adam with decoupled weight decay (WeightDecay, default 0.004 as Keras).
func AdamW(lr float64, opts ...OptimizerOption) Optimizer {
	return newOptimizer("adamw", lr, []string{"WeightDecay"}, opts)
}

func newOptimizer(kind string, lr float64, allowed []string, opts []OptimizerOption) Optimizer {
	o := &optimizer{}
	s := optimizerSettings{}
	if kind == "adamw" {
		s.weightDecay = 0.004
	}
	o.err = applyOptions(kind, &s, allowed, opts, OptimizerOption.optimizerSetting)
	if o.err == nil && !(lr > 0) {
		o.err = fmt.Errorf("nn: %s: learning rate must be positive, got %v", kind, lr)
	}
	o.C.Kind, o.C.LR, o.C.Momentum, o.C.Nesterov, o.C.WeightDecay = kind, lr, s.momentum, s.nesterov, s.weightDecay
	o.C.Beta1, o.C.Beta2, o.C.Eps = 0.9, 0.999, 1e-7
	return o
}

func (o *optimizer) update(g *tensor.Graph, p *tensor.Variable, grad, lr, step *tensor.Node) *tensor.Node {
	s := o.slotsFor(p)
	if o.C.Kind == "sgd" {
		return tensor.SGDUpdate(g.Var(p), grad, g.Var(s[0]), lr, tensor.SGDAttr{
			Momentum: float32(o.C.Momentum), WeightDecay: float32(o.C.WeightDecay), Nesterov: o.C.Nesterov})
	}
	return tensor.AdamUpdate(g.Var(p), grad, g.Var(s[0]), g.Var(s[1]), lr, step, tensor.AdamAttr{
		Beta1: float32(o.C.Beta1), Beta2: float32(o.C.Beta2), Eps: float32(o.C.Eps),
		WeightDecay: float32(o.C.WeightDecay), Decoupled: o.C.Kind == "adamw"})
}
