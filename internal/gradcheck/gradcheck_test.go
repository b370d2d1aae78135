package gradcheck

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gml-dev/gml/runtime"
	_ "github.com/gml-dev/gml/runtime/cpu"
	"github.com/gml-dev/gml/tensor"
)

func cpuRuntime(t *testing.T) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(runtime.Device("cpu"))
	if err != nil {
		t.Fatalf("opening the CPU runtime: %v", err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func allCases() []Case {
	var cs []Case
	for _, family := range [][]Case{elementwiseCases(), reductionCases(), matmulCases(), layoutCases(),
		convCases(), normCases(), compositeCases(), secondOrderCases(), customCases(), ssmCases()} {
		cs = append(cs, family...)
	}
	return cs
}

func TestGradients(t *testing.T) {
	rt := cpuRuntime(t)
	for _, c := range allCases() {
		t.Run(c.Name, func(t *testing.T) {
			// Three draws of inputs and seed weights per case.
			for seed := uint64(1); seed <= 3; seed++ {
				res, err := Check(rt, c, seed)
				if err != nil {
					t.Fatal(err)
				}
				if res.Checked == 0 {
					t.Fatal("no gradient element was compared")
				}
				t.Logf("seed %d: %d elements, largest relative error %.2g", seed, res.Checked, res.MaxErr)
				for i, m := range res.Mismatches {
					if i == 5 {
						t.Errorf("seed %d: ... %d mismatches in all", seed, len(res.Mismatches))
						break
					}
					t.Errorf("seed %d: %v", seed, m)
				}
			}
		})
	}
}

// TestEveryDifferentiableOpIsChecked builds every case and requires that each op with a
// gradient rule appears in at least one of them, so a new op cannot go unchecked.
func TestEveryDifferentiableOpIsChecked(t *testing.T) {
	seen := map[tensor.Op]bool{}
	for _, c := range allCases() {
		g := tensor.NewGraph()
		nodes := make([]*tensor.Node, len(c.Inputs))
		for i, in := range c.Inputs {
			nodes[i] = g.Input("x", in.DType, in.Shape...)
		}
		if err := tensor.Catch(func() { c.Build(nodes) }); err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		for _, n := range g.Nodes() {
			seen[n.Op()] = true
		}
	}
	var missing []string
	for op := tensor.Op(1); int(op) < tensor.NumOps; op++ {
		if tensor.Differentiable(op) && !seen[op] {
			missing = append(missing, op.String())
		}
	}
	if len(missing) > 0 {
		t.Errorf("ops with a gradient rule but no gradient check: %s", strings.Join(missing, ", "))
	}
}

func TestCheckFindsAWrongGradient(t *testing.T) {
	rt := cpuRuntime(t)
	// The harness must flag disagreement: with a step h of 1 the central difference of
	// x⁴ exceeds the derivative 4x³ by the truncation term 4x·h², a relative error of
	// 1/x² whatever the random weight the harness puts on each output element.
	c := Case{Name: "x^4 with a huge step", Inputs: []Input{{Shape: tensor.Shape{3}, Values: []float64{1, 2, 3}}},
		Step: 1, Tol: 1e-3, Build: func(x []*tensor.Node) *tensor.Node { return tensor.Square(tensor.Square(x[0])) }}
	res, err := Check(rt, c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mismatches) != 3 {
		t.Fatalf("want 3 mismatches, got %v", res.Mismatches)
	}
	for i, m := range res.Mismatches {
		x := float64(i + 1)
		if rel := (m.Numeric - m.Analytic) / m.Analytic; math.Abs(rel-1/(x*x)) > 1e-4 {
			t.Errorf("element %d: relative difference %v, want the truncation error %v", i, rel, 1/(x*x))
		}
	}
}

// TestGradientsBuildInHalfPrecision builds every case with F16 instead of F32 inputs and
// differentiates it: each rule must build its gradient in the dtype of its input (Grad
// panics otherwise), so mixed-precision models get F16 gradients.
func TestGradientsBuildInHalfPrecision(t *testing.T) {
	for _, c := range allCases() {
		g := tensor.NewGraph()
		var wrt []*tensor.Node
		nodes := make([]*tensor.Node, len(c.Inputs))
		for i, in := range c.Inputs {
			dt := in.DType
			if dt == tensor.F32 {
				dt = tensor.F16
			}
			nodes[i] = g.Input("x", dt, in.Shape...)
			if dt == tensor.F16 && !in.Fixed {
				wrt = append(wrt, nodes[i])
			}
		}
		err := tensor.Catch(func() {
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

// TestFusedRulesMatchDecompositions differentiates each fused op (softmax, norms,
// attention, RoPE) both by its explicit rule and through the primitives of
// tensor.Decompose, in one graph, and requires the two gradients to agree.
func TestFusedRulesMatchDecompositions(t *testing.T) {
	rt := cpuRuntime(t)
	rng := rand.New(rand.NewPCG(2, 3))
	for _, c := range normCases() {
		t.Run(c.Name, func(t *testing.T) {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			nodes := make([]*tensor.Node, len(c.Inputs))
			var wrt []*tensor.Node
			for i, in := range c.Inputs {
				x, err := inputTensor(in, rng)
				if err != nil {
					t.Fatal(err)
				}
				nodes[i] = g.Input("x", x.DType(), x.Shape()...)
				feeds[nodes[i]] = x
				if x.DType().IsFloat() {
					wrt = append(wrt, nodes[i])
				}
			}
			fused := c.Build(nodes)
			if !tensor.CanDecompose(fused.Op()) {
				t.Fatalf("case output %v is not a fused op", fused)
			}
			seed := g.Input("seed", fused.DType(), fused.Shape()...)
			s, err := inputTensor(Input{Shape: fused.Shape()}, rng)
			if err != nil {
				t.Fatal(err)
			}
			feeds[seed] = s
			ruleGrads := tensor.GradWithSeed([]*tensor.Node{fused}, []*tensor.Node{seed}, wrt)
			decGrads := tensor.GradWithSeed([]*tensor.Node{tensor.Decompose(fused)}, []*tensor.Node{seed}, wrt)
			exe, err := rt.Compile(append(ruleGrads, decGrads...))
			if err != nil {
				t.Fatal(err)
			}
			defer exe.Free()
			res, err := exe.Run(feedsFor(exe, feeds))
			if err != nil {
				t.Fatal(err)
			}
			for k := range wrt {
				a, b := res[k].Float64s(), res[len(wrt)+k].Float64s()
				for i := range a {
					if math.Abs(a[i]-b[i]) > 1e-4*(1+math.Abs(b[i])) || math.IsNaN(a[i]) != math.IsNaN(b[i]) {
						t.Errorf("input %d element %d: rule %v, decomposition %v", k, i, a[i], b[i])
					}
				}
			}
		})
	}
}

// TestEmptyDims differentiates graphs with empty tensors: gradients keep the empty
// shapes, and a parameter broadcast against an empty batch gets a zero gradient.
func TestEmptyDims(t *testing.T) {
	rt := cpuRuntime(t)
	cases := []struct {
		name   string
		shapes []tensor.Shape
		build  func(x []*tensor.Node) *tensor.Node
		want   float64 // every element of every non-empty gradient
	}{
		// b's gradient sums over an empty batch: zero.
		{"mul_broadcast", []tensor.Shape{{0, 3}, {3}}, func(x []*tensor.Node) *tensor.Node { return tensor.Mul(x[0], x[1]) }, 0},
		// The non-empty piece gets the seed's ones.
		{"concat", []tensor.Shape{{2, 0}, {2, 3}}, func(x []*tensor.Node) *tensor.Node { return tensor.Concat(1, x[0], x[1]) }, 1},
		{"matmul_empty_inner", []tensor.Shape{{2, 0}, {0, 3}}, func(x []*tensor.Node) *tensor.Node { return tensor.MatMul(x[0], x[1]) }, 0},
		{"sum_empty_axis", []tensor.Shape{{0, 3}}, func(x []*tensor.Node) *tensor.Node { return tensor.Sum(x[0], []int{0}, false) }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			nodes := make([]*tensor.Node, len(c.shapes))
			for i, s := range c.shapes {
				nodes[i] = g.Input("x", tensor.F32, s...)
				feeds[nodes[i]] = tensor.New(tensor.F32, s...)
				for j := 0; j < s.Size(); j++ {
					feeds[nodes[i]].SetFloat(j, float64(j+1))
				}
			}
			out := c.build(nodes)
			grads := tensor.Grad(tensor.Sum(out, nil, false), nodes)
			exe, err := rt.Compile(grads)
			if err != nil {
				t.Fatal(err)
			}
			defer exe.Free()
			res, err := exe.Run(feedsFor(exe, feeds))
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range res {
				if !r.Shape().Equal(c.shapes[i]) {
					t.Errorf("gradient %d has shape %v, want %v", i, r.Shape(), c.shapes[i])
				}
			}
			for _, r := range res {
				for _, v := range r.Float64s() {
					if v != c.want {
						t.Errorf("gradient element %v, want %v", v, c.want)
					}
				}
			}
		})
	}
}
