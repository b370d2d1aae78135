package ag

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// checkpoint is a segment recorded by Checkpoint in a trace: its output (computed on
// stopped inputs and parameters, so Backward does not reach through it), the
// placeholders its ops read in place of the inputs, and the recipe from them to the
// output, which Backward replays to recompute the segment.
type checkpoint struct {
	out    *Tensor
	inputs []*Tensor // the caller's tensors
	places []*Tensor // their stopped stand-ins, which the segment's ops read
}

// ckScope is a trace recording a Checkpoint's segment: parameters are read through
// StopGradient, and the ops' results stay out of the run's outputs.
type ckScope struct {
	params   map[*tensor.Variable]*tensor.Node
	internal []*Tensor
}

// Checkpoint runs fn on xs keeping only the segment's inputs: the values fn computes
// inside are not held for Backward, which recomputes the segment from its inputs
// instead (the same ops, the same dropout masks), trading compute for memory as
// torch.utils.checkpoint does. Gradients are identical to running fn directly. The
// values computed inside can still be read; they are recomputed when they are.
func Checkpoint(fn func(xs ...*Tensor) *Tensor, xs ...*Tensor) *Tensor {
	const op = "checkpoint"
	if fn == nil {
		fail(op, "nil function")
	}
	if len(xs) == 0 {
		fail(op, "no inputs")
	}
	tp := tapeOf(op, xs)
	tp.mu.Lock()
	tr := tp.trace()
	if tr.scope != nil {
		tp.mu.Unlock()
		fail(op, "checkpoints do not nest")
	}
	places := make([]*Tensor, len(xs))
	for i, x := range xs {
		n := tr.nodeOf(op, x)
		var s *tensor.Node
		build(op, func() { s = tensor.StopGradient(n) })
		places[i] = &Tensor{tape: tp, dtype: x.dtype, shape: x.shape, op: "checkpoint_input", seq: tp.seq,
			in: []*Tensor{x}, emit: passThrough, requiresGrad: x.requiresGrad, tr: tr, node: s}
	}
	scope := &ckScope{params: map[*tensor.Variable]*tensor.Node{}}
	tr.scope = scope
	tp.mu.Unlock()
	var out *Tensor
	func() {
		defer func() {
			tp.mu.Lock()
			tr.scope = nil
			tp.mu.Unlock()
		}()
		out = fn(places...)
	}()
	if out == nil {
		fail(op, "the function returned nil")
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if out.tr != tr || indexOf(scope.internal, out) < 0 {
		fail(op, "the function must return a value it computed from its inputs (it returned %s)", out.describe())
	}
	for _, t := range scope.internal {
		if t != out {
			t.tr, t.node = nil, nil // not held: a read recomputes it from its recipe
		}
	}
	for _, p := range places {
		p.tr, p.node = nil, nil
	}
	tr.vis = append(tr.vis, out)
	tr.checkpoints = append(tr.checkpoints, &checkpoint{out: out, inputs: xs, places: places})
	if tp.eager && tr == tp.open {
		if err := tp.flush(); err != nil {
			failErr(op, err)
		}
	}
	return out
}

// passThrough is a checkpoint input's recipe: outside its recording the stand-in is
// its input itself, so replays (recomputation, Backward through a checkpoint of an
// earlier run) differentiate through it.
func passThrough(_ emitContext, in []*tensor.Node) *tensor.Node { return in[0] }

func indexOf(ts []*Tensor, t *Tensor) int {
	for i, x := range ts {
		if x == t {
			return i
		}
	}
	return -1
}

// backwardThroughCheckpoints finishes a Backward whose first pass stopped at the
// outputs of this trace's checkpoints: adj holds the gradients found so far for the
// targets (params then keep) and for each checkpoint output. Checkpoints are visited
// last to first; each is recomputed from its real inputs and differentiated with its
// output's gradient as seed, adding to the targets and to earlier checkpoints' outputs.
func (tr *trace) backwardThroughCheckpoints(op string, cks []*checkpoint, wrt []*tensor.Node, grads []*tensor.Node, ckGrads []*tensor.Node) {
	add := func(a, b *tensor.Node) *tensor.Node {
		if a == nil {
			return b
		}
		return tensor.Add(a, b)
	}
	for k := len(cks) - 1; k >= 0; k-- {
		c := cks[k]
		if ckGrads[k] == nil {
			continue
		}
		memo := map[*Tensor]*tensor.Node{}
		for i, p := range c.places {
			memo[p] = tr.nodeOf(op, c.inputs[i])
		}
		y := tr.replay(op, c.out, memo)
		targets := append(append([]*tensor.Node(nil), wrt...), outputsOf(cks[:k])...)
		g := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{ckGrads[k]}, targets)
		for i := range wrt {
			grads[i] = add(grads[i], g[i])
		}
		for j := 0; j < k; j++ {
			ckGrads[j] = add(ckGrads[j], g[len(wrt)+j])
		}
	}
}

func outputsOf(cks []*checkpoint) []*tensor.Node {
	out := make([]*tensor.Node, len(cks))
	for i, c := range cks {
		out[i] = c.out.node
	}
	return out
}

// replay emits x's recipe again in this trace with memo's nodes for the tensors it
// already has, reading parameters directly (not stopped).
func (tr *trace) replay(op string, x *Tensor, memo map[*Tensor]*tensor.Node) *tensor.Node {
	if n, ok := memo[x]; ok {
		return n
	}
	if x.emit == nil || x.p != nil {
		n := tr.nodeOf(op, x)
		memo[x] = n
		return n
	}
	in := make([]*tensor.Node, len(x.in))
	for i, y := range x.in {
		in[i] = tr.replay(op, y, memo)
	}
	var n *tensor.Node
	func() {
		defer func() {
			if r := recover(); r != nil {
				panic(&tensor.Error{Op: x.op, Err: fmt.Errorf("recomputing a checkpoint: %v", r)})
			}
		}()
		n = x.emit(emitContext{tr: tr, replay: true}, in)
	}()
	memo[x] = n
	return n
}

// param returns variable v's value as a checkpointed segment reads it: stopped, so the
// first pass of Backward does not reach the segment's parameters through it.
func (s *ckScope) param(tr *trace, v *tensor.Variable) *tensor.Node {
	if n, ok := s.params[v]; ok {
		return n
	}
	n := tensor.StopGradient(tr.read(v))
	s.params[v] = n
	return n
}
