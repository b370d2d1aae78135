package cpu

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestMatMulBiasFusion checks the fused dense layer: a MatMul followed by the Add of a
// row vector runs as one step (a program of one step fewer) whose output is the same
// bits as the two steps', on ragged sizes, both layouts, a batched left operand, the
// bias on either side of the Add; and that it is not fused where it must not be: the
// product read elsewhere, batched on both sides, the Add in an elementwise group, the
// Add's buffer an input of the product.
func TestMatMulBiasFusion(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	cases := []struct {
		name           string
		a, b, bias     []int
		transA, transB bool
		biasLeft       bool
		relu           bool // the Add goes on into a Relu: the elementwise group keeps it
		shareX         bool // the Add's output in the left operand's buffer
		escape         bool // the product is an output too
		fused          bool
	}{
		{name: "2d", a: []int{33, 257}, b: []int{257, 7}, bias: []int{7}, fused: true},
		{name: "row", a: []int{1, 7}, b: []int{7, 33}, bias: []int{1, 33}, biasLeft: true, fused: true},
		{name: "transposed", a: []int{257, 33}, b: []int{1, 257}, bias: []int{1}, transA: true, transB: true, fused: true},
		{name: "tb", a: []int{7, 33}, b: []int{257, 33}, bias: []int{1, 257}, transB: true, fused: true},
		{name: "batched-left", a: []int{2, 7, 33}, b: []int{33, 257}, bias: []int{1, 1, 257}, biasLeft: true, fused: true},
		{name: "batched-both", a: []int{2, 7, 33}, b: []int{2, 33, 5}, bias: []int{5}},
		{name: "relu", a: []int{33, 7}, b: []int{7, 33}, bias: []int{33}, relu: true},
		{name: "shared", a: []int{33, 7}, b: []int{7, 7}, bias: []int{7}, shareX: true},
		{name: "escapes", a: []int{33, 7}, b: []int{7, 33}, bias: []int{33}, escape: true},
	}
	for _, tc := range cases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node][]float32{}
		input := func(shape []int) *tensor.Node {
			n := g.Input("x", tensor.F32, shape...)
			v := make([]float32, tensor.Shape(shape).Size())
			for i := range v {
				v[i] = float32(r.Float64()*2 - 1)
			}
			feeds[n] = v
			return n
		}
		x, w, bias := input(tc.a), input(tc.b), input(tc.bias)
		mm := tensor.MatMulT(x, w, tc.transA, tc.transB)
		y := tensor.Add(mm, bias)
		if tc.biasLeft {
			y = tensor.Add(bias, mm)
		}
		nodes := []*tensor.Node{x, w, bias, mm, y}
		out := y
		if tc.relu {
			out = tensor.Relu(y)
			nodes = append(nodes, out)
		}
		var share map[*tensor.Node]*tensor.Node
		if tc.shareX {
			share = map[*tensor.Node]*tensor.Node{y: x}
		}
		outs := []*tensor.Node{out}
		if tc.escape {
			outs = append(outs, mm)
		}
		// The unfused reference: the product an output too, so it cannot be fused.
		unfusedSteps, want := runShared(t, nodes, share, feeds, out, mm)
		steps, got := runShared(t, nodes, share, feeds, outs...)
		if wantSteps := unfusedSteps - btoi(tc.fused); steps != wantSteps {
			t.Errorf("%s: %d steps, want %d (fused: %v)", tc.name, steps, wantSteps, tc.fused)
		}
		if !slices.Equal(got[0], want[0]) {
			t.Errorf("%s: the fused output differs from the unfused one", tc.name)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
