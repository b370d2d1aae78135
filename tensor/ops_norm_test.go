package tensor

import (
	"math"
	"slices"
	"testing"
)

func TestSoftmaxShapes(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 2, 3, 4)
	n := checkBuild(t, "softmax", func() *Node { return Softmax(x, -1) }, Shape{2, 3, 4}, "")
	if at := n.Attr().(SoftmaxAttr); at.Axis != 2 || at.Scale != 1 {
		t.Errorf("softmax attr %+v, want axis 2 and scale 1", at)
	}
	checkBuild(t, "log softmax axis 0", func() *Node { return LogSoftmax(x, 0) }, Shape{2, 3, 4}, "")
	checkBuild(t, "axis out of range", func() *Node { return Softmax(x, 3) }, nil, "out of range")
	checkBuild(t, "masked", func() *Node { return SoftmaxMasked(x, g.Input("m", F32, 3, 1), 1, 0.5) }, Shape{2, 3, 4}, "")
	checkBuild(t, "mask too big", func() *Node { return SoftmaxMasked(x, g.Input("m", F32, 5, 2, 3, 4), 1, 0) },
		nil, "does not broadcast")
	checkBuild(t, "mask dtype", func() *Node { return SoftmaxMasked(x, g.Input("m", Bool, 3, 4), 1, 0) },
		nil, "dtype")
	checkBuild(t, "int input", func() *Node { return Softmax(g.Input("i", I32, 3), 0) }, nil, "float")
}

func TestNormShapes(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 2, 3, 4)
	n := checkBuild(t, "layer norm", func() *Node { return LayerNorm(x, nil, nil, nil, 1e-5) }, Shape{2, 3, 4}, "")
	if at := n.Attr().(NormAttr); !slices.Equal(at.Axes, []int{2}) {
		t.Errorf("default axes %v, want [2]", at.Axes)
	}
	g34 := g.Input("g", F32, 3, 4)
	n = checkBuild(t, "two axes", func() *Node { return LayerNorm(x, g34, g34, []int{-1, -2}, 1e-5) }, Shape{2, 3, 4}, "")
	if at := n.Attr().(NormAttr); !slices.Equal(at.Axes, []int{1, 2}) {
		t.Errorf("axes %v, want [1 2]", at.Axes)
	}
	n = checkBuild(t, "beta only", func() *Node { return LayerNorm(x, nil, g.Input("b", F32, 4), nil, 0) }, Shape{2, 3, 4}, "")
	if len(n.Inputs()) != 3 || n.Input(1).Op() != OpConst {
		t.Errorf("beta only: inputs %v, want x, a constant gamma and beta", n.Inputs())
	}
	checkBuild(t, "not trailing", func() *Node { return LayerNorm(x, nil, nil, []int{0}, 0) }, nil, "trailing")
	checkBuild(t, "repeated", func() *Node { return LayerNorm(x, nil, nil, []int{2, -1}, 0) }, nil, "repeat")
	checkBuild(t, "gamma shape", func() *Node { return LayerNorm(x, g34, nil, nil, 0) }, nil, "normalised shape")
	checkBuild(t, "negative eps", func() *Node { return LayerNorm(x, nil, nil, nil, -1) }, nil, "eps")
	checkBuild(t, "rms", func() *Node { return RMSNorm(x, g.Input("g4", F32, 4), nil, 1e-6) }, Shape{2, 3, 4}, "")
	checkBuild(t, "rms too many", func() *Node {
		return Apply(OpRMSNorm, NormAttr{}, x, g.Input("g4", F32, 4), g.Input("b4", F32, 4))
	}, nil, "at most 2")

	img := g.Input("img", F32, 4, 6, 5, 5)
	c6 := g.Input("c", F32, 6)
	var mean, variance, y *Node
	if err := Catch(func() { mean, variance, y = BatchNormTrain(img, c6, c6, []int{0, 2, 3}, 1e-3) }); err != nil {
		t.Fatal(err)
	}
	if !mean.Shape().Equal(Shape{6}) || !variance.Shape().Equal(Shape{6}) || !y.Shape().Equal(img.Shape()) {
		t.Errorf("batch norm train shapes %v %v %v", mean.Shape(), variance.Shape(), y.Shape())
	}
	checkBuild(t, "batch norm infer", func() *Node { return BatchNormInfer(img, c6, nil, c6, c6, 1e-3) }, img.Shape(), "")
	checkBuild(t, "group norm", func() *Node { return GroupNorm(img, 3, c6, c6, 1e-5) }, img.Shape(), "")
	checkBuild(t, "group norm groups", func() *Node { return GroupNorm(img, 4, nil, nil, 1e-5) }, nil, "must divide")
	checkBuild(t, "instance norm", func() *Node { return InstanceNorm(img, nil, c6, 1e-5) }, img.Shape(), "")
}

