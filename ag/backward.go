package ag

import (
	"github.com/gml-dev/gml/tensor"
)

// Backward computes the gradient of t, a scalar loss, with respect to every parameter
// behind it (and every tensor that keeps its gradient: RetainGrad, SetRequiresGrad) and
// adds it to their Grad, as PyTorch does: call ZeroGrad (or the optimizer's) between
// steps. The gradient nodes join the recorded forward, so forward and backward run as
// one program, when a value is next read or the optimizer steps.
func (t *Tensor) Backward() { backward("backward", t, nil) }

// Backward is Tensor.Backward for a non-scalar output: seed (out's shape and dtype)
// weights each element of out, giving the vector-Jacobian product seedᵀ·∂out/∂params.
func Backward(out, seed *Tensor) {
	if seed == nil {
		fail("backward", "nil seed (use out.Backward() for a scalar loss)")
	}
	backward("backward", out, seed)
}

func backward(op string, out, seed *Tensor) {
	if out == nil {
		fail(op, "nil loss")
	}
	if !out.requiresGrad {
		fail(op, "%s does not require a gradient: no parameter (or tensor made to require one) reaches it, or it was made under NoGrad or from a Detach", out.describe())
	}
	if seed == nil && (out.shape.Size() != 1 || !out.dtype.IsFloat()) {
		fail(op, "the loss %s is not a scalar: reduce it first (ag.Mean, ag.Sum) or pass a seed to ag.Backward", out.describe())
	}
	if seed != nil && (seed.dtype != out.dtype || !seed.shape.Equal(out.shape)) {
		fail(op, "the seed is %v%v, the output %s", seed.dtype, seed.shape, out.describe())
	}
	in := []*Tensor{out}
	if seed != nil {
		in = append(in, seed)
	}
	tp := tapeOf(op, in)
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tr := tp.trace()
	params, keep := targets(out)
	for _, x := range tr.cuts {
		if reaches(out, x) {
			fail(op, "%s needs a gradient, but it was computed by an earlier run and a parameter under it has changed since (an optimizer step?), so Backward cannot reach through it: call Backward before the step", x.describe())
		}
	}
	loss := tr.nodeOf(op, out)
	var seedNode *tensor.Node
	if seed != nil {
		seedNode = tr.nodeOf(op, seed)
	}
	wrt := make([]*tensor.Node, 0, len(params)+len(keep))
	for _, p := range params {
		wrt = append(wrt, tr.varNode(p.v))
	}
	for _, x := range keep {
		wrt = append(wrt, tr.nodeOf(op, x))
	}
	var cks []*checkpoint
	for _, c := range tr.checkpoints {
		if reaches(out, c.out) {
			cks = append(cks, c)
		}
	}
	var grads []*tensor.Node
	build(op, func() {
		if seedNode == nil {
			seedNode = tensor.OnesLike(loss)
		}
		all := append(append([]*tensor.Node(nil), wrt...), outputsOf(cks)...)
		grads = tensor.GradWithSeed([]*tensor.Node{loss}, []*tensor.Node{seedNode}, all)
		if len(cks) > 0 {
			tr.backwardThroughCheckpoints(op, cks, wrt, grads[:len(wrt)], grads[len(wrt):])
		}
		for i, p := range params {
			tp.accumulate(tr, p, grads[i])
		}
	})
	for i, x := range keep {
		g := grads[len(params)+i]
		x.gradOf = &Tensor{tape: tp, dtype: g.DType(), shape: g.Shape(), op: "grad", seq: tp.seq, tr: tr, node: g}
		tr.vis = append(tr.vis, x.gradOf)
	}
	tp.seq++
	if tp.eager && tr == tp.open {
		if err := tp.flush(); err != nil {
			failErr(op, err)
		}
	}
}

// accumulate adds gradient g to parameter p's Grad in trace tr: the sum is assigned at
// the end of the run, or g alone after ZeroGrad.
func (tp *Tape) accumulate(tr *trace, p *param, g *tensor.Node) {
	if p.g == nil {
		p.g = tensor.NewVariable("ag/"+p.name+"/grad", tensor.New(p.v.DType(), p.v.Shape()...))
		tp.params[p.g] = p
	}
	switch {
	case tr.cur[p.g] != nil:
		g = tensor.Add(tr.cur[p.g], g)
	case p.gradSet:
		g = tensor.Add(tr.varNode(p.g), g)
	}
	tr.assign(p.g, g)
}

