package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestMatMulBiasFusion checks the fused dense layer: a MatMul followed by the Add of a
// row vector, and by an activation (ReLU, GELU, tanh, sigmoid, exp, erf) of the sum,
// runs as one step (a program of one step fewer) whose outputs (the activation, and the
// sum where it is kept) are the same bits as the separate steps', on ragged sizes (rows
// of partial vectors too), both layouts, a batched left operand, the bias on either side
// of the Add; and that it is not fused where it must not be: the product read
// elsewhere, batched on both sides, the Add's buffer an input of the product. The
// activation may take the product's buffer (the scheduler hands it on), which the
// fused step never writes.
func TestMatMulBiasFusion(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	erf := tensor.GeluAttr{Form: tensor.GeluErf}
	cases := []struct {
		name           string
		a, b, bias     []int
		transA, transB bool
		biasLeft       bool
		act            tensor.Op // an activation of the sum (OpInvalid: none)
		attr           any       // the activation's attribute
		keepSum        bool      // the sum is an output too (a backward reads it)
		actInProduct   bool      // the activation's output in the product's buffer
		shareX         bool      // the Add's output in the left operand's buffer
		escape         bool      // the product is an output too
		fused          bool
	}{
		{name: "2d", a: []int{33, 257}, b: []int{257, 7}, bias: []int{7}, fused: true},
		{name: "row", a: []int{1, 7}, b: []int{7, 33}, bias: []int{1, 33}, biasLeft: true, fused: true},
		{name: "transposed", a: []int{257, 33}, b: []int{1, 257}, bias: []int{1}, transA: true, transB: true, fused: true},
		{name: "tb", a: []int{7, 33}, b: []int{257, 33}, bias: []int{1, 257}, transB: true, fused: true},
		{name: "batched-left", a: []int{2, 7, 33}, b: []int{33, 257}, bias: []int{1, 1, 257}, biasLeft: true, fused: true},
		{name: "batched-both", a: []int{2, 7, 33}, b: []int{2, 33, 5}, bias: []int{5}},
		{name: "relu", a: []int{33, 7}, b: []int{7, 48}, bias: []int{48}, act: tensor.OpRelu, fused: true},
		{name: "gelu", a: []int{33, 257}, b: []int{257, 64}, bias: []int{64}, act: tensor.OpGelu, attr: erf, keepSum: true, fused: true},
		{name: "gelu-tb", a: []int{2, 130, 33}, b: []int{272, 33}, bias: []int{272}, transB: true, biasLeft: true, act: tensor.OpGelu, attr: erf, keepSum: true, fused: true},
		{name: "gelu-ta", a: []int{257, 1}, b: []int{257, 528}, bias: []int{528}, transA: true, act: tensor.OpGelu, attr: erf, keepSum: true, fused: true},
		{name: "gelu-product-memory", a: []int{33, 7}, b: []int{7, 64}, bias: []int{64}, act: tensor.OpGelu, attr: erf, keepSum: true, actInProduct: true, fused: true},
		{name: "gelu-ragged", a: []int{33, 257}, b: []int{257, 65}, bias: []int{65}, act: tensor.OpGelu, attr: erf, keepSum: true, fused: true},
		{name: "gelu-10", a: []int{257, 33}, b: []int{33, 10}, bias: []int{10}, act: tensor.OpGelu, attr: erf, keepSum: true, fused: true},
		{name: "gelu-33-tb", a: []int{130, 257}, b: []int{33, 257}, bias: []int{33}, transB: true, act: tensor.OpGelu, attr: erf, fused: true},
		{name: "gelu-130", a: []int{2, 33, 7}, b: []int{7, 130}, bias: []int{130}, act: tensor.OpGelu, attr: erf, keepSum: true, fused: true},
		{name: "gelu-tanh-33", a: []int{65, 17}, b: []int{17, 33}, bias: []int{33}, act: tensor.OpGelu, attr: tensor.GeluAttr{Form: tensor.GeluTanh}, fused: true},
		{name: "relu-10", a: []int{257, 33}, b: []int{33, 10}, bias: []int{10}, act: tensor.OpRelu, keepSum: true, fused: true},
		{name: "tanh-33", a: []int{65, 130}, b: []int{130, 33}, bias: []int{33}, act: tensor.OpTanh, fused: true},
		{name: "sigmoid-130", a: []int{33, 10}, b: []int{10, 130}, bias: []int{130}, act: tensor.OpSigmoid, keepSum: true, fused: true},
		{name: "exp-10", a: []int{130, 7}, b: []int{7, 10}, bias: []int{10}, act: tensor.OpExp, fused: true},
		{name: "erf-33", a: []int{130, 65}, b: []int{65, 33}, bias: []int{33}, biasLeft: true, act: tensor.OpErf, keepSum: true, fused: true},
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
		if tc.act != tensor.OpInvalid {
			out = tensor.Apply(tc.act, tc.attr, y)
			nodes = append(nodes, out)
		}
		var share map[*tensor.Node]*tensor.Node
		if tc.shareX {
			share = map[*tensor.Node]*tensor.Node{y: x}
		}
		if tc.actInProduct {
			share = map[*tensor.Node]*tensor.Node{out: mm}
		}
		outs, ref := []*tensor.Node{out}, []*tensor.Node{out}
		if tc.keepSum {
			outs, ref = append(outs, y), append(ref, y)
		}
		if tc.escape {
			outs = append(outs, mm)
		}
		// The unfused reference: the product an output too, so it cannot be fused.
		unfusedSteps, want := runShared(t, nodes, share, feeds, append(ref, mm)...)
		steps, got := runShared(t, nodes, share, feeds, outs...)
		if wantSteps := unfusedSteps - btoi(tc.fused); steps != wantSteps {
			t.Errorf("%s: %d steps, want %d (fused: %v)", tc.name, steps, wantSteps, tc.fused)
		}
		for i := range ref {
			if !slices.Equal(got[i], want[i]) {
				t.Errorf("%s: fused output %d differs from the unfused one", tc.name, i)
			}
		}
	}
}