func TestAttentionShapes(t *testing.T) {
	g := NewGraph()
	q := g.Input("q", F32, 2, 3, 5, 8)
	k := g.Input("k", F32, 2, 3, 7, 8)
	v := g.Input("v", F32, 2, 3, 7, 4)
	n := checkBuild(t, "cross", func() *Node { return Attention(q, k, v, nil, AttentionAttr{}) }, Shape{2, 3, 5, 4}, "")
	if s := n.Attr().(AttentionAttr).Scale; !(math.Abs(float64(s)-1/math.Sqrt(8)) <= 1e-7) {
		t.Errorf("default scale %v, want 1/sqrt(8)", s)
	}
	checkBuild(t, "mask 2-D", func() *Node { return Attention(q, k, v, g.Input("m", F32, 5, 7), AttentionAttr{Causal: true}) },
		Shape{2, 3, 5, 4}, "")
	checkBuild(t, "mask per head", func() *Node { return Attention(q, k, v, g.Input("m", F32, 3, 1, 7), AttentionAttr{}) },
		Shape{2, 3, 5, 4}, "")
	checkBuild(t, "mask wrong", func() *Node { return Attention(q, k, v, g.Input("m", F32, 5, 6), AttentionAttr{}) },
		nil, "does not broadcast")
	checkBuild(t, "feature mismatch", func() *Node { return Attention(q, v, v, nil, AttentionAttr{}) }, nil, "feature sizes")
	checkBuild(t, "length mismatch", func() *Node { return Attention(q, k, q, nil, AttentionAttr{}) }, nil, "v [2 3 5 8] must have the shape [2 3 7 *] (layout bhtd)")
	checkBuild(t, "heads mismatch", func() *Node {
		return Attention(q, g.Input("k2", F32, 2, 4, 7, 8), v, nil, AttentionAttr{})
	}, nil, "batch and head axes")

	// The AttentionBTHD layout: (B, T, H, D) operands, the mask in the scores' order.
	bthd := AttentionAttr{Layout: AttentionBTHD}
	qr, kr, vr := g.Input("qr", F32, 2, 5, 3, 8), g.Input("kr", F32, 2, 7, 3, 8), g.Input("vr", F32, 2, 7, 3, 4)
	checkBuild(t, "bthd", func() *Node { return Attention(qr, kr, vr, nil, bthd) }, Shape{2, 5, 3, 4}, "")
	checkBuild(t, "bthd mask per head", func() *Node { return Attention(qr, kr, vr, g.Input("m", F32, 3, 5, 7), bthd) },
		Shape{2, 5, 3, 4}, "")
	checkBuild(t, "bthd mask in operand order", func() *Node { return Attention(qr, kr, vr, g.Input("m", F32, 5, 3, 7), bthd) },
		nil, "does not broadcast")
	checkBuild(t, "bthd rank 3", func() *Node {
		return Attention(g.Input("q3", F32, 5, 3, 8), g.Input("k3", F32, 7, 3, 8), g.Input("v3", F32, 7, 3, 2), nil, bthd)
	}, Shape{5, 3, 2}, "")
	checkBuild(t, "bthd rank 2", func() *Node {
		x := g.Input("x", F32, 5, 8)
		return Attention(x, x, x, nil, bthd)
	}, nil, "(..., Tq, H, D)")
	checkBuild(t, "bthd length", func() *Node { return Attention(qr, kr, qr, nil, bthd) }, nil, "v [2 5 3 8] must have the shape [2 7 3 *] (layout bthd)")
	checkBuild(t, "bthd heads", func() *Node { return Attention(qr, g.Input("k4", F32, 2, 7, 4, 8), vr, nil, bthd) }, nil, "batch and head axes")
	checkBuild(t, "bthd heads of v", func() *Node { return Attention(qr, kr, g.Input("v4", F32, 2, 7, 4, 4), nil, bthd) }, nil, "v [2 7 4 4]")
	checkBuild(t, "unknown layout", func() *Node { return Attention(q, k, v, nil, AttentionAttr{Layout: 9}) }, nil, "unknown layout AttentionLayout(9)")
}

