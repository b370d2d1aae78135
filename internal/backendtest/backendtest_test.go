package backendtest

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	_ "github.com/gml-dev/gml/backends"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// instances builds every instance of the table once: the forward cases in each of
// their dtypes and the backward graphs of the gradient cases, with their references.
type built struct {
	in         *Instance
	outs, vars []*Array
}

func buildAll(t *testing.T) []built {
	t.Helper()
	var all []built
	for _, c := range AllCases() {
		var ins []*Instance
		for _, dt := range c.RunDTypes() {
			in, err := c.Instantiate(dt)
			if err != nil {
				t.Fatal(err)
			}
			ins = append(ins, in)
		}
		if c.Grad {
			gi, err := c.GradInstance()
			if err != nil {
				t.Fatal(err)
			}
			ins = append(ins, gi)
		}
		for _, in := range ins {
			outs, vars, err := in.Reference()
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, built{in, outs, vars})
		}
	}
	return all
}

// backendNames lists the registered backends, the CPU first: the others are compared
// with its results as well as with the reference.
func backendNames() []string {
	names := runtime.Registered()
	sort.SliceStable(names, func(i, j int) bool { return names[i] == "cpu" })
	return names
}

// TestCases runs the whole case table on every registered backend that has a device
// here (the CPU always; Vulkan where a loader and a device exist) and compares each
// result with the float64 reference and with the CPU backend's. A case whose op the
// backend leaves to the CPU (a dtype or shape its kernels do not take) is reported as
// SKIP with the reason, after its results are checked, so a run's skips list what this
// machine did not cover.
func TestCases(t *testing.T) {
	all := buildAll(t)
	cpuResults := map[string]*Result{}
	for _, name := range backendNames() {
		t.Run(name, func(t *testing.T) {
			rt, err := runtime.New(runtime.Device(name))
			if err != nil {
				t.Skipf("backend %s has no device on this machine: %v", name, err)
			}
			defer rt.Close()
			t.Logf("%s: %s", rt.Backend(), rt.DeviceInfo().Name)
			onDevice, notOnDevice := 0, map[string]int{}
			for _, b := range all {
				t.Run(b.in.Name, func(t *testing.T) {
					r, err := b.in.Run(rt)
					if err != nil {
						t.Fatal(err)
					}
					var cpu *Result
					if name == "cpu" {
						cpuResults[b.in.Name] = r
					} else {
						cpu = cpuResults[b.in.Name]
					}
					if err := b.in.Check(r, b.outs, b.vars, cpu); err != nil {
						t.Fatal(err)
					}
					if n := b.in.UnexpectedFallback(r); n != nil {
						t.Fatalf("%v ran on the CPU although %s has a %s shader for it", n, rt.Backend(), n.Op().GPU().Shader)
					}
					if b.in.FellBack(r) {
						key := fmt.Sprintf("%v(%v)", b.in.Under, fallbackDType(r, b.in.Under))
						notOnDevice[key]++
						t.Skipf("%s runs %s on the CPU (no kernel for that dtype or shape); results checked there", rt.Backend(), key)
					}
					onDevice++
				})
			}
			keys := slices.Sorted(maps.Keys(notOnDevice))
			t.Logf("%s: %d of %d instances passed on the device; ops it left to the CPU: %s", rt.Backend(), onDevice, len(all), strings.Join(keys, ", "))
		})
	}
}

// fallbackDType is the input dtype of the first fallback node of op.
func fallbackDType(r *Result, op tensor.Op) tensor.DType {
	for _, n := range r.Fallbacks {
		if n.Op() == op && len(n.Inputs()) > 0 {
			return n.Input(0).DType()
		}
	}
	return tensor.F32
}

// TestGradientRules checks every gradient case's rules against central differences of
// the float64 reference.
func TestGradientRules(t *testing.T) {
	for _, c := range AllCases() {
		if !c.Grad {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			res, err := c.CheckRules()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d elements, largest relative error %.2g", res.Checked, res.MaxErr)
			for i, m := range res.Mismatches {
				if i == 5 {
					t.Errorf("... %d mismatches in all", len(res.Mismatches))
					break
				}
				t.Error(m)
			}
		})
	}
}

// opsIn returns the ops of the nodes of in's graph and, per op, the dtypes of input 0.
func opsIn(in *Instance, seen map[tensor.Op]tensor.DTypeSet) {
	for _, n := range in.Outputs[0].Graph().Nodes() {
		dt := n.DType()
		if len(n.Inputs()) > 0 {
			dt = n.Input(0).DType()
		}
		seen[n.Op()] |= tensor.DTypes(dt)
	}
}

