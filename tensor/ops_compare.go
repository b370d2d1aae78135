package tensor

import "fmt"

// Comparisons and logical ops (Bool results, NumPy broadcasting) and Where.

func init() {
	for _, op := range []Op{OpEqual, OpNotEqual, OpLess, OpLessEqual, OpGreater, OpGreaterEqual} {
		registerShape(op, binaryRule(true))
	}
	for _, op := range []Op{OpAnd, OpOr, OpXor} {
		registerShape(op, logicalRule)
	}
	registerShape(OpWhere, whereRule)
}

func logicalRule(attr any, in []*Node) (DType, Shape, any, error) {
	s, err := broadcastInputs(in)
	if err != nil {
		return 0, nil, nil, err
	}
	return Bool, s, nil, nil
}

func whereRule(attr any, in []*Node) (DType, Shape, any, error) {
	if in[1].dtype != in[2].dtype {
		return 0, nil, nil, fmt.Errorf("branch dtypes differ: %s", shapesOf(in))
	}
	s, ok := Broadcast(in[0].shape, in[1].shape)
	if ok {
		s, ok = Broadcast(s, in[2].shape)
	}
	if !ok {
		return 0, nil, nil, fmt.Errorf("shapes do not broadcast: %s", shapesOf(in))
	}
	return in[1].dtype, s, nil, nil
}

// Not returns the logical negation of a bool tensor.
func Not(x *Node) *Node { return Apply(OpNot, nil, x) }

// Equal returns a == b elementwise as Bool.
func Equal(a, b *Node) *Node { return Apply(OpEqual, nil, a, b) }

// NotEqual returns a != b elementwise as Bool.
func NotEqual(a, b *Node) *Node { return Apply(OpNotEqual, nil, a, b) }

// Less returns a < b elementwise as Bool.
func Less(a, b *Node) *Node { return Apply(OpLess, nil, a, b) }

// LessEqual returns a <= b elementwise as Bool.
func LessEqual(a, b *Node) *Node { return Apply(OpLessEqual, nil, a, b) }

// Greater returns a > b elementwise as Bool.
func Greater(a, b *Node) *Node { return Apply(OpGreater, nil, a, b) }

// GreaterEqual returns a >= b elementwise as Bool.
func GreaterEqual(a, b *Node) *Node { return Apply(OpGreaterEqual, nil, a, b) }

// And returns the logical and of two bool tensors with broadcasting.
func And(a, b *Node) *Node { return Apply(OpAnd, nil, a, b) }

// Or returns the logical or of two bool tensors with broadcasting.
func Or(a, b *Node) *Node { return Apply(OpOr, nil, a, b) }

// Xor returns the logical exclusive or of two bool tensors with broadcasting.
func Xor(a, b *Node) *Node { return Apply(OpXor, nil, a, b) }

// Where selects a where cond is true and b elsewhere; all three broadcast.
func Where(cond, a, b *Node) *Node { return Apply(OpWhere, nil, cond, a, b) }
