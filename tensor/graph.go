package tensor

import (
	"fmt"
	"sync/atomic"
)

// Graph is a computation: a list of nodes in creation order, which is a topological
// order because a node can only take inputs that already exist. Building a graph only
// records nodes; the runtime compiles and runs it on a backend.
type Graph struct {
	nodes []*Node
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{} }

// Nodes returns the nodes in creation (topological) order.
func (g *Graph) Nodes() []*Node { return g.nodes }

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.nodes) }

// Node is one operation in a graph: its op, output dtype and shape, inputs and
// attributes. Nodes are immutable once built.
type Node struct {
	id       int
	graph    *Graph
	op       Op
	dtype    DType
	shape    Shape
	inputs   []*Node
	attr     any
	name     string
	value    *Tensor   // OpConst
	variable *Variable // OpVariable
	stopGrad bool      // StopGradient: Grad treats the node as a constant
	// decomposed caches Decompose's result, so a node decomposed again (each compile
	// that lowers it, every evaluation of a reference) adds its primitives only once.
	decomposed *Node
}

// ID is the node's index in its graph.
func (n *Node) ID() int { return n.id }

// Graph returns the graph the node belongs to.
func (n *Node) Graph() *Graph { return n.graph }

// Op returns the node's operation.
func (n *Node) Op() Op { return n.op }

// DType returns the output element type.
func (n *Node) DType() DType { return n.dtype }

// Shape returns the output shape. The caller must not modify it.
func (n *Node) Shape() Shape { return n.shape }

// Inputs returns the input nodes. The caller must not modify the slice.
func (n *Node) Inputs() []*Node { return n.inputs }

// Input returns input i.
func (n *Node) Input(i int) *Node { return n.inputs[i] }

// Attr returns the op's attribute struct (see attrs.go), or nil.
func (n *Node) Attr() any { return n.attr }

// Name returns the node's name: the feed name of an input, the variable's name, or a
// label set with SetName for display.
func (n *Node) Name() string { return n.name }

// SetName labels the node (for summaries, profiles and error messages) and returns it.
func (n *Node) SetName(name string) *Node { n.name = name; return n }

// Value returns the constant tensor of an OpConst node, else nil.
func (n *Node) Value() *Tensor { return n.value }

// Variable returns the variable of an OpVariable node, else nil.
func (n *Node) Variable() *Variable { return n.variable }

// String describes the node for messages: "#12 matmul f32[32 128]".
func (n *Node) String() string {
	s := fmt.Sprintf("#%d %v %v%v", n.id, n.op, n.dtype, n.shape)
	if n.name != "" {
		s += " " + fmt.Sprintf("%q", n.name)
	}
	return s
}

// Variable is a named tensor that lives in the runtime across graph runs: model
// weights, optimizer moments, batch-norm running statistics, step counters. A graph
// refers to it through a Var node; the runtime keeps one resident buffer per variable
// and device, initialised from Init on first use, and updates it in place when a graph
// writes it (Assign, optimizer updates). Variables are not tied to a graph, so the same
// weights serve a training graph, an evaluation graph and graphs of other batch sizes.
type Variable struct {
	id    uint64
	name  string
	dtype DType
	shape Shape
	init  *Tensor
}

var variableIDs atomic.Uint64

// NewVariable makes a variable initialised with init (which it keeps; do not modify it
// afterwards).
func NewVariable(name string, init *Tensor) *Variable {
	return &Variable{id: variableIDs.Add(1), name: name, dtype: init.DType(), shape: init.Shape().Clone(), init: init}
}

// ID is unique among the variables of this process.
func (v *Variable) ID() uint64 { return v.id }

// Name returns the name given at creation.
func (v *Variable) Name() string { return v.name }

// DType returns the element type.
func (v *Variable) DType() DType { return v.dtype }

// Shape returns the shape.
func (v *Variable) Shape() Shape { return v.shape }

// Init returns the initial value the runtime uploads on first use.
func (v *Variable) Init() *Tensor { return v.init }

// String describes the variable: "variable dense_1/kernel f32[784 128]".
func (v *Variable) String() string {
	return fmt.Sprintf("variable %s %v%v", v.name, v.dtype, v.shape)
}

// add appends a node built by a builder after its shape rule has run.
func (g *Graph) add(n *Node) *Node {
	n.id = len(g.nodes)
	n.graph = g
	g.nodes = append(g.nodes, n)
	return n
}

// Input adds a node fed with a host tensor of the given dtype and shape at each run.
func (g *Graph) Input(name string, dt DType, shape ...int) *Node {
	s := Shape(shape).Clone()
	if err := s.Validate(); err != nil {
		panic(&Error{Op: "input", Err: err})
	}
	if err := dt.CheckShape(s); err != nil {
		panic(&Error{Op: "input", Err: err})
	}
	return g.add(&Node{op: OpInput, dtype: dt, shape: s, name: name})
}

// Const adds a constant node holding t.
func (g *Graph) Const(t *Tensor) *Node {
	return g.add(&Node{op: OpConst, dtype: t.DType(), shape: t.Shape().Clone(), value: t})
}

// Scalar adds a rank-0 constant of dtype dt.
func (g *Graph) Scalar(dt DType, v float64) *Node { return g.Const(Scalar(dt, v)) }

// Var adds a node reading variable v. Adding the same variable twice to one graph
// returns the existing node, so every use of a weight shares one node.
func (g *Graph) Var(v *Variable) *Node {
	for _, n := range g.nodes {
		if n.op == OpVariable && n.variable == v {
			return n
		}
	}
	return g.add(&Node{op: OpVariable, dtype: v.dtype, shape: v.shape, variable: v, name: v.name})
}