// TestUnaryLoopsCutAnywhere checks what the fused dense layer relies on to fuse any
// F32 unary op over rows of any length: each loop gives an element the same bits
// wherever the calls cut the slice, written apart from the argument or in its place,
// at the level this run takes (GML_SIMD picks the others), special values included.
func TestUnaryLoopsCutAnywhere(t *testing.T) {
	attrs := map[tensor.Op][]any{
		tensor.OpLeakyRelu:   {tensor.AlphaAttr{Alpha: 0.1}},
		tensor.OpElu:         {tensor.AlphaAttr{Alpha: 1}},
		tensor.OpGelu:        {tensor.GeluAttr{Form: tensor.GeluErf}, tensor.GeluAttr{Form: tensor.GeluTanh}},
		tensor.OpHardSigmoid: {tensor.HardSigmoidAttr{Alpha: 0.2, Beta: 0.5}},
		tensor.OpClamp:       {tensor.ClampAttr{Min: -1, Max: 2}},
		tensor.OpScale:       {tensor.ScaleAttr{Scale: 1.5, Bias: 0.25}},
	}
	r := rand.New(rand.NewPCG(11, 12))
	x := make([]float32, 300)
	for i := range x {
		x[i] = float32(r.NormFloat64() * []float64{0.5, 3, 40}[i%3])
	}
	for i, v := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 88.5, -88, 0, float32(math.Copysign(0, -1)), 1e-40} {
		x[37*i+5] = v
	}
	whole, cut := make([]float32, len(x)), make([]float32, len(x))
	for op, mk := range f32UnaryOps {
		as, ok := attrs[op]
		if !ok {
			as = []any{nil}
		}
		for _, attr := range as {
			loop := mk(attr)
			loop(whole, x)
			for _, n := range []int{1, 7, 10, 15, 17, 33, 130} {
				for run := range 32 {
					off, inPlace := run/2, run%2 == 1
					if inPlace {
						copy(cut, x)
					}
					for lo := off; lo < len(x); lo += n {
						hi := min(lo+n, len(x))
						if inPlace {
							loop(cut[lo:hi], cut[lo:hi])
						} else {
							loop(cut[lo:hi], x[lo:hi])
						}
					}
					for i := off; i < len(x); i++ {
						if math.Float32bits(cut[i]) != math.Float32bits(whole[i]) {
							t.Fatalf("%v %v: x[%d] = %v gives %v in pieces of %d from %d (in place: %v), %v in one call",
								op, attr, i, x[i], cut[i], n, off, inPlace, whole[i])
						}
					}
				}
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkDenseGelu times a transformer MLP's first layer, 2048 rows of 128 through
// 128×512 weights, its bias and GELU, the sum and the activation both kept (the backward
// reads the sum).
func BenchmarkDenseGelu(b *testing.B) {
	g := tensor.NewGraph()
	x, w, bias := g.Input("x", tensor.F32, 2048, 128), g.Input("w", tensor.F32, 128, 512), g.Input("b", tensor.F32, 512)
	a := tensor.Add(tensor.MatMul(x, w), bias)
	y := tensor.Gelu(a, tensor.GeluErf)
	benchProgram(b, graphOf(y), true, a, y)
}
