package tensor

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestQuantizedHostTensors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]float32, 2*256)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	f, _ := FromFloat32s(Shape{2, 256}, x)
	for _, dt := range []DType{Q4_0, Q8_0, Q4_K} {
		q := f.Convert(dt)
		if q.DType() != dt || len(q.Bytes()) != dt.Bytes(512) || dt.Size() != 0 || !dt.IsQuantized() {
			t.Fatalf("%v: %d bytes", dt, len(q.Bytes()))
		}
		back := q.Convert(F32)
		if !back.AllClose(f, 0, 0.3) {
			t.Errorf("%v round trip too far: %v vs %v", dt, back, f)
		}
		if q.Float(300) != back.Float(300) || q.Float64s()[5] != back.Float(5) {
			t.Errorf("%v: Float disagrees with Convert", dt)
		}
		if _, err := q.Reshape(4, 128); (err == nil) != (dt.BlockSize() <= 128) {
			t.Errorf("%v: Reshape to rows of 128: %v", dt, err)
		}
		if _, err := FromBytes(dt, Shape{3, 16}, nil); err == nil || !strings.Contains(err.Error(), "blocks of") {
			t.Errorf("%v: FromBytes with rows of 16: %v", dt, err)
		}
		if d, err := ParseDType(dt.String()); err != nil || d != dt {
			t.Errorf("ParseDType(%v) = %v, %v", dt, d, err)
		}
	}
	if _, err := f.Quantize(F16); err == nil {
		t.Error("Quantize to f16: no error")
	}
}

func TestQuantizedMatMulRule(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *Graph) *Node
		ok    string // "" when building must fail
	}{
		{"x @ wT", func(g *Graph) *Node {
			return MatMulT(g.Input("x", F32, 3, 64), g.Input("w", Q4_0, 5, 64), false, true)
		}, "f32[3 5]"},
		{"w @ y", func(g *Graph) *Node {
			return MatMul(g.Input("w", Q8_0, 5, 64), g.Input("y", F32, 2, 64, 7))
		}, "f32[2 5 7]"},
		{"x @ w (blocks across the reduction)", func(g *Graph) *Node {
			return MatMul(g.Input("x", F32, 3, 64), g.Input("w", Q4_0, 64, 64))
		}, ""},
		{"wT @ y", func(g *Graph) *Node {
			return MatMulT(g.Input("w", Q4_0, 64, 64), g.Input("y", F32, 64, 2), true, false)
		}, ""},
		{"f16 operand", func(g *Graph) *Node {
			return MatMulT(g.Input("x", F16, 3, 64), g.Input("w", Q4_0, 5, 64), false, true)
		}, ""},
		{"batched weights", func(g *Graph) *Node {
			return MatMulT(g.Input("x", F32, 3, 64), g.Input("w", Q4_0, 2, 5, 64), false, true)
		}, ""},
		{"two quantised", func(g *Graph) *Node {
			return MatMulT(g.Input("x", Q4_0, 3, 64), g.Input("w", Q4_0, 5, 64), false, true)
		}, ""},
		{"input rows not blocks", func(g *Graph) *Node { return g.Input("w", Q4_K, 5, 64) }, ""},
		{"cast to q4_k", func(g *Graph) *Node { return Cast(g.Input("x", BF16, 2, 256), Q4_K) }, "q4_k[2 256]"},
		{"cast int to q8_0", func(g *Graph) *Node { return Cast(g.Input("x", I32, 2, 32), Q8_0) }, ""},
		{"add on q8_0", func(g *Graph) *Node { return Add(g.Input("x", Q8_0, 32), g.Input("y", Q8_0, 32)) }, ""},
		{"reshape keeps blocks", func(g *Graph) *Node { return Reshape(g.Input("x", Q8_0, 2, 64), 4, 32) }, "q8_0[4 32]"},
		{"reshape splits blocks", func(g *Graph) *Node { return Reshape(g.Input("x", Q8_0, 2, 64), 8, 16) }, ""},
	}
	for _, c := range cases {
		var n *Node
		err := Catch(func() { n = c.build(NewGraph()) })
		switch {
		case c.ok == "" && err == nil:
			t.Errorf("%s: built %v, want an error", c.name, n)
		case c.ok != "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.ok != "" && n.DType().String()+n.Shape().String() != c.ok:
			t.Errorf("%s: %v%v, want %s", c.name, n.DType(), n.Shape(), c.ok)
		}
	}
}

// TestQuantizedMatMulGrad: the weights get no gradient, and x's gradient multiplies by
// the decoded weights.
func TestQuantizedMatMulGrad(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 3, 64)
	w := g.Input("w", Q4_0, 5, 64)
	loss := Sum(MatMulT(x, w, false, true), nil, false)
	gx := Grad(loss, []*Node{x})[0]
	if !gx.Shape().Equal(x.Shape()) || gx.DType() != F32 {
		t.Fatalf("gradient %v", gx)
	}
	found := false
	for _, n := range g.Nodes() {
		if n.Op() == OpCast && n.Input(0) == w && n.DType() == F32 {
			found = true
		}
	}
	if !found {
		t.Error("the gradient does not multiply by the decoded weights")
	}
	if err := Catch(func() { Grad(loss, []*Node{w}) }); err == nil {
		t.Error("a gradient with respect to quantised weights: no error")
	}
}
