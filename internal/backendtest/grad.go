package backendtest

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/gml-dev/gml/tensor"
)

// Gradients are checked in two steps. The rules (tensor.Grad) are checked in float64:
// the reference evaluates the backward graph, and central differences of the
// reference's forward graph give the numeric gradient, so no single-precision rounding
// blurs the comparison and a tolerance of 1e-5 holds. The backends are then checked
// like any other case: GradInstance's backward graph runs on each and is compared with
// the reference.

// wrtInputs lists the indices of the float inputs a gradient is taken for.
func (in *Instance) wrtInputs() []int {
	var idx []int
	for i, x := range in.Case.Inputs {
		if !x.Fixed && !x.Var && in.Nodes[i].DType().IsFloat() {
			idx = append(idx, i)
		}
	}
	return idx
}

// GradInstance builds the case in F32 with, as outputs, the vector-Jacobian products
// of its output with a random seed (a fed input), one per differentiated input. Its
// name is "grad:" and the case's.
func (c Case) GradInstance() (*Instance, error) {
	in, err := c.Instantiate(tensor.F32)
	if err != nil {
		return nil, err
	}
	in.Name = "grad:" + in.Name
	out := in.Outputs[0]
	var wrt []*tensor.Node
	for _, i := range in.wrtInputs() {
		wrt = append(wrt, in.Nodes[i])
	}
	if len(wrt) == 0 {
		return nil, fmt.Errorf("%s: no input to differentiate", in.Name)
	}
	seed := out.Graph().Input("seed", out.DType(), out.Shape()...)
	t, err := tensor.FromFloat64sAs(out.DType(), out.Shape(), Uniform(-1, 1)(seedRNG(in.Name), out.Shape().Size()))
	if err != nil {
		return nil, err
	}
	in.Feeds[seed] = t
	in.of = out
	if err := tensor.Catch(func() {
		in.Outputs = tensor.GradWithSeed([]*tensor.Node{out}, []*tensor.Node{seed}, wrt)
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	in.loose = 10
	return in, nil
}

// Mismatch is one element whose analytic and numeric gradients disagree.
type Mismatch struct {
	Input, Element    int
	Analytic, Numeric float64
}

func (m Mismatch) String() string {
	return fmt.Sprintf("input %d element %d: analytic %.9g, numeric %.9g", m.Input, m.Element, m.Analytic, m.Numeric)
}

// GradResult is the outcome of a rule check.
type GradResult struct {
	Checked    int        // elements compared
	MaxErr     float64    // largest |analytic - numeric| / (1 + |numeric|)
	Mismatches []Mismatch // elements beyond the tolerance
}

// CheckRules compares, in float64, the gradient rules' vector-Jacobian product of the
// case's output with central differences of ⟨seed, output⟩.
func (c Case) CheckRules() (GradResult, error) {
	var r GradResult
	gi, err := c.GradInstance()
	if err != nil {
		return r, err
	}
	step, tol := c.GradStep, c.GradTol
	if step == 0 {
		step = 1e-5
	}
	if tol == 0 {
		tol = 1e-5
	}
	feeds := map[*tensor.Node]*Array{}
	var seed *Array
	for n, t := range gi.Feeds {
		feeds[n] = FromTensor(t)
		if n.Name() == "seed" {
			seed = feeds[n]
		}
	}
	ip := NewInterpreter()
	ip.ExactF32 = true
	analytic, err := ip.Eval(gi.Outputs, feeds)
	if err != nil {
		return r, fmt.Errorf("%s: %w", gi.Name, err)
	}
	forward := gi.of
	objective := func() (float64, error) {
		fip := NewInterpreter()
		fip.ExactF32 = true
		o, err := fip.Eval([]*tensor.Node{forward}, feeds)
		if err != nil {
			return 0, err
		}
		s := 0.0
		for i, v := range o[0].Data {
			s += seed.Data[i] * v
		}
		return s, nil
	}
	for k, i := range gi.wrtInputs() {
		x := feeds[gi.Nodes[i]]
		for e := range x.Data {
			orig := x.Data[e]
			x.Data[e] = orig + step
			hi, err := objective()
			if err != nil {
				return r, err
			}
			x.Data[e] = orig - step
			lo, err := objective()
			if err != nil {
				return r, err
			}
			x.Data[e] = orig
			numeric := (hi - lo) / (2 * step)
			a := analytic[k].Data[e]
			d := math.Abs(a-numeric) / (1 + math.Abs(numeric))
			if math.IsNaN(d) {
				d = math.Inf(1)
			}
			r.Checked++
			r.MaxErr = max(r.MaxErr, d)
			if d > tol {
				r.Mismatches = append(r.Mismatches, Mismatch{i, e, a, numeric})
			}
		}
	}
	return r, nil
}

// seedRNG is a random stream seeded by a name.
func seedRNG(name string) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprint(h, name)
	return rand.New(rand.NewPCG(h.Sum64(), 0x6261636b656e64))
}
