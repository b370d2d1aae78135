package ag

import (
	"github.com/gml-dev/gml/tensor"
)

// record adds one op to the tape of its inputs and returns its result: emit builds the
// op's node (or nodes: composite ops emit several) from its inputs' nodes, in the
// trace open now or, to recompute the value later, in another. Shape errors surface
// here, at the line that recorded the op; in check mode (Eager) the op also runs here.
func record(op string, emit func(in []*tensor.Node) *tensor.Node, in ...*Tensor) *Tensor {
	return recordIn(op, func(_ emitContext, in []*tensor.Node) *tensor.Node { return emit(in) }, in...)
}

// emitter builds an op's node in a trace. Most ops need only their inputs' nodes; ops
// with side effects or extra feeds (a viewed nn model's forward pass) use the context.
type emitter func(ctx emitContext, in []*tensor.Node) *tensor.Node

// emitContext is where an emitter builds: the trace, and whether this is a replay of
// a recipe (recomputing a value), in which side effects must not be recorded again.
type emitContext struct {
	tr     *trace
	replay bool
}

// recordIn is record for an emitter that needs its context.
func recordIn(op string, emit emitter, in ...*Tensor) *Tensor {
	tp := tapeOf(op, in)
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tr := tp.trace()
	if tr == tp.open && len(tr.written)+len(tr.inplace) > 0 {
		// A parameter written by this trace is read again: run the write first, so the
		// read sees the new value and Backward differentiates the value used.
		for _, x := range in {
			if x.p != nil && tr.pendingWrite(x.p.v) {
				if err := tp.flush(); err != nil {
					failErr(op, err)
				}
				tr = tp.trace()
				break
			}
		}
	}
	nodes := make([]*tensor.Node, len(in))
	grad := false
	var vers []uint64
	for i, x := range in {
		if x.p != nil && tr.scope != nil {
			nodes[i] = tr.scope.param(tr, x.p.v)
		} else {
			nodes[i] = tr.nodeOf(op, x)
		}
		grad = grad || x.requiresGrad
		if x.p != nil {
			if vers == nil {
				vers = make([]uint64, len(in))
			}
			vers[i] = x.p.version
		}
	}
	var n *tensor.Node
	build(op, func() { n = emit(emitContext{tr: tr}, nodes) })
	t := &Tensor{
		tape: tp, dtype: n.DType(), shape: n.Shape(), op: op, seq: tp.seq,
		in: in, emit: emit, vers: vers, requiresGrad: grad && gradEnabled() && n.DType().IsFloat(),
		tr: tr, node: n,
	}
	if tp.eager || tp.anomaly {
		t.pcs = callers(3)
	}
	tp.seq++
	if tr.scope != nil {
		tr.scope.internal = append(tr.scope.internal, t)
		return t
	}
	tr.vis = append(tr.vis, t)
	if tp.eager && tr == tp.open {
		if err := tp.flush(); err != nil {
			failErr(op, err)
		}
	}
	return t
}

// unary records a one-input op.
func unary(op string, x *Tensor, f func(*tensor.Node) *tensor.Node) *Tensor {
	return record(op, func(in []*tensor.Node) *tensor.Node { return f(in[0]) }, x)
}

// binOp records a two-input op.
func binOp(op string, a, b *Tensor, f func(a, b *tensor.Node) *tensor.Node) *Tensor {
	return record(op, func(in []*tensor.Node) *tensor.Node { return f(in[0], in[1]) }, a, b)
}