// targets lists what a Backward from out computes gradients for: the parameters behind
// it and the tensors that keep their gradient, each once, in the order met.
func targets(out *Tensor) (params []*param, keep []*Tensor) {
	seen := map[*Tensor]bool{}
	var walk func(x *Tensor)
	walk = func(x *Tensor) {
		if seen[x] || !x.requiresGrad {
			return
		}
		seen[x] = true
		switch {
		case x.p != nil:
			params = append(params, x.p)
			return
		case x.keepGrad:
			keep = append(keep, x)
		}
		for _, y := range x.in {
			walk(y)
		}
	}
	walk(out)
	return params, keep
}

// reaches reports whether target lies under x's recipe.
func reaches(x, target *Tensor) bool {
	seen := map[*Tensor]bool{}
	var walk func(y *Tensor) bool
	walk = func(y *Tensor) bool {
		if y == target {
			return true
		}
		if seen[y] {
			return false
		}
		seen[y] = true
		for _, z := range y.in {
			if walk(z) {
				return true
			}
		}
		return false
	}
	return walk(x)
}

// Grad returns t's gradient: for a parameter, what Backward has accumulated since the
// last ZeroGrad (zeros before any Backward); for a tensor that keeps its gradient
// (RetainGrad, SetRequiresGrad), the last Backward's. Reading it runs pending work; in
// an open step it is the pending gradient, usable in further ops.
func (t *Tensor) Grad() *Tensor {
	if t.p == nil {
		switch {
		case !t.requiresGrad:
			fail("grad", "%s has no gradient: it is not a parameter and does not require one (SetRequiresGrad makes a constant require one)", t.describe())
		case !t.keepGrad:
			fail("grad", "%s is an intermediate result: call RetainGrad on it before Backward to keep its gradient", t.describe())
		case t.gradOf == nil:
			return Const(tensor.New(t.dtype, t.shape...))
		}
		return t.gradOf
	}
	if t.p.buffer {
		fail("grad", "%s is a buffer (non-trainable state) and has no gradient", t.describe())
	}
	tp := t.tape
	tp.mu.Lock()
	defer tp.mu.Unlock()
	p := t.p
	for _, tr := range []*trace{tp.rec, tp.open} {
		if tr != nil && p.g != nil && tr.cur[p.g] != nil {
			g := &Tensor{tape: tp, dtype: t.dtype, shape: t.shape, op: "grad", seq: tp.seq, tr: tr, node: tr.cur[p.g]}
			tr.vis = append(tr.vis, g)
			return g
		}
	}
	if !p.gradSet {
		return Const(tensor.New(t.dtype, t.shape...))
	}
	if tp.rec != nil {
		fail("grad", "reading the gradient of %s inside a Capture: it is on the device only", t.describe())
	}
	v, err := tp.readVariable(p.g)
	if err != nil {
		failErr("grad", err)
	}
	g := Const(v)
	g.op = "grad"
	return g
}

// ZeroGrad clears the gradients of the given parameters (a pending, unrun gradient
// included), so the next Backward starts from zero.
func ZeroGrad(params ...*Tensor) {
	for _, t := range params {
		if t == nil || t.p == nil {
			continue
		}
		tp := t.tape
		tp.mu.Lock()
		if tp.open != nil && t.p.g != nil {
			tp.open.unassign(t.p.g)
		}
		t.p.gradSet = false
		tp.mu.Unlock()
	}
}

// ZeroGrad clears a parameter's gradient (see the function ZeroGrad).
func (t *Tensor) ZeroGrad() { ZeroGrad(t) }

// Detach returns t's value as a tensor that requires no gradient: Backward does not
// reach through it. It shares t's value and costs nothing.
func (t *Tensor) Detach() *Tensor {
	d := unary("detach", t, tensor.StopGradient)
	d.requiresGrad = false
	return d
}

// Assign sets parameter t to v's value (same shape and dtype) when the recorded work
// runs: hand-written updates (p.Assign(ag.Sub(p, ag.Scale(p.Grad(), lr))), under NoGrad)
// and loaded weights. Later reads of t see the new value.
func (t *Tensor) Assign(v *Tensor) {
	const op = "assign"
	if t.p == nil {
		fail(op, "%s is not a parameter or buffer", t.describe())
	}
	if v == nil || v.dtype != t.dtype || !v.shape.Equal(t.shape) {
		fail(op, "%s cannot take %s", t.describe(), describeOrNil(v))
	}
	tp := tapeOf(op, []*Tensor{t, v})
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tr := tp.trace()
	if tr == tp.open && tr.inplace[t.p.v] {
		if err := tp.flush(); err != nil {
			failErr(op, err)
		}
		tr = tp.trace()
	}
	tr.assign(t.p.v, tr.nodeOf(op, v))
	if tp.eager && tr == tp.open {
		if err := tp.flush(); err != nil {
			failErr(op, err)
		}
	}
}
