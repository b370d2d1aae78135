package gradcheck

import (
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
		convCases(), normCases(), compositeCases()} {
		cs = append(cs, family...)
	}
	return cs
}

func TestGradients(t *testing.T) {
	rt := cpuRuntime(t)
	for _, c := range allCases() {
		t.Run(c.Name, func(t *testing.T) {
			res, err := Check(rt, c, 1)
			if err != nil {
				t.Fatal(err)
			}
			if res.Checked == 0 {
				t.Fatal("no gradient element was compared")
			}
			for i, m := range res.Mismatches {
				if i == 5 {
					t.Errorf("... %d mismatches in all", len(res.Mismatches))
					break
				}
				t.Errorf("%v", m)
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
	// The harness must flag disagreement: with a step of 1 the central difference of x⁴
	// exceeds the derivative 4x³ by the truncation term 4x·h² = 4x.
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
		if d := m.Numeric - m.Analytic; d < 4*x-1e-3 || d > 4*x+1e-3 {
			t.Errorf("element %d: numeric - analytic = %v, want the truncation error %v", i, d, 4*x)
		}
	}
}
