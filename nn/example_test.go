package nn_test

import (
	"fmt"

	"github.com/gml-dev/gml/nn"
	"github.com/gml-dev/gml/tensor"
)

// Scale multiplies each feature by a learned factor, starting at 1.
type Scale struct{}

func (Scale) Build(b *nn.Builder, in []nn.Spec) error {
	b.Weight("gain", in[0].Shape, nn.Ones())
	return nil
}

func (Scale) Call(f *nn.Forward, in []*tensor.Node) *tensor.Node {
	return tensor.Mul(in[0], f.Weight("gain"))
}

// A layer of your own: Build declares weights, Call emits the computation.
func ExampleCustom() {
	m := nn.Sequential(
		nn.Custom("scale", Scale{}, nn.InputShape(4), nn.Name("scale")),
		nn.Lambda(func(x *tensor.Node) *tensor.Node { return tensor.Tanh(x) }, nn.Name("squash")),
		nn.Dense(2, nn.Name("out")))
	fmt.Println(m.Summary())
	// Output:
	// Model "sequential": 14 trainable parameters, device not placed yet
	// Layer (type)     Output shape  Param #  Connected to  Device
	// ---------------  ------------  -------  ------------  --------------
	// input (input)    (None, 4)     0                      not placed yet
	// scale (scale)    (None, 4)     4        input         not placed yet
	// squash (lambda)  (None, 4)     0        scale         not placed yet
	// out (dense)      (None, 2)     10       squash        not placed yet
}

// Keras's image layout: (height, width, channels) samples.
func ExampleChannelsLast() {
	m := nn.Sequential(
		nn.Conv2D(8, 3, nn.ChannelsLast(), nn.Padding("same"), nn.InputShape(28, 28, 1), nn.Name("conv")),
		nn.MaxPooling2D(2, nn.ChannelsLast(), nn.Name("pool")),
		nn.GlobalAveragePooling2D(nn.ChannelsLast(), nn.Name("gap")))
	fmt.Println(m.Summary())
	// Output:
	// Model "sequential": 80 trainable parameters, device not placed yet
	// Layer (type)                    Output shape       Param #  Connected to  Device
	// ------------------------------  -----------------  -------  ------------  --------------
	// input (input)                   (None, 28, 28, 1)  0                      not placed yet
	// conv (conv2d)                   (None, 28, 28, 8)  80       input         not placed yet
	// pool (max_pooling2d)            (None, 14, 14, 8)  0        conv          not placed yet
	// gap (global_average_pooling2d)  (None, 8)          0        pool          not placed yet
}
