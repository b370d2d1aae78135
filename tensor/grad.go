package tensor

import (
	"fmt"
	"slices"
)

// Autodiff decisions (the gradient files grad_*.go follow them):
//
//   - One rule per op in one table, used by nn's compiled graphs and by ag's tape alike.
//     Rules build ordinary nodes; fused ops (softmax, log-softmax, layer and RMS norm,
//     attention, RoPE) have explicit rules rather than differentiating Decompose, so the
//     backward graph stays small (softmax from its output; attention through the fused
//     OpAttentionGrad, which recomputes the probabilities tile by tile; RoPE rotates
//     back with negated positions). OpAttentionGrad's own rule differentiates its
//     decomposition, for second-order gradients.
//   - No gradient flows through boolean or integer results (comparisons, logic, argmax,
//     argmin, top-k indices, one-hot) nor through sign, floor and ceil, whose derivative
//     is zero wherever it exists: a wrt node reached only through them gets zeros.
//   - Kinks take one side: relu, leaky relu and elu use the x <= 0 branch at 0; abs has
//     gradient 0 at 0; clamp passes the gradient at its limits; hardsigmoid uses its
//     constant branches at the corners and hardswish its middle branch at ±3 (as PyTorch).
//   - Ties: Maximum and Minimum split the gradient evenly between equal inputs; the Max
//     and Min reductions split it evenly among the positions attaining the extremum
//     (MaxPool's kernel, by contrast, routes it to the first maximum of a window).
//   - Pow's exponent gradient aᵇ·ln a is taken as 0 where a <= 0.
//   - Prod divides by no element: zeros in a group are handled exactly.
//   - Rules may build the gradient of an input that does not lead to any wrt node (both
//     matmul operands, say); Grad does not use it, and the runtime never computes nodes
//     the fetched outputs do not need.

// gradRule returns the gradient of the loss with respect to each input of n, given gy,
// the gradient with respect to n's output (n's dtype and shape). An entry is nil for an
// input that carries no gradient (indices, seeds, boolean conditions, integer inputs).
// Rules build ordinary nodes in n's graph, so a backward graph is just more graph.
type gradRule func(n, gy *Node) []*Node

// gradRules holds the rules; the op table's noGrad and gradMissing columns say why an
// op has none.
var gradRules [numOps]gradRule

func registerGrad(op Op, rule gradRule) {
	if gradRules[op] != nil || opTable[op].noGrad != "" || opTable[op].gradMissing != "" {
		panic("tensor: gradient rule registered twice, or for an op the table marks as without one: " + op.String())
	}
	gradRules[op] = rule
}

// Differentiable reports whether gradients flow through op to its inputs by a rule.
// Ops that are not differentiable either stop gradients (NoGradReason says why: boolean
// or integer outputs, piecewise-constant functions such as floor, side effects) or, for
// the few second-order cases without a rule, make Grad fail with an *Error when a
// gradient would have to pass through them.
func Differentiable(op Op) bool { return op < numOps && gradRules[op] != nil }

// NoGradReason returns why no gradient flows through op, or "" when op has a gradient
// rule or none has been declared.
func NoGradReason(op Op) string {
	if op >= numOps {
		return ""
	}
	return opTable[op].noGrad
}

// Grad appends to loss's graph the nodes computing the gradient of loss with respect to
// each node in wrt and returns them, one per wrt entry with that entry's dtype and shape.
// loss must be a floating-point scalar (shape [] or a single element). The transform walks
// the graph backwards from loss, applies one rule per op, sums the contributions of a node
// used several times, and only builds nodes on paths from wrt to loss; a wrt node that does
// not influence loss gets a zeros node. Gradients are total derivatives: when wrt holds a
// node and one of its ancestors, the ancestor's gradient includes the paths through it.
// Grad panics with *Error on misuse (a non-scalar or integer loss, an integer wrt node,
// nodes of another graph) and when a path needs an op without a gradient rule.
func Grad(loss *Node, wrt []*Node) []*Node {
	if loss == nil {
		gradFail("loss is nil")
	}
	if !loss.dtype.IsFloat() {
		gradFail("loss %v must have a floating-point dtype", loss)
	}
	if loss.shape.Size() != 1 {
		gradFail("loss %v must be a scalar (shape [] or one element); reduce it first (Sum, Mean) or use GradWithSeed", loss)
	}
	return GradWithSeed([]*Node{loss}, []*Node{OnesLike(loss)}, wrt)
}

