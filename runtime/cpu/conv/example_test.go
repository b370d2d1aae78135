package conv_test

import (
	"fmt"

	"github.com/gml-dev/gml/runtime/cpu/conv"
)

// A 3×3 box filter with "same" padding over one 3×3 image.
func ExampleForward() {
	p := conv.Params{Batch: 1, InChannels: 1, InH: 3, InW: 3, OutChannels: 1, KernelH: 3, KernelW: 3,
		PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	w := []float32{1, 1, 1, 1, 1, 1, 1, 1, 1}
	y := make([]float32, p.OutputLen())
	if err := conv.Forward(p, x, w, nil, y); err != nil {
		fmt.Println(err)
	}
	fmt.Println(p.OutH(), p.OutW(), y)
	// Output: 3 3 [12 21 16 27 45 33 24 39 28]
}

// A stride-2 transposed convolution doubles the size of a 2×2 input.
func ExampleTransposedForward() {
	t := conv.Transposed{Batch: 1, InChannels: 1, InH: 2, InW: 2, OutChannels: 1, KernelH: 2, KernelW: 2,
		StrideH: 2, StrideW: 2}
	x := []float32{1, 2, 3, 4}
	w := []float32{1, 1, 1, 1}
	y := make([]float32, t.OutH()*t.OutW())
	if err := conv.TransposedForward(t, x, w, nil, y); err != nil {
		fmt.Println(err)
	}
	fmt.Println(t.OutH(), t.OutW(), y)
	// Output: 4 4 [1 1 2 2 1 1 2 2 3 3 4 4 3 3 4 4]
}
