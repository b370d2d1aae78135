package backendtest

import t "github.com/gml-dev/gml/tensor"

// Cases of the state-space and linear-attention recurrences. Each runs over 37 tokens,
// so the backward kernels recompute their states from more than one checkpoint (every
// 32 tokens). Three kinds per op: a small gradient case (the packed sequence output and
// final state both reach the inputs), the forward op at the GPU test's sizes in every
// float dtype, and the backward op built directly from an output gradient at those
// sizes.

// both flattens a sequence output and a final state into one output, so that a
// gradient check covers the gradients reaching the inputs through each.
func both(y, state *t.Node) *t.Node { return t.Concat(0, t.Reshape(y, -1), t.Reshape(state, -1)) }

// ssmOp is one recurrence: its inputs' shapes and value ranges at a size, and its
// forward and backward ops.
type ssmOp struct {
	name    string
	fwd, bw t.Op
	attr    any
	inputs  func(b, tt, h, s int) []Input
}

func ssmCases() []Case {
	decay := Uniform(0.6, 0.98)
	vec := func(b, tt, h, s int) Input { return in(b, tt, h, s) }
	state := func(b, h, s int) Input { return in(b, h, s, s) }
	ops := []ssmOp{
		// The convolution takes (B, T, D, K) for (b, tt, h, s).
		{"ssm_conv", t.OpSSMConv, t.OpSSMConvGrad, nil, func(b, tt, d, k int) []Input {
			return []Input{in(b, tt, d), in(d, k), in(b, k-1, d)}
		}},
		// The scan takes (B, T, D, N).
		{"ssm_scan", t.OpSSMScan, t.OpSSMScanGrad, nil, func(b, tt, d, n int) []Input {
			return []Input{in(b, tt, d), gen(Uniform(0.05, 0.6), b, tt, d), gen(Uniform(-1.5, -0.2), d, n),
				in(b, tt, n), in(b, tt, n), in(b, d, n)}
		}},
		{"wkv6", t.OpWKV6, t.OpWKV6Grad, nil, func(b, tt, h, s int) []Input {
			return []Input{vec(b, tt, h, s), vec(b, tt, h, s), vec(b, tt, h, s), gen(decay, b, tt, h, s), in(h, s), state(b, h, s)}
		}},
		{"gla", t.OpGLA, t.OpGLAGrad, t.GLAAttr{}, func(b, tt, h, s int) []Input {
			return []Input{vec(b, tt, h, s), vec(b, tt, h, s), vec(b, tt, h, s), gen(decay, b, tt, h, s), state(b, h, s)}
		}},
		{"wkv7", t.OpWKV7, t.OpWKV7Grad, nil, func(b, tt, h, s int) []Input {
			return []Input{vec(b, tt, h, s), gen(decay, b, tt, h, s), gen(Uniform(-0.5, 0.5), b, tt, h, s), vec(b, tt, h, s),
				gen(Uniform(-0.3, 0), b, tt, h, s), gen(Uniform(0, 0.3), b, tt, h, s), state(b, h, s)}
		}},
	}
	small := map[string][4]int{"ssm_conv": {2, 6, 3, 4}, "ssm_scan": {2, 9, 3, 4}, "wkv6": {2, 37, 2, 3}, "gla": {2, 37, 2, 3}, "wkv7": {2, 37, 2, 3}}
	large := map[string][4]int{"ssm_conv": {2, 9, 5, 4}, "ssm_scan": {2, 37, 70, 16}, "wkv6": {2, 37, 3, 8}, "gla": {2, 37, 3, 8}, "wkv7": {2, 37, 3, 8}}
	var cs []Case
	for _, op := range ops {
		sm, lg := small[op.name], large[op.name]
		cs = append(cs, grad(Case{Name: op.name + "_grad", Inputs: op.inputs(sm[0], sm[1], sm[2], sm[3]), Build: op.build()}))
		fwd := Case{Name: op.name, Inputs: op.inputs(lg[0], lg[1], lg[2], lg[3]), Build: op.build()}
		cs = append(cs, fwd.in(t.F32, t.F16, t.BF16).tol(2e-5))
		// The backward op on an output gradient of the forward op's shape.
		bw := Case{Name: op.name + "_backward", Inputs: append(fwd.Inputs, in(fwdShape(op, fwd.Inputs)...)), Build: func(x []*t.Node) *t.Node {
			return t.Apply(op.bw, op.attr, x...)
		}}
		cs = append(cs, bw.in(t.F32, t.F16, t.BF16).tol(2e-5))
	}
	return cs
}

// build returns the case graph of the forward op: the convolution's output and the
// state after it, or the recurrence's sequence output and final state, flattened
// together.
func (op ssmOp) build() func(x []*t.Node) *t.Node {
	return func(x []*t.Node) *t.Node {
		switch op.fwd {
		case t.OpSSMConv:
			return both(t.SSMConv(x[0], x[1], x[2]), t.SSMConvState(x[0], x[2], x[1].Shape()[1]))
		case t.OpSSMScan:
			return both(t.SSMScan(x[0], x[1], x[2], x[3], x[4], x[5]))
		case t.OpWKV6:
			return both(t.WKV6(x[0], x[1], x[2], x[3], x[4], x[5]))
		case t.OpGLA:
			return both(t.GLA(x[0], x[1], x[2], x[3], x[4], 0))
		}
		return both(t.WKV7(x[0], x[1], x[2], x[3], x[4], x[5], x[6]))
	}
}

// fwdShape is the shape of op's forward node on inputs of the given shapes.
func fwdShape(op ssmOp, inputs []Input) t.Shape {
	g := t.NewGraph()
	x := make([]*t.Node, len(inputs))
	for i, s := range inputs {
		x[i] = g.Input("x", t.F32, s.Shape...)
	}
	return t.Apply(op.fwd, op.attr, x...).Shape()
}
