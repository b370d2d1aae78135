package cpu

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/childtest"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// normResidualCase is a transformer block's norm: its ∂x and the residual's gradient
// add up into the gradient of h, whose column sum is b's gradient. Folded: the sums of
// gamma, beta and b, and the add.
var normResidualCase = fusionCase{"layer_norm_residual_bias_grads", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
	x, b, gamma, beta, gy := in(n, 2, 48), in(48), in(48), in(48), in(n, 2, 48)
	h := tensor.Add(x, b)
	y := tensor.Add(tensor.LayerNorm(h, gamma, beta, []int{-1}, 1e-5), h)
	return append([]*tensor.Node{y}, tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, b, gamma, beta})...)
}}

// colSumCases are graphs whose column sums (bias gradients) and residual adds fused
// steps take: folds is how many (-1: not checked), and share (optional) forces buffer
// sharing, which a fold must respect or refuse.
var colSumCases = []struct {
	fusionCase
	folds int // from 7 rows on (a Sum over one row is no column sum)
	share func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node
}{
	{fusionCase{"dense_relu_bias_grad", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, b, gy := in(n, 5, 40), in(40), in(n, 5, 40)
		y := tensor.Relu(tensor.Add(x, b))
		return tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, b})
	}}, 1, nil},
	{fusionCase{"dense_gelu_bias_grad", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, b, gy := in(n, 3, 64), in(64), in(n, 3, 64)
		y := tensor.Gelu(tensor.Add(x, b), tensor.GeluErf)
		return tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, b})
	}}, 1, nil},
	{fusionCase{"layer_norm_grads", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, gamma, beta, gy := in(n, 2, 48), in(48), in(48), in(n, 2, 48)
		y := tensor.LayerNorm(x, gamma, beta, []int{-1}, 1e-5)
		return tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, gamma, beta})
	}}, 2, nil},
	{normResidualCase, 4, nil},
	{fusionCase{"layer_norm_residual_in_group", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		// No affine parameters, so no sums: the residual's add joins the norm's group,
		// which the norm kernel then runs with it.
		x, w, gy := in(n*2, 16), in(16, 48), in(n*2, 48)
		h := tensor.MatMul(x, w)
		y := tensor.Add(tensor.LayerNorm(h, nil, nil, []int{-1}, 1e-5), h)
		return tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, w})
	}}, 0, nil},
	residualShared("residual_sum_in_gy", func(nodes []*tensor.Node) *tensor.Node { return nodes[4] }),
	residualShared("residual_sum_in_x", func(nodes []*tensor.Node) *tensor.Node { return nodes[0] }),
	residualShared("residual_sum_in_gy_xhat", func(nodes []*tensor.Node) *tensor.Node {
		// The product gy·x̂ (∂gamma's summand): the Mul of gy and a Mul.
		for _, n := range nodes {
			if n.Op() == tensor.OpMul && n.Shape().Size() > 48 && (n.Input(0) == nodes[4] && n.Input(1).Op() == tensor.OpMul ||
				n.Input(1) == nodes[4] && n.Input(0).Op() == tensor.OpMul) {
				return n
			}
		}
		panic("no gy·x̂")
	}),
	{fusionCase{"layer_norm_residual_gy_sum_after_add", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		// No beta: gy's column sum is built after the gradients, so it comes after the
		// residual's add in the node order; the kernel still folds it (reading each block
		// of gy before it writes the block) with gamma's sum and the add. The add cannot
		// take gy's memory here: the scheduler gives a buffer to a node only once every
		// reader of the value in it has run, and this sum reads gy after the add.
		x, gamma, gy := in(n, 2, 48), in(48), in(n, 2, 48)
		y := tensor.Add(tensor.LayerNorm(x, gamma, nil, []int{-1}, 1e-5), x)
		grads := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, gamma})
		return append(grads, tensor.Sum(gy, []int{0, 1}, false))
	}}, 3, nil},
	{fusionCase{"rms_norm_grads", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, gamma, gy := in(n, 33), in(33), in(n, 33)
		y := tensor.RMSNorm(x, gamma, []int{-1}, 1e-6)
		return tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, gamma})
	}}, 1, nil},
	{fusionCase{"layer_norm_statistic_read_outside", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		// The reciprocal deviation is an output too: the norm kernel, which keeps it in
		// scratch, must refuse the group (and so folds no sums).
		x, gamma, beta, gy := in(n, 2, 48), in(48), in(48), in(n, 2, 48)
		y := tensor.LayerNorm(x, gamma, beta, []int{-1}, 1e-5)
		grads := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, gamma, beta})
		return append(grads, byOp(graphOf(grads...), tensor.OpRsqrt))
	}}, 0, nil},
	{fusionCase{"sum_memory_used_between", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		// The sum's buffer is that of a node between the group and the sum: writing the
		// sum at the group's place would be overwritten.
		x, gy, z := in(n, 40), in(n, 40), in(40)
		w := tensor.Where(tensor.Less(x, gy), gy, x)
		e := tensor.Exp(z)
		return []*tensor.Node{w, e, tensor.Sum(w, []int{0}, true)}
	}}, 0, func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node {
		return map[*tensor.Node]*tensor.Node{byOp(nodes, tensor.OpSum): byOp(nodes, tensor.OpExp)}
	}},
	{fusionCase{"layer_norm_gy_xhat_read_elsewhere", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		// gamma's summand gy·x̂ also read by a transpose: the norm kernel folds its sum
		// but must still write it.
		x, gamma, beta, gy := in(n, 2, 48), in(48), in(48), in(n, 2, 48)
		y := tensor.LayerNorm(x, gamma, beta, []int{-1}, 1e-5)
		grads := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, gamma, beta})
		for _, m := range graphOf(grads...) {
			if m.Op() == tensor.OpMul && m.Shape().Equal(gy.Shape()) && (m.Input(0) == gy && m.Input(1).Op() == tensor.OpMul ||
				m.Input(1) == gy && m.Input(0).Op() == tensor.OpMul) {
				return append(grads, tensor.Transpose(m, 0, 2))
			}
		}
		panic("no gy·x̂")
	}}, -1, nil},
	{fusionCase{"sum_of_value_read_elsewhere", func(g *tensor.Graph, in func(...int) *tensor.Node, n int) []*tensor.Node {
		x, gy, z := in(n, 40), in(n, 40), in(40)
		w := tensor.Where(tensor.Less(x, gy), gy, x)
		e := tensor.Mul(w, z)
		return []*tensor.Node{e, tensor.Sum(w, []int{0}, true)}
	}}, 1, nil},
}

