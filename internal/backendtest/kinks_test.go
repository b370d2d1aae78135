package backendtest

import (
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestGradientsAtKinks pins the one-sided gradients the rules take where a function
// has a kink or a tie (tensor/grad_elementwise.go). Central differences cannot check
// them, since they average the two sides, so the table writes the values out: a rule
// moving relu's gradient at 0 to 1, or clamp's limits out of the range that passes the
// gradient, changes what training does at those points without any other test seeing.
func TestGradientsAtKinks(t *testing.T) {
	cases := []struct {
		name  string
		x     []float64
		f     func(x *tensor.Node) *tensor.Node
		wantX []float64 // d(sum f(x))/dx
	}{
		// Gradient 0 at 0, like PyTorch and JAX.
		{"relu", []float64{-1, 0, 1}, tensor.Relu, []float64{0, 0, 1}},
		{"leaky_relu", []float64{-1, 0, 1}, func(x *tensor.Node) *tensor.Node { return tensor.LeakyRelu(x, 0.25) }, []float64{0.25, 0.25, 1}},
		{"elu", []float64{0, 1}, func(x *tensor.Node) *tensor.Node { return tensor.Elu(x, 0.5) }, []float64{0.5, 1}},
		{"abs", []float64{-2, 0, 2}, tensor.Abs, []float64{-1, 0, 1}},
		// Clamp passes the gradient at its limits, and only up to them.
		{"clamp", []float64{-1.5, -1, 0, 2, 2.5}, func(x *tensor.Node) *tensor.Node { return tensor.Clamp(x, -1, 2) }, []float64{0, 1, 1, 1, 0}},
		// Hard sigmoid is flat from where alpha·x+beta reaches 0 or 1: -2 and 2 here.
		{"hard_sigmoid", []float64{-2, 0, 2}, func(x *tensor.Node) *tensor.Node { return tensor.HardSigmoid(x, 0.25, 0.5) }, []float64{0, 0.25, 0}},
		// max(x, c) and min(x, c) split a tie in halves (c gets the other half).
		{"maximum_tie", []float64{-1, 0.5, 1}, func(x *tensor.Node) *tensor.Node {
			return tensor.Maximum(x, x.Graph().Scalar(tensor.F32, 0.5))
		}, []float64{0, 0.5, 1}},
		{"minimum_tie", []float64{-1, 0.5, 1}, func(x *tensor.Node) *tensor.Node {
			return tensor.Minimum(x, x.Graph().Scalar(tensor.F32, 0.5))
		}, []float64{1, 0.5, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := tensor.NewGraph()
			x := g.Input("x", tensor.F32, len(c.x))
			gx := tensor.Grad(tensor.Sum(c.f(x), nil, false), []*tensor.Node{x})[0]
			ip := NewInterpreter()
			ip.ExactF32 = true
			res, err := ip.Eval([]*tensor.Node{gx}, map[*tensor.Node]*Array{
				x: {DType: tensor.F32, Shape: tensor.Shape{len(c.x)}, Data: c.x},
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range c.wantX {
				if got := res[0].Data[i]; got != want {
					t.Errorf("gradient at x = %v: %v, want %v", c.x[i], got, want)
				}
			}
		})
	}
}