// TestCoverage requires of the table unique case names, and that every computing op has
// a reference and at least one case, in every dtype the op table says it accepts, and that every op with
// a gradient rule has a gradient case: a new op cannot go untested on any backend.
func TestCoverage(t *testing.T) {
	seen := map[tensor.Op]tensor.DTypeSet{}
	differentiated := map[tensor.Op]bool{}
	names := map[string]bool{}
	for _, c := range AllCases() {
		if names[c.Name] {
			t.Errorf("two cases are named %q", c.Name)
		}
		names[c.Name] = true
		for _, dt := range c.RunDTypes() {
			in, err := c.Instantiate(dt)
			if err != nil {
				t.Fatal(err)
			}
			opsIn(in, seen)
			if c.Grad && dt == tensor.F32 {
				for _, n := range in.Outputs[0].Graph().Nodes() {
					differentiated[n.Op()] = true
				}
			}
		}
	}
	for op := tensor.Op(1); int(op) < tensor.NumOps; op++ {
		if op.Kind() == tensor.KindSource {
			continue
		}
		if !HasReference(op) {
			t.Errorf("%v has no float64 reference (ref_*.go)", op)
		}
		if seen[op] == 0 {
			t.Errorf("%v has no case (a kernel on the CPU%s, but nothing runs it)", op, shaderNote(op))
			continue
		}
		if missing := op.DTypes() &^ seen[op]; missing != 0 {
			t.Errorf("%v accepts %v (op table) but no case runs it in %v", op, op.DTypes(), missing)
		}
		if tensor.Differentiable(op) && !differentiated[op] {
			t.Errorf("%v has a gradient rule but no gradient case", op)
		}
	}
}

func shaderNote(op tensor.Op) string {
	if s := op.GPU().Shader; s != "" {
		return " and " + s + ".comp on the GPU"
	}
	return ""
}

// TestGradientsBuildInHalfPrecision builds every gradient case with F16 instead of F32
// inputs and differentiates it: each rule must build its gradient in the dtype of its
// input (Grad panics otherwise), so mixed-precision models get F16 gradients.
func TestGradientsBuildInHalfPrecision(t *testing.T) {
	for _, c := range AllCases() {
		if !c.Grad {
			continue
		}
		err := tensor.Catch(func() {
			g := tensor.NewGraph()
			var wrt []*tensor.Node
			nodes := make([]*tensor.Node, len(c.Inputs))
			for i, x := range c.Inputs {
				dt := x.dtypeOf(tensor.F16)
				if x.Var {
					nodes[i] = g.Var(tensor.NewVariable("v", tensor.New(dt, x.Shape...)))
				} else {
					nodes[i] = g.Input("x", dt, x.Shape...)
				}
				if dt == tensor.F16 && !x.Fixed && !x.Var {
					wrt = append(wrt, nodes[i])
				}
			}
			out := c.Build(nodes)
			seed := g.Input("seed", out.DType(), out.Shape()...)
			for i, gr := range tensor.GradWithSeed([]*tensor.Node{out}, []*tensor.Node{seed}, wrt) {
				if gr.DType() != tensor.F16 {
					t.Errorf("%s: gradient %d is %v, want f16", c.Name, i, gr.DType())
				}
			}
		})
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}

// TestFusedRulesMatchDecompositions differentiates each fused op's gradient cases both
// by its explicit rule and through its decomposition (tensor.Decompose), in float64,
// and requires the two to agree.
func TestFusedRulesMatchDecompositions(t *testing.T) {
	checked := 0
	for _, c := range AllCases() {
		if !c.Grad {
			continue
		}
		in, err := c.Instantiate(tensor.F32)
		if err != nil {
			t.Fatal(err)
		}
		fused := in.Outputs[0]
		if !tensor.CanDecompose(fused.Op()) {
			continue
		}
		checked++
		t.Run(c.Name, func(t *testing.T) {
			g := fused.Graph()
			var wrt []*tensor.Node
			for _, i := range in.wrtInputs() {
				wrt = append(wrt, in.Nodes[i])
			}
			seed := g.Input("seed", fused.DType(), fused.Shape()...)
			feeds := map[*tensor.Node]*Array{seed: {DType: tensor.F32, Shape: fused.Shape(), Data: Uniform(-1, 1)(seedRNG(c.Name), fused.Shape().Size())}}
			for n, x := range in.Feeds {
				feeds[n] = FromTensor(x)
			}
			var rule, dec []*tensor.Node
			if err := tensor.Catch(func() {
				rule = tensor.GradWithSeed([]*tensor.Node{fused}, []*tensor.Node{seed}, wrt)
				dec = tensor.GradWithSeed([]*tensor.Node{tensor.Decompose(fused)}, []*tensor.Node{seed}, wrt)
			}); err != nil {
				t.Fatal(err)
			}
			ip := NewInterpreter()
			ip.ExactF32 = true
			res, err := ip.Eval(append(rule, dec...), feeds)
			if err != nil {
				t.Fatal(err)
			}
			for k := range rule {
				got := tensor.New(tensor.F32, res[k].Shape...)
				for i, v := range res[k].Data {
					got.SetFloat(i, v)
				}
				if err := Compare(got, res[len(rule)+k], 1e-6); err != nil {
					t.Errorf("input %d: rule against decomposition: %v", k, err)
				}
			}
		})
	}
	if checked == 0 {
		t.Fatal("no gradient case of a fused op")
	}
}

// TestCheckRulesFindsAWrongGradient: the rule check must flag disagreement. With a step
// h of 1, the central difference of x⁴ exceeds the derivative 4x³ by the truncation
// term 4x·h², a relative error of 1/x² whatever the seed weights.
func TestCheckRulesFindsAWrongGradient(t *testing.T) {
	c := Case{Name: "x^4 with a huge step", Inputs: []Input{{Shape: tensor.Shape{3}, Values: []float64{1, 2, 3}}},
		Grad: true, GradStep: 1, GradTol: 1e-3, Build: func(x []*tensor.Node) *tensor.Node { return tensor.Square(tensor.Square(x[0])) }}
	res, err := c.CheckRules()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mismatches) != 3 {
		t.Fatalf("want 3 mismatches, got %v", res.Mismatches)
	}
	for i, m := range res.Mismatches {
		x := float64(i + 1)
		if rel := (m.Numeric - m.Analytic) / m.Analytic; !(math.Abs(rel-1/(x*x)) <= 1e-9) {
			t.Errorf("element %d: relative difference %v, want the truncation error %v", i, rel, 1/(x*x))
		}
	}
}

