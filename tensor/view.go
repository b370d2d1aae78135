package tensor

import (
	"fmt"
	"strings"
)

// Graphs render in notebooks (a graph as a cell's value) through a view that package
// runtime installs, since where each node would run is the runtime's knowledge;
// package tensor imports no display code.
var graphView func(*Graph) map[string]any

// SetGraphView installs the function that renders graphs as MIME bundles (package
// runtime installs one when linked).
func SetGraphView(f func(*Graph) map[string]any) { graphView = f }

// MIMEBundle renders the graph: through the installed view (a table of nodes with
// their placement and a picture), else as text.
func (g *Graph) MIMEBundle() map[string]any {
	if graphView != nil {
		if b := graphView(g); b != nil {
			return b
		}
	}
	return map[string]any{"text/plain": g.String()}
}

// String lists the nodes, one a line, with the IDs of their inputs:
// "#2 matmul f32[2 4] <- #0 #1".
func (g *Graph) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "graph of %d nodes", len(g.nodes))
	for _, n := range g.nodes {
		fmt.Fprintf(&b, "\n%v", n)
		for i, in := range n.inputs {
			if i == 0 {
				b.WriteString(" <-")
			}
			fmt.Fprintf(&b, " #%d", in.id)
		}
	}
	return b.String()
}

// Sinks returns the graph's results, in creation order: the nodes no other node reads,
// except sources and the decompositions Decompose added for fused nodes.
func (g *Graph) Sinks() []*Node {
	read := map[*Node]bool{}
	for _, n := range g.nodes {
		for _, in := range n.inputs {
			read[in] = true
		}
		if n.decomposed != nil {
			read[n.decomposed] = true
		}
	}
	var out []*Node
	for _, n := range g.nodes {
		if !read[n] && n.op.Kind() != KindSource {
			out = append(out, n)
		}
	}
	return out
}
