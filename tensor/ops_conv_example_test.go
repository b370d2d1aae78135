package tensor_test

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// A strided "same" convolution with an even kernel: TensorFlow's padding puts the odd
// padding element at the end.
func ExampleConv2D() {
	g := tensor.NewGraph()
	images := g.Input("images", tensor.F32, 8, 3, 27, 27)
	kernel := g.Input("kernel", tensor.F32, 16, 3, 4, 4)
	y := tensor.Conv2D(images, kernel, tensor.ConvOptions{
		Stride:  []int{2},
		Padding: tensor.ConvPadding{Mode: tensor.PaddingSame},
	})
	at := y.Attr().(tensor.ConvAttr)
	fmt.Println(y.Shape(), "pads", at.PadBegin, at.PadEnd)
	// Output: [8 16 14 14] pads [1 1] [2 2]
}

// Depthwise convolution is the case groups == channels; pooling follows.
func ExampleMaxPool2D() {
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 1, 32, 16, 16)
	dw := g.Input("depthwise", tensor.F32, 32, 1, 3, 3)
	y := tensor.Conv2D(x, dw, tensor.ConvOptions{Groups: 32, Padding: tensor.PadSymmetric(1)})
	fmt.Println(tensor.MaxPool2D(y, 2, 2).Shape(), tensor.GlobalAvgPool(y).Shape())
	// Output: [1 32 8 8] [1 32]
}

// Shape mistakes are reported with both shapes; Catch turns them into errors.
func ExampleConv() {
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 1, 3, 5, 5)
	w := g.Input("w", tensor.F32, 4, 2, 3, 3)
	err := tensor.Catch(func() { tensor.Conv(x, w, tensor.ConvAttr{}) })
	fmt.Println(err)
	// Output: tensor: conv: weights [4 2 3 3] need 3 input channels per group (input [1 3 5 5] has 3 channels in 1 groups), have 2
}
