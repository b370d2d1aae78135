package gradcheck

import (
	t "github.com/gml-dev/gml/tensor"
)

// both flattens a sequence output and a final state into one output, so that the check
// covers the gradients reaching the inputs through each.
func both(y, state *t.Node) *t.Node { return t.Concat(0, t.Reshape(y, -1), t.Reshape(state, -1)) }

// The state-space and linear-attention recurrences, over enough tokens (37) that the
// backward kernels recompute states from more than one checkpoint.
func ssmCases() []Case {
	decay := Uniform(0.6, 0.98)
	const b, tt, h, s = 2, 37, 2, 3
	vec := in(b, tt, h, s)
	dec := gen(decay, b, tt, h, s)
	state := in(b, h, s, s)
	return []Case{
		{Name: "ssm_conv", Inputs: []Input{in(2, 6, 3), in(3, 4), in(2, 3, 3)},
			Build: func(x []*t.Node) *t.Node {
				return t.Concat(0, t.Reshape(t.SSMConv(x[0], x[1], x[2]), -1), t.Reshape(t.SSMConvState(x[0], x[2], 4), -1))
			}},
		{Name: "ssm_scan", Inputs: []Input{in(2, 9, 3), gen(Uniform(0.05, 0.6), 2, 9, 3), gen(Uniform(-1.5, -0.2), 3, 4),
			in(2, 9, 4), in(2, 9, 4), in(2, 3, 4)},
			Build: func(x []*t.Node) *t.Node { return both(t.SSMScan(x[0], x[1], x[2], x[3], x[4], x[5])) }},
		{Name: "wkv6", Inputs: []Input{vec, vec, vec, dec, in(h, s), state},
			Build: func(x []*t.Node) *t.Node { return both(t.WKV6(x[0], x[1], x[2], x[3], x[4], x[5])) }},
		{Name: "gla", Inputs: []Input{vec, vec, vec, dec, state},
			Build: func(x []*t.Node) *t.Node { return both(t.GLA(x[0], x[1], x[2], x[3], x[4], 0)) }},
		{Name: "wkv7", Inputs: []Input{vec, dec, vec, vec, gen(Uniform(-0.3, 0), b, tt, h, s), gen(Uniform(0, 0.3), b, tt, h, s), state},
			Build: func(x []*t.Node) *t.Node { return both(t.WKV7(x[0], x[1], x[2], x[3], x[4], x[5], x[6])) }},
	}
}