// GradWithSeed computes vector-Jacobian products: it returns, for each node in wrt, the
// sum over i of seeds[i]ᵀ · ∂outputs[i]/∂wrt. Each seed has its output's dtype and shape;
// outputs need not be scalars. Grad(loss, wrt) is GradWithSeed with a seed of one.
func GradWithSeed(outputs, seeds, wrt []*Node) []*Node {
	if len(outputs) == 0 {
		gradFail("no outputs to differentiate")
	}
	if len(seeds) != len(outputs) {
		gradFail("%d seeds for %d outputs", len(seeds), len(outputs))
	}
	g := outputs[0].graph
	for i, out := range outputs {
		s := seeds[i]
		switch {
		case out == nil || s == nil:
			gradFail("output or seed %d is nil", i)
		case out.graph != g || s.graph != g:
			gradFail("output %d (%v) or its seed (%v) belongs to another graph", i, out, s)
		case !out.dtype.IsFloat():
			gradFail("output %d (%v) must have a floating-point dtype", i, out)
		case s.dtype != out.dtype || !s.shape.Equal(out.shape):
			gradFail("seed %d is %v%v, its output %v needs %v%v", i, s.dtype, s.shape, out, out.dtype, out.shape)
		}
	}
	for i, w := range wrt {
		switch {
		case w == nil:
			gradFail("wrt[%d] is nil", i)
		case w.graph != g:
			gradFail("wrt[%d] (%v) belongs to another graph", i, w)
		case !w.dtype.IsFloat():
			gradFail("wrt[%d] (%v) is not floating point: gradients exist only for float nodes", i, w)
		}
	}
	adj := backprop(outputs, seeds, wrt, false)
	res := make([]*Node, len(wrt))
	for i, w := range wrt {
		if res[i] = adj[w]; res[i] == nil {
			res[i] = ZerosLike(w)
		}
	}
	return res
}

// StopGradient returns x's value as a node through which no gradient flows: Grad
// treats it as a constant, as it does an input. It is a Reshape to x's own shape, which
// the runtime aliases to x's buffer, so it costs nothing when the graph runs. Detaching
// a value (ag's Detach) and checkpointed segments use it.
func StopGradient(x *Node) *Node {
	n := Reshape(x, x.shape...)
	n.stopGrad = true
	return n
}

// StopsGradient reports whether n was made by StopGradient.
func (n *Node) StopsGradient() bool { return n.stopGrad }

// decomposedGrad is the gradient rule of a fused op differentiated through its
// decomposition: the partial derivatives of Decompose(n) with respect to n's inputs.
// The inputs are leaves (a path from one input through another belongs to the caller's
// backprop, which follows it from the other input's gradient), and an input that fills
// several slots gets its gradient in the first.
func decomposedGrad(n, gy *Node) []*Node {
	adj := backprop([]*Node{Decompose(n)}, []*Node{gy}, n.inputs, true)
	grads := make([]*Node, len(n.inputs))
	for i, in := range n.inputs {
		if slices.Index(n.inputs, in) == i {
			grads[i] = adj[in]
		}
	}
	return grads
}

