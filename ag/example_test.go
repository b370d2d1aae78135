package ag_test

import (
	"fmt"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

// A forward pass in ordinary Go, Backward, a gradient read back, an optimizer step.
func Example() {
	w := ag.Param(tensor.Scalar(tensor.F32, 0))
	x := ag.FromFloat64s([]int{3}, []float64{1, 2, 3})
	y := ag.FromFloat64s([]int{3}, []float64{2, 4, 6})
	opt := ag.SGD([]*ag.Tensor{w}, 0.1)
	for step := 0; step < 30; step++ {
		opt.ZeroGrad()
		loss := ag.MSE(ag.Mul(w, x), y) // each step runs as one compiled program
		loss.Backward()
		if step == 0 {
			fmt.Printf("first loss %.2f, dL/dw %.2f\n", loss.Item(), w.Grad().Item())
		}
		opt.Step()
	}
	fmt.Printf("w = %.3f\n", w.Item())
	// Output:
	// first loss 18.67, dL/dw -18.67
	// w = 2.000
}

// A model is a struct of layers with a Forward method; CaptureStep replays its whole
// training step as one program.
func ExampleCaptureStep() {
	ag.SetSeed(1)
	model := ag.NewSequential(ag.NewLinear(2, 8), ag.NewLambda(ag.Tanh), ag.NewLinear(8, 1))
	opt := ag.Adam(ag.Parameters(model), 0.05)
	step := ag.CaptureStep(func(in ...*ag.Tensor) *ag.Tensor { return ag.MSE(model.Forward(in[0]), in[1]) }, opt)
	x := ag.FromRows([][]float64{{0, 0}, {0, 1}, {1, 0}, {1, 1}})
	y := ag.FromRows([][]float64{{0}, {1}, {1}, {0}})
	var loss float64
	for i := 0; i < 300; i++ {
		loss = step.Step(x, y)
	}
	fmt.Println("xor learned:", loss < 0.01)
	// Output:
	// xor learned: true
}
