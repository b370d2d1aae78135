package tensor_test

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// Grad appends the backward pass to the graph: here the gradient of a mean squared
// activation with respect to a weight matrix, a node the runtime computes like any other.
func ExampleGrad() {
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 4, 3)
	w := g.Input("w", tensor.F32, 3, 2)
	loss := tensor.Mean(tensor.Square(tensor.MatMul(x, w)), nil, false)
	gw := tensor.Grad(loss, []*tensor.Node{w})[0]
	fmt.Println("dloss/dw:", gw.DType(), gw.Shape())
	// Output: dloss/dw: f32 [3 2]
}

// GradWithSeed computes a vector-Jacobian product for an output of any shape.
func ExampleGradWithSeed() {
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 2, 3)
	y := tensor.Softmax(x, -1)
	v := g.Input("v", tensor.F32, 2, 3)
	vjp := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{v}, []*tensor.Node{x})[0]
	fmt.Println(vjp.Shape(), tensor.Differentiable(tensor.OpSoftmax), tensor.NoGradReason(tensor.OpArgMax))
	// Output: [2 3] true integer output
}
