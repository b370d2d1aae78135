package tensor

import "fmt"

// shapeRule validates an op's inputs and attribute and returns the output dtype,
// shape, and the attribute normalised (axes resolved, defaults filled in). Every op
// except the sources registers one in an init function of its ops_*.go file.
type shapeRule func(attr any, in []*Node) (DType, Shape, any, error)

var shapeRules [numOps]shapeRule

func registerShape(op Op, rule shapeRule) {
	if shapeRules[op] != nil {
		panic("tensor: shape rule registered twice for " + op.String())
	}
	shapeRules[op] = rule
}

// HasShapeRule reports whether op can be built with Apply.
func HasShapeRule(op Op) bool { return op < numOps && shapeRules[op] != nil }

// Apply builds a node of any non-source op from its attribute and inputs. It is the one
// path every builder takes, and the one that graph transforms (autodiff, ONNX import,
// lowering) use to rebuild nodes generically. It panics with *Error on misuse.
func Apply(op Op, attr any, inputs ...*Node) *Node {
	if op >= numOps || shapeRules[op] == nil {
		panic(&Error{Op: op.String(), Err: fmt.Errorf("no shape rule (source ops are built with Graph.Input, Const and Var)")})
	}
	if len(inputs) == 0 {
		fail(op, "no inputs")
	}
	g := inputs[0].graph
	for i, in := range inputs {
		if in == nil {
			fail(op, "input %d is nil", i)
		}
		if in.graph != g {
			fail(op, "input %d (%v) belongs to another graph", i, in)
		}
	}
	if a := op.Arity(); a >= 0 && len(inputs) != a {
		fail(op, "takes %d inputs, got %d", a, len(inputs))
	}
	if dts := op.DTypes(); !dts.Has(inputs[0].dtype) {
		fail(op, "input 0 must be %s, have %s", dts, shapesOf(inputs))
	}
	dt, shape, norm, err := shapeRules[op](attr, inputs)
	if err != nil {
		panic(&Error{Op: op.String(), Err: err})
	}
	return g.add(&Node{op: op, dtype: dt, shape: shape, inputs: append([]*Node(nil), inputs...), attr: norm})
}

// shapesOf formats the input shapes for error messages: "f32[2 3], f32[4]".
func shapesOf(in []*Node) string {
	s := ""
	for i, n := range in {
		if i > 0 {
			s += ", "
		}
		s += n.dtype.String() + n.shape.String()
	}
	return s
}
