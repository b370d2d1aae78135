package ag

import (
	"fmt"
	goruntime "runtime"

	"github.com/gml-dev/gml/tensor"
)

// Optimizer updates parameters from their gradients on the device, with the engine's
// update ops (OpSGDUpdate, OpAdamUpdate; RMSprop is the engine's composition
// RMSpropUpdate): the math is the engine's, and the state (momenta, moments, the step
// counter and the learning rate) lives in device variables next to the weights. Step
// records the updates after the pending forward and backward and runs the whole step as
// one program; the learning rate is written to the device only when it changes, so a
// schedule costs no recompilation.
type Optimizer struct {
	kind   string
	params []*Tensor
	tape   *Tape
	lr     float64
	cfg    settings
	slots  map[*param][]*tensor.Variable
	// lrVar and stepVar hold the learning rate and the step count on the device.
	lrVar, stepVar *tensor.Variable
	lrSynced       float64
	steps          int
	// state lists the optimizer's variables, released once it is unreachable.
	state *optState
}

// optState is an optimizer's device state: released by a cleanup that must not keep
// the optimizer itself alive.
type optState struct {
	tape *Tape
	vars []*tensor.Variable
}

// release frees the state of an optimizer no Go value reaches any more.
func (s *optState) release() {
	s.tape.mu.Lock()
	for _, v := range s.vars {
		delete(s.tape.slots, v)
	}
	s.tape.mu.Unlock()
	for _, v := range s.vars {
		s.tape.rt.Release(v)
	}
}

// SGD is stochastic gradient descent, with Momentum, Nesterov and WeightDecay options.
func SGD(params []*Tensor, lr float64, opts ...Option) *Optimizer {
	return newOptimizer("sgd", params, lr, settings{}, []string{"Momentum", "Nesterov", "WeightDecay"}, opts)
}

// Adam is the Adam optimizer (betas 0.9 and 0.999, eps 1e-8; WeightDecay adds L2 to the
// gradient).
func Adam(params []*Tensor, lr float64, opts ...Option) *Optimizer {
	return newOptimizer("adam", params, lr, settings{beta1: 0.9, beta2: 0.999, eps: 1e-8}, adamOptions, opts)
}

var adamOptions = []string{"Betas", "Eps", "WeightDecay"}

// AdamW is Adam with decoupled weight decay (0.01 by default, as PyTorch).
func AdamW(params []*Tensor, lr float64, opts ...Option) *Optimizer {
	return newOptimizer("adamw", params, lr, settings{beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01}, adamOptions, opts)
}

// RMSprop is RMSprop (alpha 0.99, eps 1e-8), with Momentum, Centered and WeightDecay
// options.
func RMSprop(params []*Tensor, lr float64, opts ...Option) *Optimizer {
	return newOptimizer("rmsprop", params, lr, settings{alpha: 0.99, eps: 1e-8}, []string{"Alpha", "Eps", "Momentum", "Centered", "WeightDecay"}, opts)
}

func newOptimizer(kind string, params []*Tensor, lr float64, c settings, allowed []string, opts []Option) *Optimizer {
	c.apply(kind, allowed, opts)
	switch {
	case !(lr > 0):
		fail(kind, "learning rate must be positive, got %v", lr)
	case len(params) == 0:
		fail(kind, "no parameters to optimise")
	case c.momentum < 0 || c.weightDecay < 0 || c.eps < 0:
		fail(kind, "momentum, weight decay and eps must not be negative")
	case c.nesterov && c.momentum == 0:
		fail(kind, "Nesterov needs momentum")
	case c.beta1 < 0 || c.beta1 >= 1 || c.beta2 < 0 || c.beta2 >= 1 || c.alpha < 0 || c.alpha >= 1:
		fail(kind, "betas and alpha must be in [0, 1)")
	}
	o := &Optimizer{kind: kind, lr: lr, cfg: c, slots: map[*param][]*tensor.Variable{}}
	seen := map[*Tensor]bool{}
	for i, p := range params {
		switch {
		case p == nil || p.p == nil || p.p.buffer:
			fail(kind, "parameter %d is not a trainable parameter (%s)", i, describeOrNil(p))
		case o.tape != nil && p.tape != o.tape:
			fail(kind, "parameter %d (%s) belongs to another tape than parameter 0", i, p.describe())
		case seen[p]:
			fail(kind, "parameter %d (%s) is listed twice", i, p.describe())
		}
		seen[p] = true
		o.tape = p.tape
		o.params = append(o.params, p)
	}
	o.lrVar = tensor.NewVariable("optimizer/ag/lr", tensor.Scalar(tensor.F32, lr))
	o.stepVar = tensor.NewVariable("optimizer/ag/step", tensor.Scalar(tensor.F32, 0))
	o.lrSynced = lr
	o.state = &optState{tape: o.tape, vars: []*tensor.Variable{o.lrVar, o.stepVar}}
	o.tape.mu.Lock()
	o.tape.slots[o.lrVar], o.tape.slots[o.stepVar] = true, true
	o.tape.mu.Unlock()
	goruntime.AddCleanup(o, (*optState).release, o.state)
	return o
}

func describeOrNil(t *Tensor) string {
	if t == nil {
		return "nil"
	}
	return t.describe()
}

// Name is "sgd", "adam", "adamw" or "rmsprop".
func (o *Optimizer) Name() string { return o.kind }

// LR returns the learning rate.
func (o *Optimizer) LR() float64 { return o.lr }