func TestAttentionGradShapes(t *testing.T) {
	g := NewGraph()
	q := g.Input("q", F32, 2, 3, 5, 8)
	k := g.Input("k", F32, 2, 3, 7, 8)
	v := g.Input("v", F32, 2, 3, 7, 4)
	m := g.Input("m", F32, 5, 7)
	o := Attention(q, k, v, m, AttentionAttr{Causal: true})
	gy := g.Input("gy", F32, 2, 3, 5, 4)
	var dq, dk, dv *Node
	if err := Catch(func() { dq, dk, dv = AttentionGrad(q, k, v, m, o, gy, AttentionAttr{Causal: true}) }); err != nil {
		t.Fatal(err)
	}
	if !dq.Shape().Equal(q.Shape()) || !dk.Shape().Equal(k.Shape()) || !dv.Shape().Equal(v.Shape()) {
		t.Errorf("gradient shapes %v %v %v, want those of q, k, v", dq.Shape(), dk.Shape(), dv.Shape())
	}
	stats := dq.Input(4)
	if !stats.Shape().Equal(Shape{2, 3, 5, 2}) || stats.Attr().(AttentionGradAttr).Output != AttentionStats {
		t.Errorf("statistics node %v, want attention_grad f32[2 3 5 2] with AttentionStats", stats)
	}
	kv := dk.Input(0)
	if at := kv.Attr().(AttentionGradAttr); !kv.Shape().Equal(Shape{2, 3, 7, 12}) || at.Output != AttentionGradKV ||
		!at.Causal || !(math.Abs(float64(at.Scale)-1/math.Sqrt(8)) <= 1e-7) || len(kv.Inputs()) != 6 {
		t.Errorf("key/value gradient node %v %+v, want f32[2 3 7 12], causal, scale 1/sqrt(8), 6 inputs", kv, at)
	}
	at := func(out AttentionGradOutput) AttentionGradAttr { return AttentionGradAttr{Output: out} }
	checkBuild(t, "stats without o", func() *Node { return Apply(OpAttentionGrad, at(AttentionStats), q, k, gy) },
		nil, "takes q, k, o, gy")
	checkBuild(t, "stats shape", func() *Node { return Apply(OpAttentionGrad, at(AttentionGradQ), q, k, v, gy, gy) },
		nil, "stats")
	checkBuild(t, "gy shape", func() *Node { return Apply(OpAttentionGrad, at(AttentionGradKV), q, k, v, q, stats) },
		nil, "gy")
	checkBuild(t, "o length", func() *Node { return Apply(OpAttentionGrad, at(AttentionStats), q, k, v, gy) }, nil, "o ")
	checkBuild(t, "mask shape", func() *Node {
		return Apply(OpAttentionGrad, at(AttentionGradQ), q, k, v, gy, stats, g.Input("m2", F32, 7, 5))
	}, nil, "does not broadcast")
	checkBuild(t, "dtype", func() *Node {
		return Apply(OpAttentionGrad, at(AttentionGradQ), q, k, v, gy, g.Input("s", F16, 2, 3, 5, 2))
	}, nil, "one float dtype")
	checkBuild(t, "unknown output", func() *Node { return Apply(OpAttentionGrad, at(7), q, k, v, gy, stats) }, nil, "unknown output")
	checkBuild(t, "wrong attr", func() *Node { return Apply(OpAttentionGrad, AttentionAttr{}, q, k, o, gy) }, nil, "AttentionGradAttr")

	// AttentionBTHD: the gradients in the operands' layout, the statistics in the scores'.
	bthd := AttentionAttr{Causal: true, Layout: AttentionBTHD}
	qr, kr, vr := g.Input("qr", F32, 2, 5, 3, 8), g.Input("kr", F32, 2, 7, 3, 8), g.Input("vr", F32, 2, 7, 3, 4)
	or := Attention(qr, kr, vr, m, bthd)
	gyr := g.Input("gyr", F32, 2, 5, 3, 4)
	if err := Catch(func() { dq, dk, dv = AttentionGrad(qr, kr, vr, m, or, gyr, bthd) }); err != nil {
		t.Fatal(err)
	}
	if !dq.Shape().Equal(qr.Shape()) || !dk.Shape().Equal(kr.Shape()) || !dv.Shape().Equal(vr.Shape()) {
		t.Errorf("bthd gradient shapes %v %v %v, want those of q, k, v", dq.Shape(), dk.Shape(), dv.Shape())
	}
	if s := dq.Input(4); !s.Shape().Equal(Shape{2, 3, 5, 2}) || s.Attr().(AttentionGradAttr).Layout != AttentionBTHD {
		t.Errorf("bthd statistics node %v %+v, want f32[2 3 5 2] in layout bthd", s, s.Attr())
	}
	if kv := dk.Input(0); !kv.Shape().Equal(Shape{2, 7, 3, 12}) {
		t.Errorf("bthd key/value gradient node %v, want f32[2 7 3 12]", kv)
	}
	atr := func(out AttentionGradOutput) AttentionGradAttr {
		return AttentionGradAttr{Output: out, Layout: AttentionBTHD}
	}
	checkBuild(t, "bthd stats in operand order", func() *Node {
		return Apply(OpAttentionGrad, atr(AttentionGradQ), qr, kr, vr, gyr, g.Input("s2", F32, 2, 5, 3, 2))
	}, nil, "stats [2 5 3 2] must have the shape [2 3 5 2]")
	checkBuild(t, "bthd gy in bhtd", func() *Node {
		return Apply(OpAttentionGrad, atr(AttentionStats), qr, kr, or, g.Input("gy2", F32, 2, 3, 5, 4))
	}, nil, "gy [2 3 5 4] must have the shape [2 5 3 4] (layout bthd)")
}

