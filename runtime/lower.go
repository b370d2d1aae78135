package runtime

import (
	"maps"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// aliases maps a fused node that the schedule computes through its decomposition to
// the decomposition's result, whose buffer it shares (as a Reshape shares its input's).
type aliases map[*tensor.Node]*tensor.Node

// base is the node whose buffer n uses: through Reshape views and lowered fused nodes.
func (a aliases) base(n *tensor.Node) *tensor.Node {
	for {
		switch {
		case n.Op() == tensor.OpReshape:
			n = n.Input(0)
		case a[n] != nil:
			n = a[n]
		default:
			return n
		}
	}
}

// lower is pass 2: a fused op (tensor.CanDecompose: softmax, the norms, attention,
// RoPE) that the preferred backend cannot run is computed on it through its
// decomposition when the backend runs every op of that (decomposing fused ops inside
// it in turn), rather than falling back to the CPU. The decomposition's nodes, which
// tensor.Decompose adds to the graph once, join the schedule just before the fused
// node, and the fused node becomes an alias of their result: it is not computed. It
// returns the schedule's nodes and the aliases.
func lower(nodes []*tensor.Node, preferred, cpu Backend) ([]*tensor.Node, aliases) {
	al := aliases{}
	if preferred == cpu {
		return nodes, al
	}
	scheduled := map[*tensor.Node]bool{}
	for _, n := range nodes {
		scheduled[n] = true
	}
	var out []*tensor.Node
	for _, n := range nodes {
		if sub, inner, ok := decomposition(n, preferred, scheduled); ok {
			for _, x := range sub {
				scheduled[x] = true
			}
			maps.Copy(al, inner)
			out = append(out, sub...)
			continue
		}
		out = append(out, n)
	}
	return out, al
}

// decomposition returns, when preferred cannot run n but can run its decomposition,
// the decomposition's nodes in order (fused ones among them lowered in turn) and the
// aliases that computes them through: n's and those of the fused nodes inside. The
// nodes in scheduled are computed already.
func decomposition(n *tensor.Node, preferred Backend, scheduled map[*tensor.Node]bool) ([]*tensor.Node, aliases, bool) {
	if !tensor.CanDecompose(n.Op()) || preferred.Supports(n) {
		return nil, nil, false
	}
	var d *tensor.Node
	if tensor.Catch(func() { d = tensor.Decompose(n) }) != nil {
		return nil, nil, false
	}
	// The decomposition's own nodes: those its result depends on that the schedule
	// does not hold (n's inputs are scheduled before n).
	pending := maps.Clone(scheduled)
	var sub []*tensor.Node
	stack := []*tensor.Node{d}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if pending[x] {
			continue
		}
		pending[x] = true
		sub = append(sub, x)
		stack = append(stack, x.Inputs()...)
	}
	slices.SortFunc(sub, func(a, b *tensor.Node) int { return a.ID() - b.ID() })
	al := aliases{n: d}
	var out []*tensor.Node
	for _, x := range sub {
		if x.Op().Kind() == tensor.KindSource || preferred.Supports(x) {
			out = append(out, x)
			continue
		}
		xs, inner, ok := decomposition(x, preferred, pending)
		if !ok {
			return nil, nil, false
		}
		for _, y := range xs {
			pending[y] = true
		}
		maps.Copy(al, inner)
		out = append(out, xs...)
	}
	return out, al, true
}