// SetLR changes the learning rate from the next step on.
func (o *Optimizer) SetLR(lr float64) {
	if !(lr >= 0) {
		fail("set_lr", "learning rate %v is negative", lr)
	}
	o.lr = lr
}

// Steps is the number of steps taken.
func (o *Optimizer) Steps() int { return o.steps }

// Params returns the parameters the optimizer updates.
func (o *Optimizer) Params() []*Tensor { return append([]*Tensor(nil), o.params...) }

// ZeroGrad clears the gradients of the optimizer's parameters.
func (o *Optimizer) ZeroGrad() { ZeroGrad(o.params...) }

// String describes the optimizer: "adam(lr=0.001)".
func (o *Optimizer) String() string { return fmt.Sprintf("%s(lr=%.4g)", o.kind, o.lr) }

// Step updates every parameter that has a gradient and runs the recorded step
// (forward, backward and updates as one program). Parameters without a gradient (no
// Backward reached them since ZeroGrad) are left alone, as in PyTorch.
func (o *Optimizer) Step() {
	tp := o.tape
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if err := o.syncLR(); err != nil {
		failErr(o.kind, err)
	}
	tr := tp.trace()
	if tr == tp.open && o.conflicts(tr) {
		if err := tp.flush(); err != nil {
			failErr(o.kind, err)
		}
		tr = tp.trace()
	}
	build(o.kind, func() { o.record(tr) })
	if tr == tp.open {
		if err := tp.flush(); err != nil {
			failErr(o.kind, err)
		}
	}
}

// syncLR writes the learning rate to the device when it changed. The caller holds the
// tape's lock.
func (o *Optimizer) syncLR() error {
	if o.lr == o.lrSynced {
		return nil
	}
	if err := o.tape.rt.Write(o.lrVar, tensor.Scalar(tensor.F32, o.lr)); err != nil {
		return err
	}
	o.lrSynced = o.lr
	return nil
}

// conflicts reports whether tr already writes a variable the step writes (a parameter
// assigned, or a step recorded before), so the step must follow a run.
func (o *Optimizer) conflicts(tr *trace) bool {
	if tr.pendingWrite(o.stepVar) {
		return true
	}
	for _, p := range o.params {
		if tr.pendingWrite(p.p.v) {
			return true
		}
		for _, s := range o.slots[p.p] {
			if tr.pendingWrite(s) {
				return true
			}
		}
	}
	return false
}

// record adds the updates to trace tr: the step counter advances, and each parameter
// with a gradient is updated in place.
func (o *Optimizer) record(tr *trace) {
	lr := tr.read(o.lrVar)
	step := tensor.AddScalar(tr.read(o.stepVar), 1)
	tr.assign(o.stepVar, step)
	for _, t := range o.params {
		p := t.p
		if p.g == nil || (tr.cur[p.g] == nil && !p.gradSet) {
			continue
		}
		g := tr.read(p.g)
		s := o.slotsFor(p)
		var upd *tensor.Node
		c := o.cfg
		switch o.kind {
		case "sgd":
			upd = tensor.SGDUpdate(tr.varNode(p.v), g, tr.varNode(s[0]), lr, tensor.SGDAttr{
				Momentum: float32(c.momentum), WeightDecay: float32(c.weightDecay), Nesterov: c.nesterov})
		case "adam", "adamw":
			upd = tensor.AdamUpdate(tr.varNode(p.v), g, tr.varNode(s[0]), tr.varNode(s[1]), lr, step, tensor.AdamAttr{
				Beta1: float32(c.beta1), Beta2: float32(c.beta2), Eps: float32(c.eps),
				WeightDecay: float32(c.weightDecay), Decoupled: o.kind == "adamw"})
		case "rmsprop":
			var avg, buf *tensor.Node
			i := 1
			if c.centered {
				avg = tr.varNode(s[i])
				i++
			}
			if c.momentum > 0 {
				buf = tr.varNode(s[i])
			}
			upd = tensor.RMSpropUpdate(tr.varNode(p.v), g, tr.varNode(s[0]), avg, buf, lr, tensor.RMSpropAttr{
				Alpha: float32(c.alpha), Eps: float32(c.eps), Momentum: float32(c.momentum),
				WeightDecay: float32(c.weightDecay), Centered: c.centered})
		}
		tr.sinks = append(tr.sinks, upd)
		tr.inplace[p.v] = true
		for _, v := range s {
			tr.inplace[v] = true
		}
	}
	tr.after = append(tr.after, func() { o.steps++ })
}

// slotsFor returns p's optimizer state variables, made (zero) on first use.
func (o *Optimizer) slotsFor(p *param) []*tensor.Variable {
	if s, ok := o.slots[p]; ok {
		return s
	}
	var names []string
	switch o.kind {
	case "sgd":
		names = []string{"velocity"}
	case "adam", "adamw":
		names = []string{"m", "v"}
	case "rmsprop":
		names = []string{"square_avg"}
		if o.cfg.centered {
			names = append(names, "grad_avg")
		}
		if o.cfg.momentum > 0 {
			names = append(names, "momentum")
		}
	}
	s := make([]*tensor.Variable, len(names))
	for i, n := range names {
		s[i] = tensor.NewVariable("optimizer/ag/"+p.name+"/"+o.kind+"_"+n, tensor.New(p.v.DType(), p.v.Shape()...))
		o.tape.slots[s[i]] = true
		o.state.vars = append(o.state.vars, s[i])
	}
	o.slots[p] = s
	return s
}
