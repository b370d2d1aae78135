package apitest

import (
	"errors"
	"strings"
	"testing"

	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestPipeline splits an MLP into three stages on replicas of one device, with
// micro-batches of unequal sizes, and gets one device's results.
func TestPipeline(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		g := tensor.NewGraph()
		x := g.Input("x", tensor.F32, 10, 6)
		w1 := g.Var(tensor.NewVariable("w1", random(1, 6, 8)))
		w2 := g.Var(tensor.NewVariable("w2", random(2, 8, 8)))
		w3 := g.Var(tensor.NewVariable("w3", random(3, 8, 4)))
		h1 := tensor.Relu(tensor.MatMul(x, w1))
		h2 := tensor.Tanh(tensor.MatMul(h1, w2))
		skip := tensor.Add(tensor.MatMul(h2, w3), tensor.MatMul(h1, tensor.SliceAxis(w2, 1, 0, 4))) // h1 skips a stage
		y := tensor.Softmax(skip, -1)
		feeds := map[*tensor.Node]*tensor.Tensor{x: random(4, 10, 6)}
		want := single(t, d, []*tensor.Node{y, h1}, feeds)
		for _, micro := range []int{1, 4} {
			pl, err := rt.NewPipeline(rt.Replicate(d, 3), []*tensor.Node{y, h1}, []*tensor.Node{h1, h2}, micro)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				got, err := pl.Run(feeds)
				if err != nil {
					t.Fatal(err)
				}
				closeTo(t, "pipeline output", got[0], want[0], 1e-5)
				closeTo(t, "pipeline's first cut", got[1], want[1], 1e-5)
			}
			if pl.Stages() != 3 || pl.Micro() != micro || !strings.Contains(pl.String(), "3 stages") {
				t.Errorf("pipeline %v", pl)
			}
			pl.Close()
			if _, err := pl.Run(feeds); !errors.Is(err, rt.ErrFreed) {
				t.Errorf("Run after Close: %v", err)
			}
		}
		v := tensor.NewVariable("v", random(5, 6, 8))
		for _, c := range []struct {
			outputs, cuts  []*tensor.Node
			devices, micro int
			want           string
		}{
			{[]*tensor.Node{y}, []*tensor.Node{h1}, 3, 2, "1 cuts for 3 devices"},
			{[]*tensor.Node{y}, []*tensor.Node{h1, h2}, 3, 11, "cannot make 11 micro-batches"},
			{[]*tensor.Node{tensor.Sub(h1, tensor.Mean(h1, []int{0}, true))}, []*tensor.Node{h1}, 2, 2, "mixes the rows"},
			{[]*tensor.Node{tensor.Assign(g.Var(v), tensor.MatMul(tensor.Transpose(x, 0, 1), h1))}, []*tensor.Node{h1}, 2, 2, ""},
			{[]*tensor.Node{y}, []*tensor.Node{h2, h1}, 3, 2, "give the cuts in order"},
		} {
			_, err := rt.NewPipeline(rt.Replicate(d, c.devices), c.outputs, c.cuts, c.micro)
			if err == nil || (c.want != "" && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("NewPipeline(%v, cuts %v): %v; want an error saying %q", c.outputs, c.cuts, err, c.want)
			}
		}
	})
}
