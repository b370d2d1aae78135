package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gml-dev/gml/tensor"
)

// Input describes one input of a case.
type Input struct {
	Shape tensor.Shape
	// DType is the input's dtype when Own is set (indices, masks, seeds); otherwise
	// the input takes the dtype the case runs in.
	DType tensor.DType
	Own   bool
	// Values, when set, are the input's elements; otherwise Gen draws them, or they are
	// uniform in [-1, 1] (floats), whole numbers in [-20, 20] (integers), 0 or 1 (bool).
	Values []float64
	Gen    func(r *rand.Rand, n int) []float64
	// Fixed keeps a float input out of the gradient check (a mask, a constant operand).
	Fixed bool
	// Var makes the input a variable (Graph.Var) rather than a fed input, for the
	// in-place ops; its value after the run is compared too.
	Var bool
}

// Case is one test of one op: the graph Build makes from the inputs, run on every
// backend and compared with the float64 reference (Interpreter), in each of DTypes.
type Case struct {
	Name   string
	Inputs []Input
	Build  func(x []*tensor.Node) *tensor.Node
	// DTypes are the dtypes the case runs in (the dtype of every input that does not
	// fix its own); empty means F32 only.
	DTypes []tensor.DType
	// Tol bounds |got - want| <= Tol·(1 + |want|) for F32 results: 0 means 1e-5.
	// Half-precision results get at least 2e-3 (F16) and 1.6e-2 (BF16); integer and
	// bool results must be exact; quantised ones are compared decoded, within Tol. A NaN or an infinity must match the reference's.
	Tol float64
	// Grad also checks the gradient: the rules against central differences of the
	// reference, and the backward graph on every backend against the reference.
	Grad bool
	// GradStep is the finite-difference step (0 means 1e-5); GradTol the tolerance of
	// |analytic - numeric| <= GradTol·(1 + |numeric|) (0 means 1e-5).
	GradStep, GradTol float64
	// Decline, when set, says why a backend with a kernel for the op may still run
	// this case on the CPU (a shape or size its kernels do not cover).
	Decline string
}

// RunDTypes is the dtypes the case runs in: DTypes, or F32.
func (c Case) RunDTypes() []tensor.DType {
	if len(c.DTypes) == 0 {
		return []tensor.DType{tensor.F32}
	}
	return c.DTypes
}

// tolerance is the case's tolerance for a result of dtype dt.
func (c Case) tolerance(dt tensor.DType) float64 {
	tol := c.Tol
	if tol == 0 {
		tol = 1e-5
	}
	switch dt {
	case tensor.F16:
		return max(tol, 2e-3)
	case tensor.BF16:
		return max(tol, 1.6e-2)
	case tensor.F32:
		return tol
	}
	if dt.IsQuantized() {
		return tol // decoded in f32 by the backends, in float64 by the reference
	}
	return 0
}

// Instance is a case built in one dtype: its graph, outputs and input values.
type Instance struct {
	Case    Case
	DType   tensor.DType
	Name    string // "exp/f32"
	Outputs []*tensor.Node
	Nodes   []*tensor.Node // one per input
	Feeds   map[*tensor.Node]*tensor.Tensor
	Vars    []*tensor.Variable
	// Under is the op under test: that of the case's output (its first, for a gradient).
	Under tensor.Op
	// loose scales the case's tolerance: backward graphs chain more ops.
	loose float64
	of    *tensor.Node // a gradient instance: the output it differentiates
}

// tolerance is the instance's tolerance for a result of dtype dt.
func (in *Instance) tolerance(dt tensor.DType) float64 { return in.loose * in.Case.tolerance(dt) }

// Instantiate builds the case's graph in dtype dt with inputs drawn from a stream
// seeded by the case's name, so every backend sees the same values.
func (c Case) Instantiate(dt tensor.DType) (*Instance, error) {
	rng := seedRNG(c.Name + "/" + dt.String())
	in := &Instance{Case: c, DType: dt, Name: c.Name + "/" + dt.String(), Feeds: map[*tensor.Node]*tensor.Tensor{}, loose: 1}
	g := tensor.NewGraph()
	for i, x := range c.Inputs {
		t, err := x.tensor(dt, rng)
		if err != nil {
			return nil, fmt.Errorf("%s: input %d: %w", in.Name, i, err)
		}
		var n *tensor.Node
		if x.Var {
			v := tensor.NewVariable(fmt.Sprint("v", i), t)
			in.Vars = append(in.Vars, v)
			n = g.Var(v)
		} else {
			n = g.Input(fmt.Sprint("x", i), t.DType(), t.Shape()...)
			in.Feeds[n] = t
		}
		in.Nodes = append(in.Nodes, n)
	}
	var out *tensor.Node
	if err := tensor.Catch(func() { out = c.Build(in.Nodes) }); err != nil {
		return nil, fmt.Errorf("%s: building: %w", in.Name, err)
	}
	in.Outputs = []*tensor.Node{out}
	in.Under = out.Op()
	return in, nil
}

