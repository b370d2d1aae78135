package gradcheck

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Input describes one input of a checked graph.
type Input struct {
	Shape tensor.Shape
	// DType defaults to F32. Integer and bool inputs are fed Values and not checked.
	DType tensor.DType
	// Values, when set, are the input's elements (indices, masks, fixed data);
	// otherwise Gen draws them, or they are uniform in [-1, 1].
	Values []float64
	Gen    func(r *rand.Rand, n int) []float64
	// Fixed excludes a float input from the check (a mask, a constant operand).
	Fixed bool
}

// Case is one gradient check: Build makes the graph's output from the input nodes.
type Case struct {
	Name   string
	Inputs []Input
	Build  func(x []*tensor.Node) *tensor.Node
	Step   float64 // finite-difference step; 0 means 1e-2
	Tol    float64 // tolerance; 0 means 3e-3
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
		draw:
			x := lo + (hi-lo)*r.Float64()
			for _, k := range kinks {
				if math.Abs(x-k) < gap {
					goto draw
				}
			}
			v[i] = x
		}
		return v
	}
}

// Mismatch is one element whose analytic and numeric gradients disagree.
type Mismatch struct {
	Input, Element    int
	Analytic, Numeric float64
}

func (m Mismatch) String() string {
	return fmt.Sprintf("input %d element %d: analytic %.6g, numeric %.6g", m.Input, m.Element, m.Analytic, m.Numeric)
}

// Result is the outcome of a check.
type Result struct {
	Checked    int        // elements compared
	MaxErr     float64    // largest |analytic - numeric| / (1 + |numeric|)
	Mismatches []Mismatch // elements beyond the tolerance
}

// Check runs c on rt with inputs drawn from seed and compares every element of the
// gradient of each float, non-fixed input with its central difference. It returns an
// error when the graph cannot be built, compiled or run.
func Check(rt *runtime.Runtime, c Case, seed uint64) (Result, error) {
	rng := rand.New(rand.NewPCG(seed, 0x6772616463686b))
	step, tol := c.Step, c.Tol
	if step == 0 {
		step = 1e-2
	}
	if tol == 0 {
		tol = 3e-3
	}
	g := tensor.NewGraph()
	nodes := make([]*tensor.Node, len(c.Inputs))
	feeds := map[*tensor.Node]*tensor.Tensor{}
	var wrt []*tensor.Node
	var wrtIndex []int
	for i, in := range c.Inputs {
		t, err := inputTensor(in, rng)
		if err != nil {
			return Result{}, fmt.Errorf("%s: input %d: %w", c.Name, i, err)
		}
		nodes[i] = g.Input(fmt.Sprintf("x%d", i), t.DType(), t.Shape()...)
		feeds[nodes[i]] = t
		if t.DType().IsFloat() && !in.Fixed {
			wrt = append(wrt, nodes[i])
			wrtIndex = append(wrtIndex, i)
		}
	}
	var out, seedNode *tensor.Node
	var grads []*tensor.Node
	if err := tensor.Catch(func() {
		out = c.Build(nodes)
		seedNode = g.Input("seed", out.DType(), out.Shape()...)
		grads = tensor.GradWithSeed([]*tensor.Node{out}, []*tensor.Node{seedNode}, wrt)
	}); err != nil {
		return Result{}, fmt.Errorf("%s: building: %w", c.Name, err)
	}
	seedT, err := tensor.FromFloat64sAs(out.DType(), out.Shape(), Uniform(-1, 1)(rng, out.Shape().Size()))
	if err != nil {
		return Result{}, err
	}
	feeds[seedNode] = seedT
	backward, err := rt.Compile(append([]*tensor.Node{out}, grads...))
	if err != nil {
		return Result{}, fmt.Errorf("%s: compiling the gradient: %w", c.Name, err)
	}
	defer backward.Free()
	res, err := backward.Run(feedsFor(backward, feeds))
	if err != nil {
		return Result{}, fmt.Errorf("%s: running the gradient: %w", c.Name, err)
	}
	forward, err := rt.Compile([]*tensor.Node{out})
	if err != nil {
		return Result{}, fmt.Errorf("%s: compiling the forward graph: %w", c.Name, err)
	}
	defer forward.Free()
	forwardFeeds := feedsFor(forward, feeds)
	weights := seedT.Float64s()
	objective := func() (float64, error) {
		o, err := forward.Run(forwardFeeds)
		if err != nil {
			return 0, err
		}
		s := 0.0
		for i, v := range o[0].Float64s() {
			s += weights[i] * v
		}
		return s, nil
	}
	var r Result
	for k, node := range wrt {
		x := feeds[node]
		analytic := res[1+k].Float64s()
		for i := range analytic {
			orig := x.Float(i)
			x.SetFloat(i, orig+step)
			hi := x.Float(i)
			fHi, err := objective()
			if err != nil {
				return r, fmt.Errorf("%s: forward run: %w", c.Name, err)
			}
			x.SetFloat(i, orig-step)
			lo := x.Float(i)
			fLo, err := objective()
			if err != nil {
				return r, fmt.Errorf("%s: forward run: %w", c.Name, err)
			}
			x.SetFloat(i, orig)
			numeric := (fHi - fLo) / (hi - lo)
			e := math.Abs(analytic[i]-numeric) / (1 + math.Abs(numeric))
			if math.IsNaN(e) {
				e = math.Inf(1)
			}
			r.Checked++
			r.MaxErr = max(r.MaxErr, e)
			if e > tol {
				r.Mismatches = append(r.Mismatches, Mismatch{wrtIndex[k], i, analytic[i], numeric})
			}
		}
	}
	return r, nil
}

// feedsFor keeps the feeds of the inputs exe reads (the runtime rejects others). The
// tensors are shared, so perturbing one changes what every executable is fed.
func feedsFor(exe *runtime.Executable, feeds map[*tensor.Node]*tensor.Tensor) map[*tensor.Node]*tensor.Tensor {
	out := map[*tensor.Node]*tensor.Tensor{}
	for _, n := range exe.Inputs() {
		out[n] = feeds[n]
	}
	return out
}

// inputTensor makes the host tensor of one input.
func inputTensor(in Input, rng *rand.Rand) (*tensor.Tensor, error) {
	n := in.Shape.Size()
	vals := in.Values
	switch {
	case vals != nil:
		if len(vals) != n {
			return nil, fmt.Errorf("%d values for shape %v", len(vals), in.Shape)
		}
	case in.Gen != nil:
		vals = in.Gen(rng, n)
	default:
		vals = Uniform(-1, 1)(rng, n)
	}
	return tensor.FromFloat64sAs(in.DType, in.Shape, vals)
}