// TestCompareCannotPassOnNaN: a NaN or an infinity where the reference is finite fails,
// and the reverse too; matching NaNs and infinities pass.
func TestCompareCannotPassOnNaN(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		got, want float64
		ok        bool
	}{
		{1, 1, true}, {nan, 1, false}, {inf, 1, false}, {1, nan, false}, {1, inf, false},
		{nan, nan, true}, {inf, inf, true}, {-inf, inf, false}, {1 + 1e-3, 1, false},
	}
	for _, c := range cases {
		got := tensor.New(tensor.F32, 1)
		got.SetFloat(0, c.got)
		err := Compare(got, &Array{DType: tensor.F32, Shape: tensor.Shape{1}, Data: []float64{c.want}}, 1e-5)
		if (err == nil) != c.ok {
			t.Errorf("got %v, want %v: error %v", c.got, c.want, err)
		}
	}
}

// TestReferenceKnownValues pins the reference itself on values worked out by hand, so
// a bug in it cannot hide a matching bug in a backend.
func TestReferenceKnownValues(t *testing.T) {
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 2, 3)
	p := g.Var(tensor.NewVariable("p", tensor.Scalar(tensor.F32, 1)))
	grad := g.Input("g", tensor.F32)
	m := g.Var(tensor.NewVariable("m", tensor.Scalar(tensor.F32, 0)))
	v := g.Var(tensor.NewVariable("v", tensor.Scalar(tensor.F32, 0)))
	lr, step := g.Scalar(tensor.F32, 0.5), g.Scalar(tensor.I64, 1)
	outs := []*tensor.Node{
		tensor.Softmax(x, 1), tensor.LogSoftmax(x, 1), tensor.Max(x, []int{1}, false), tensor.ArgMax(x, 1, false),
		tensor.MatMulT(x, x, false, true), tensor.CumSum(x, 1, true, true),
	}
	upd := tensor.AdamUpdate(p, grad, m, v, lr, step, tensor.AdamAttr{Beta1: 0.5, Beta2: 0.75, Eps: 0.25})
	ip := NewInterpreter()
	ip.ExactF32 = true
	res, err := ip.Eval(append(outs, upd), map[*tensor.Node]*Array{
		x:    {DType: tensor.F32, Shape: tensor.Shape{2, 3}, Data: []float64{1000, 0, 1000, 1, 2, 3}},
		grad: {DType: tensor.F32, Shape: tensor.Shape{}, Data: []float64{2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e := math.E
	s := 1 + e + e*e
	want := [][]float64{
		{0.5, math.Exp(-1000) / 2, 0.5, 1 / s, e / s, e * e / s},
		{-math.Ln2, -1000 - math.Ln2, -math.Ln2, -math.Log(s), 1 - math.Log(s), 2 - math.Log(s)},
		{1000, 3},
		{0, 2},
		{2e6, 1000 + 3000, 1000 + 3000, 14},
		{1000, 1000, 0, 5, 3, 0},
		// m = 1, v = 1 (bias corrections 2 and 4): p = 1 - 0.5·2/(√4 + 0.25).
		{1 - 1/2.25},
	}
	for i, w := range want {
		for j, wv := range w {
			if d := math.Abs(res[i].Data[j] - wv); !(d <= 1e-12*(1+math.Abs(wv))) {
				t.Errorf("output %d element %d: %v, want %v", i, j, res[i].Data[j], wv)
			}
		}
	}
	if got := ip.Vars[v.Variable()].Data[0]; got != 1 {
		t.Errorf("Adam's second moment %v, want 1", got)
	}
}