// backprop accumulates seeds backwards from outputs and returns the adjoint of every
// node that lies on a path from a wrt node to an output. Non-float wrt nodes are ignored
// (decomposition rules pass all inputs of a fused op, indices included). With leaves
// set, adjoints stop at the wrt nodes: their rules are not applied.
func backprop(outputs, seeds, wrt []*Node, leaves bool) map[*Node]*Node {
	g := outputs[0].graph
	top := 0
	for _, out := range outputs {
		top = max(top, out.id)
	}
	nodes := g.nodes[:top+1]
	// dep: the node depends on some wrt node through float values.
	dep := make([]bool, top+1)
	for _, w := range wrt {
		if w.id <= top && w.dtype.IsFloat() {
			dep[w.id] = true
		}
	}
	for _, n := range nodes {
		if dep[n.id] || !n.dtype.IsFloat() || opTable[n.op].noGrad != "" || n.stopGrad {
			continue
		}
		for _, in := range n.inputs {
			if dep[in.id] {
				dep[n.id] = true
				break
			}
		}
	}
	contrib := make([][]*Node, top+1)
	for i, out := range outputs {
		if dep[out.id] {
			contrib[out.id] = append(contrib[out.id], seeds[i])
		}
	}
	adj := map[*Node]*Node{}
	for id := top; id >= 0; id-- {
		n := nodes[id]
		if len(contrib[id]) == 0 {
			continue
		}
		gy := sumAll(contrib[id])
		contrib[id] = nil
		adj[n] = gy
		if len(n.inputs) == 0 || opTable[n.op].noGrad != "" || leaves && slices.Contains(wrt, n) {
			continue
		}
		rule := gradRules[n.op]
		if rule == nil {
			reason := opTable[n.op].gradMissing
			if reason == "" {
				reason = "no gradient rule"
			}
			gradFail("%v lies on a path to the loss: %s", n, reason)
		}
		grads := rule(n, gy)
		if len(grads) != len(n.inputs) {
			gradFail("internal error: the rule of %v returned %d gradients for %d inputs", n, len(grads), len(n.inputs))
		}
		for i, in := range n.inputs {
			gi := grads[i]
			if gi == nil || !dep[in.id] {
				continue
			}
			if gi.dtype != in.dtype || !gi.shape.Equal(in.shape) {
				gradFail("internal error: the rule of %v returned %v%v for input %d, which is %v", n, gi.dtype, gi.shape, i, in)
			}
			contrib[in.id] = append(contrib[in.id], gi)
		}
	}
	return adj
}

// sumAll adds the contributions to one adjoint as a balanced tree of Add nodes. The
// gradients of slices that tile one axis (the parts of a Split) are zero pads of the
// parts' gradients; they are concatenated instead, one copy rather than a full-size pad
// per part and the sums of the pads.
func sumAll(xs []*Node) *Node {
	xs = joinPads(xs)
	for len(xs) > 1 {
		next := xs[:0:0]
		for i := 0; i+1 < len(xs); i += 2 {
			next = append(next, Add(xs[i], xs[i+1]))
		}
		if len(xs)%2 == 1 {
			next = append(next, xs[len(xs)-1])
		}
		xs = next
	}
	return xs[0]
}

// joinPads replaces the zero pads among xs by their concatenation when they pad one
// axis only and their unpadded ranges tile it; it returns xs unchanged otherwise.
func joinPads(xs []*Node) []*Node {
	var pads, rest []*Node
	axis := -1
	for _, x := range xs {
		a := paddedAxis(x)
		if a < 0 || axis >= 0 && a != axis {
			rest = append(rest, x)
			continue
		}
		axis = a
		pads = append(pads, x)
	}
	if len(pads) < 2 {
		return xs
	}
	before := func(p *Node) int { return p.attr.(PadAttr).Before[axis] }
	slices.SortFunc(pads, func(a, b *Node) int { return before(a) - before(b) })
	parts := make([]*Node, len(pads))
	at := 0
	for i, p := range pads {
		if before(p) != at {
			return xs
		}
		parts[i] = p.inputs[0]
		at += parts[i].shape[axis]
	}
	if at != pads[0].shape[axis] {
		return xs
	}
	return append(rest, Concat(axis, parts...))
}

// paddedAxis returns the one axis that the zero pad n pads, or -1 when n is not such a
// pad.
func paddedAxis(n *Node) int {
	if n.op != OpPad {
		return -1
	}
	at := n.attr.(PadAttr)
	if at.Mode != PadConstant || at.Value != 0 {
		return -1
	}
	axis := -1
	for i := range at.Before {
		if at.Before[i] != 0 || at.After[i] != 0 {
			if axis >= 0 {
				return -1
			}
			axis = i
		}
	}
	return axis
}

// gradFail panics with an *Error for the "grad" transform.
func gradFail(format string, args ...any) {
	panic(&Error{Op: "grad", Err: fmt.Errorf(format, args...)})
}
