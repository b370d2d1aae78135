package tensor

import (
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Custom ops: graph nodes that call a host kernel by name. The kernel itself lives in
// the runtime (runtime.RegisterCustomOp), which declares each name here together with
// its optional gradient, so that building a node with an unknown name fails at once and
// Grad finds the gradient rule of a custom node.

// CustomAttr is the attribute of OpCustom and OpCustomAssign.
type CustomAttr struct {
	Name    string    // the registered kernel
	Shape   Shape     // the output's shape (OpCustomAssign: the variable's)
	Params  []float64 // numbers passed to the kernel (and to its gradient)
	InPlace bool      // OpCustom: the output starts as a copy of input 0, which the kernel updates
}

// CustomGradFunc builds the gradient of a custom node n with respect to each of its
// inputs from gy, the gradient with respect to n's output, as a gradient rule does (a
// nil entry for an input that carries none). It may use any op, other custom ops
// included; n.Attr() is the node's CustomAttr.
type CustomGradFunc func(n, gy *Node) []*Node

var custom = struct {
	sync.RWMutex
	grads map[string]CustomGradFunc // every declared name; nil when it has no gradient
}{grads: map[string]CustomGradFunc{}}

// DeclareCustomOp makes name usable in Custom nodes, with grad as its gradient (nil: no
// gradient flows through it, and Grad fails where one would have to). A later
// declaration replaces an earlier one, so a notebook cell can redefine an op.
// runtime.RegisterCustomOp calls it with the kernel: use that.
func DeclareCustomOp(name string, grad CustomGradFunc) {
	custom.Lock()
	defer custom.Unlock()
	custom.grads[name] = grad
}

// CustomOps lists the declared custom op names, sorted.
func CustomOps() []string {
	custom.RLock()
	defer custom.RUnlock()
	names := make([]string, 0, len(custom.grads))
	for n := range custom.grads {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func customGrad(name string) (CustomGradFunc, bool) {
	custom.RLock()
	defer custom.RUnlock()
	g, ok := custom.grads[name]
	return g, ok
}

func init() {
	registerShape(OpCustom, customRule)
	registerShape(OpCustomAssign, func(attr any, in []*Node) (DType, Shape, any, error) {
		if in[0].op != OpVariable {
			return 0, nil, nil, fmt.Errorf("updates input 0 in place, which must be a variable, have %v", in[0])
		}
		dt, s, at, err := customRule(attr, in)
		if err == nil && !at.(CustomAttr).InPlace {
			err = fmt.Errorf("custom op %q: an update of a variable is in place (CustomInPlace)", at.(CustomAttr).Name)
		}
		return dt, s, at, err
	})
	registerGrad(OpCustom, func(n, gy *Node) []*Node {
		at := n.attr.(CustomAttr)
		g, _ := customGrad(at.Name)
		if g == nil {
			gradFail("custom op %q has no gradient (register one with runtime.RegisterCustomOp's WithGrad)", at.Name)
		}
		grads := g(n, gy)
		if len(grads) != len(n.inputs) {
			gradFail("the gradient of custom op %q returned %d gradients for %d inputs", at.Name, len(grads), len(n.inputs))
		}
		for i, gx := range grads {
			if gx != nil && (!gx.shape.Equal(n.inputs[i].shape) || gx.dtype != n.inputs[i].dtype) {
				gradFail("the gradient of custom op %q for input %d is %v, want %v%v", at.Name, i, gx, n.inputs[i].dtype, n.inputs[i].shape)
			}
		}
		return grads
	})
}

// Custom returns a node computing the registered custom op name on inputs, with an
// output of the given shape and params handed to the kernel. Inputs are floating point
// and the output has input 0's dtype; kernels see float32 values (half types are
// widened for them). An unknown name panics with *Error naming the registered ones.
func Custom(name string, inputs []*Node, shape Shape, params ...float64) *Node {
	return Apply(OpCustom, CustomAttr{Name: name, Shape: shape, Params: params}, inputs...)
}

// CustomInPlace applies the custom op name to x's values in place, with any further
// inputs: the kernel receives an output that starts as x's values and updates it. On
// a variable (g.Var(v)) it updates the variable itself, as Assign does, and the node
// stands for that side effect; on any other node it updates a copy, so the graph stays
// a function of its inputs (and the custom op's gradient, if any, applies).
func CustomInPlace(name string, x *Node, others []*Node, params ...float64) *Node {
	inputs := append([]*Node{x}, others...)
	at := CustomAttr{Name: name, Shape: x.shape, Params: params, InPlace: true}
	if x.op == OpVariable {
		return Apply(OpCustomAssign, at, inputs...)
	}
	return Apply(OpCustom, at, inputs...)
}

func customRule(attr any, in []*Node) (DType, Shape, any, error) {
	at, ok := attr.(CustomAttr)
	if !ok {
		return 0, nil, nil, fmt.Errorf("attribute must be CustomAttr, got %T", attr)
	}
	if _, ok := customGrad(at.Name); !ok {
		return 0, nil, nil, fmt.Errorf("no custom op %q is registered (runtime.RegisterCustomOp; registered: %v)", at.Name, CustomOps())
	}
	for i, x := range in {
		if !x.dtype.IsFloat() {
			return 0, nil, nil, fmt.Errorf("custom op %q: input %d is %v; custom kernels take floating-point inputs", at.Name, i, x.dtype)
		}
	}
	if err := at.Shape.Validate(); err != nil {
		return 0, nil, nil, fmt.Errorf("custom op %q: %w", at.Name, err)
	}
	if at.InPlace && !at.Shape.Equal(in[0].shape) {
		return 0, nil, nil, fmt.Errorf("custom op %q in place: output shape %v differs from input 0's %v", at.Name, at.Shape, in[0].shape)
	}
	at.Shape, at.Params = at.Shape.Clone(), slices.Clone(at.Params)
	return in[0].dtype, at.Shape, at, nil
}