func TestRoPEShapes(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 1, 2, 5, 8)
	pos := g.Input("pos", I32, 5)
	n := checkBuild(t, "rope", func() *Node { return RoPE(x, pos, RoPEAttr{}) }, Shape{1, 2, 5, 8}, "")
	if at := n.Attr().(RoPEAttr); at.Dims != 8 || at.Base != 10000 {
		t.Errorf("defaults %+v, want dims 8 and base 10000", at)
	}
	checkBuild(t, "partial", func() *Node { return RoPE(x, g.Input("p64", I64, 5), RoPEAttr{Dims: 4, Base: 500}) }, x.Shape(), "")
	checkBuild(t, "odd dims", func() *Node { return RoPE(x, pos, RoPEAttr{Dims: 3}) }, nil, "even")
	checkBuild(t, "too many dims", func() *Node { return RoPE(x, pos, RoPEAttr{Dims: 10}) }, nil, "at most")
	checkBuild(t, "positions length", func() *Node { return RoPE(x, g.Input("p", I32, 4), RoPEAttr{}) }, nil, "shape [5]")
	checkBuild(t, "positions dtype", func() *Node { return RoPE(x, g.Input("p", F32, 5), RoPEAttr{}) }, nil, "I32 or I64")
}

func TestDecomposeShapes(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 2, 3, 4)
	q := g.Input("q", F32, 2, 3, 8)
	fused := []*Node{
		SoftmaxMasked(x, g.Input("m", F32, 4), 1, 2),
		LogSoftmax(x, -1),
		LayerNorm(x, g.Input("g", F32, 4), g.Input("b", F32, 4), nil, 1e-5),
		RMSNorm(x, nil, []int{1, 2}, 1e-6),
		Attention(q, q, x, nil, AttentionAttr{Causal: true}),
		RoPE(q, g.Input("pos", I64, 3), RoPEAttr{Dims: 6}),
	}
	o := Attention(q, q, x, g.Input("am", F32, 3, 3), AttentionAttr{Causal: true})
	dq, dk, _ := AttentionGrad(q, q, x, o.Input(3), o, g.Input("gy", F32, 2, 3, 4), AttentionAttr{Causal: true})
	fused = append(fused, dq, dq.Input(4), dk.Input(0))
	for _, n := range fused {
		if !CanDecompose(n.Op()) {
			t.Errorf("CanDecompose(%v) = false", n.Op())
		}
		d, err := build(func() *Node { return Decompose(n) })
		if err != nil {
			t.Errorf("Decompose(%v): %v", n, err)
			continue
		}
		if d.DType() != n.DType() || !d.Shape().Equal(n.Shape()) {
			t.Errorf("Decompose(%v) gives %v", n, d)
		}
	}
	conv := Conv2D(g.Input("img", F32, 1, 1, 3, 3), g.Input("w", F32, 1, 1, 2, 2))
	if CanDecompose(OpConv) {
		t.Error("CanDecompose(conv) = true")
	}
	if _, err := build(func() *Node { return Decompose(conv) }); err == nil {
		t.Error("Decompose(conv) did not fail")
	}
}

func TestCausalMask(t *testing.T) {
	inf := float32(math.Inf(-1))
	for _, c := range []struct {
		tq, tk int
		want   []float32
	}{
		{2, 4, []float32{0, inf, inf, inf, 0, 0, inf, inf}},
		{3, 2, []float32{0, inf, 0, 0, 0, 0}},
	} {
		if m := CausalMask(F32, c.tq, c.tk).Float32s(); !slices.Equal(m, c.want) {
			t.Errorf("CausalMask(%d, %d) = %v, want %v", c.tq, c.tk, m, c.want)
		}
	}
}