// dtypeOf is the dtype of input x in a case running in dt.
func (x Input) dtypeOf(dt tensor.DType) tensor.DType {
	if x.Own {
		return x.DType
	}
	return dt
}

// tensor draws the input's host tensor.
func (x Input) tensor(dt tensor.DType, rng *rand.Rand) (*tensor.Tensor, error) {
	dt = x.dtypeOf(dt)
	n := x.Shape.Size()
	vals := x.Values
	switch {
	case vals != nil:
		if len(vals) != n {
			return nil, fmt.Errorf("%d values for shape %v", len(vals), x.Shape)
		}
	case x.Gen != nil:
		vals = x.Gen(rng, n)
	case dt == tensor.Bool:
		vals = Ints(0, 1)(rng, n)
	case dt.IsInt():
		vals = Ints(-20, 20)(rng, n)
	default:
		vals = Uniform(-1, 1)(rng, n)
	}
	if dt.IsQuantized() {
		f32, err := tensor.FromFloat64sAs(tensor.F32, x.Shape, vals)
		if err != nil {
			return nil, err
		}
		return f32.Quantize(dt)
	}
	return tensor.FromFloat64sAs(dt, x.Shape, vals)
}

// Uniform draws values uniformly from [lo, hi].
func Uniform(lo, hi float64) func(r *rand.Rand, n int) []float64 {
	return func(r *rand.Rand, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = lo + (hi-lo)*r.Float64()
		}
		return v
	}
}

// Ints draws whole numbers uniformly from [lo, hi].
func Ints(lo, hi int) func(r *rand.Rand, n int) []float64 {
	return func(r *rand.Rand, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(lo + r.IntN(hi-lo+1))
		}
		return v
	}
}

// Distinct draws n values from [lo, hi] that are pairwise at least (hi-lo)/(2n) apart,
// in random order, for ops whose gradient depends on which element is largest (max,
// min, sort, pooling).
func Distinct(lo, hi float64) func(r *rand.Rand, n int) []float64 {
	return func(r *rand.Rand, n int) []float64 {
		v := make([]float64, n)
		slot := (hi - lo) / float64(n)
		for i := range v {
			v[i] = lo + slot*(float64(i)+0.25+0.5*r.Float64())
		}
		r.Shuffle(n, func(i, j int) { v[i], v[j] = v[j], v[i] })
		return v
	}
}

// Away draws values uniformly from [lo, hi] but at least gap from each of the kinks, for
// piecewise functions (relu at 0, clamp at its limits, hardswish at ±3).
func Away(lo, hi, gap float64, kinks ...float64) func(r *rand.Rand, n int) []float64 {
	return func(r *rand.Rand, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			for {
				x := lo + (hi-lo)*r.Float64()
				near := false
				for _, k := range kinks {
					near = near || math.Abs(x-k) < gap
				}
				if !near {
					v[i] = x
					break
				}
			}
		}
		return v
	}
}

// Reference evaluates the instance in float64: its outputs and, for each of its
// variables, the value after the run.
func (in *Instance) Reference() (outs, vars []*Array, err error) {
	ip := NewInterpreter()
	feeds := map[*tensor.Node]*Array{}
	for n, t := range in.Feeds {
		feeds[n] = FromTensor(t)
	}
	if outs, err = ip.Eval(in.Outputs, feeds); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	for _, v := range in.Vars {
		vars = append(vars, ip.variable(v))
	}
	return outs, vars, nil
}

// Compare checks got against the reference want within tol·(1 + |want|). A NaN or an
// infinity in want must be matched exactly, and got may hold neither where want is
// finite, so a comparison cannot pass on NaN.
func Compare(got *tensor.Tensor, want *Array, tol float64) error {
	if got == nil {
		return fmt.Errorf("no result, want %v%v", want.DType, want.Shape)
	}
	if got.DType() != want.DType || !got.Shape().Equal(want.Shape) {
		return fmt.Errorf("result is %v%v, want %v%v", got.DType(), got.Shape(), want.DType, want.Shape)
	}
	bad, worst := 0, -1
	worstErr := 0.0
	for i, w := range want.Data {
		g := got.Float(i)
		var e float64
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			if !(math.IsNaN(w) && math.IsNaN(g)) && g != w {
				e = math.Inf(1)
			}
		case math.IsNaN(g) || math.IsInf(g, 0):
			e = math.Inf(1)
		default:
			e = math.Abs(g-w) / (1 + math.Abs(w))
		}
		if e > tol {
			bad++
			if e > worstErr || worst < 0 {
				worst, worstErr = i, e
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d elements beyond tolerance %.3g; the worst, element %d (at %v): %v, want %v",
			bad, len(want.Data), tol, worst, unflat(worst, want.Shape), got.Float(worst), want.Data[worst])
	}
	return nil
}
