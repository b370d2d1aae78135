package backendtest

import (
	"fmt"
	"math/rand/v2"

	t "github.com/gml-dev/gml/tensor"
)

// Cases of dropout, Assign and the optimizer updates. The updates are checked on the
// variables they write: plain and Nesterov SGD with weight decay, Adam with L2 weight
// decay and AdamW, and Adam where the second moment is near 0, where eps must sit
// outside the square root.

func trainingCases() []Case {
	seed := func(v float64) Input { return Input{Shape: t.Shape{}, DType: t.I32, Own: true, Values: []float64{v}} }
	scalar := func(v float64) Input { return Input{Shape: t.Shape{}, Values: []float64{v}, Fixed: true} }
	step := func(v float64) Input { return Input{Shape: t.Shape{}, DType: t.I64, Own: true, Values: []float64{v}} }
	variable := func(g func(*rand.Rand, int) []float64, shape ...int) Input {
		return Input{Shape: shape, Gen: g, Var: true}
	}
	sgd := func(at t.SGDAttr) func(x []*t.Node) *t.Node {
		return func(x []*t.Node) *t.Node { return t.SGDUpdate(x[0], x[1], x[2], x[3], at) }
	}
	adam := func(at t.AdamAttr) func(x []*t.Node) *t.Node {
		return func(x []*t.Node) *t.Node { return t.AdamUpdate(x[0], x[1], x[2], x[3], x[4], x[5], at) }
	}
	sgdInputs := []Input{variable(nil, 1000), in(1000), variable(nil, 1000), scalar(0.1)}
	adamInputs := func(g, v func(*rand.Rand, int) []float64) []Input {
		return []Input{variable(nil, 1000), gen(g, 1000), variable(nil, 1000), variable(v, 1000), scalar(0.01), step(3)}
	}
	zero := Uniform(0, 0)
	tiny := Uniform(-1e-8, 1e-8) // gradients whose squares are far below eps²
	// The first step from zero moments with small gradients: the weight decay term
	// dominates what Adam normalises, so an update that drops it moves p the other way.
	firstStep := []Input{variable(nil, 1000), gen(Uniform(-0.01, 0.01), 1000), variable(zero, 1000), variable(zero, 1000), scalar(0.01), step(1)}
	var cs []Case
	// The mask is tensor.DropoutKeep's, bit for bit, whatever the seed's dtype and value.
	for _, st := range []t.DType{t.I32, t.I64} {
		for _, v := range []float64{0, 7, 2147483647, -123456} {
			s := Input{Shape: t.Shape{}, DType: st, Own: true, Values: []float64{v}}
			cs = append(cs,
				binary(fmt.Sprintf("dropout_seed_%v_%v", st, v), in(37, 27), s, func(x, s *t.Node) *t.Node { return t.Dropout(x, s, 0.3) }),
				binary(fmt.Sprintf("dropout_mask_seed_%v_%v", st, v), Input{Shape: t.Shape{1001}, DType: t.I64, Own: true}, s,
					func(x, s *t.Node) *t.Node { return t.DropoutMask(x, s, 0.55) }))
		}
	}
	return append(cs,
		binary("dropout", in(4, 5000), seed(7), func(x, s *t.Node) *t.Node { return t.Dropout(x, s, 0.3) }).in(t.F32, t.F16, t.BF16),
		binary("dropout_mask", in(3, 700), seed(11), func(x, s *t.Node) *t.Node { return t.DropoutMask(x, s, 0.5) }).in(allTypes...),
		grad(binary("dropout_grad", in(4, 5), seed(7), func(x, s *t.Node) *t.Node { return t.Dropout(x, s, 0.4) })),
		Case{Name: "assign", Inputs: []Input{{Shape: t.Shape{3, 5}, Var: true}, in(3, 5)},
			Build: func(x []*t.Node) *t.Node { return t.Assign(x[0], x[1]) }, DTypes: allTypes},
		Case{Name: "sgd_plain", Inputs: sgdInputs, Build: sgd(t.SGDAttr{}), DTypes: []t.DType{t.F32, t.F16, t.BF16}},
		Case{Name: "sgd_momentum_weight_decay", Inputs: sgdInputs, Build: sgd(t.SGDAttr{Momentum: 0.9, WeightDecay: 1e-2})},
		Case{Name: "sgd_nesterov_weight_decay", Inputs: sgdInputs, Build: sgd(t.SGDAttr{Momentum: 0.9, WeightDecay: 1e-4, Nesterov: true})},
		Case{Name: "adam", Inputs: adamInputs(nil, positive), Build: adam(t.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}), DTypes: []t.DType{t.F32, t.F16, t.BF16}},
		Case{Name: "adam_l2_weight_decay", Inputs: adamInputs(nil, positive), Build: adam(t.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1})},
		Case{Name: "adam_l2_weight_decay_first_step", Inputs: firstStep, Build: adam(t.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1})},
		Case{Name: "adamw", Inputs: adamInputs(nil, positive), Build: adam(t.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Decoupled: true})},
		Case{Name: "adamw_first_step", Inputs: firstStep, Build: adam(t.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1, Decoupled: true})},
		// v ≈ 1e-16·(1-β₂): √v̂ is about eps, so eps inside the root would change p by far more than the tolerance.
		Case{Name: "adam_second_moment_near_zero", Inputs: adamInputs(tiny, zero), Build: adam(t.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})},
		Case{Name: "adam_eps_large", Inputs: adamInputs(tiny, zero), Build: adam(t.AdamAttr{Beta1: 0.9, Beta2: 0.99, Eps: 1e-3, WeightDecay: 0.1})},
	)
}