// residualShared is the norm-with-residual case with the residual sum's output in the
// buffer of the node of that picks (whatever the scheduler would do): the fused steps
// must give the unfused graph's bits, taking what they can (folds not checked).
func residualShared(name string, of func(nodes []*tensor.Node) *tensor.Node) struct {
	fusionCase
	folds int
	share func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node
} {
	c := struct {
		fusionCase
		folds int
		share func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node
	}{normResidualCase, -1, nil}
	c.name = name
	c.share = func(nodes []*tensor.Node) map[*tensor.Node]*tensor.Node {
		var sum *tensor.Node // the Add of ∂x and gy: its output is b's summand
		for _, n := range nodes {
			if n.Op() == tensor.OpAdd && n.Shape().Size() > 48 && (n.Input(0) == nodes[4] || n.Input(1) == nodes[4]) {
				sum = n
			}
		}
		return map[*tensor.Node]*tensor.Node{sum: of(nodes)}
	}
	return c
}

// TestColumnSumFolding checks that fused steps fold the column sums they should, no
// others, and give the unfused graph's bits, on ragged sizes and (through a second
// process) with GML_SIMD=go; TestSplitsAtEveryThreadCount reruns it at other thread
// counts.
func TestColumnSumFolding(t *testing.T) {
	defer func(old bool) { absorbLater = old }(absorbLater)
	for _, c := range colSumCases {
		for _, n := range []int{1, 7, 33, 257, 1100} {
			_, want := runFusionCase(t, c.fusionCase, n, false, c.share)
			absorbLater = false
			stepsNoFold, _ := runFusionCase(t, c.fusionCase, n, true, c.share)
			absorbLater = true
			steps, got := runFusionCase(t, c.fusionCase, n, true, c.share)
			if c.folds >= 0 && stepsNoFold-steps != c.folds && (n > 1 || stepsNoFold != steps) {
				t.Errorf("%s n=%d: %d sums folded, want %d", c.name, n, stepsNoFold-steps, c.folds)
			}
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("%s n=%d (%v): output %d element %d = %v fused, %v unfused", c.name, n, vec.Active(), i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
	if os.Getenv("GML_SIMD") == "" && vec.Active() != vec.Go {
		if out, err := childtest.Run("^TestColumnSumFolding$", "GML_SIMD=go"); err != nil {
			t.Errorf("with GML_SIMD=go: %v\n%s", err, out)
		}
	}
}

// TestFoldRuns checks that a block's column sums come out the same bit for bit however
// foldRuns is given its rows (all at once, row by row, in stretches cutting the runs),
// on ragged row and column counts, and within the float32 runs' error bound of a
// float64 sum.
func TestFoldRuns(t *testing.T) {
	for _, cols := range []int{1, 7, 33, 257} {
		for _, rows := range []int{1, 7, 33, 257} {
			r := rand.New(rand.NewPCG(uint64(cols), uint64(rows)))
			x := make([]float32, rows*cols)
			for i := range x {
				x[i] = float32(r.NormFloat64() * 100)
			}
			fold := func(cut int) []float64 {
				a, p := make([]float64, cols), make([]float32, cols)
				for k := 0; k < rows; k += cut {
					foldRuns(a, p, x[k*cols:], k, min(k+cut, rows), rows, cols)
				}
				return a
			}
			want := fold(rows)
			for _, cut := range []int{1, 5, 16, 17} {
				got := fold(cut)
				for j := range got {
					if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
						t.Fatalf("cols=%d rows=%d in stretches of %d: column %d = %v, want %v", cols, rows, cut, j, got[j], want[j])
					}
				}
			}
			for j := range want {
				exact, abs := 0.0, 0.0
				for k := range rows {
					v := float64(x[k*cols+j])
					exact, abs = exact+v, abs+math.Abs(v)
				}
				if math.Abs(want[j]-exact) > float64(sumRun)*0x1p-24*abs {
					t.Errorf("cols=%d rows=%d: column %d = %v, want %v", cols, rows, j, want[j], exact)
				}
			}
		}
	}
}
