package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/childtest"
	"github.com/gml-dev/gml/tensor"
)

// updateCase is a graph of optimizer updates over parameters of ragged sizes (Adam,
// AdamW and SGD with and without Nesterov), with the nodes of its state whose values
// the test compares.
type updateCase struct {
	nodes   []*tensor.Node
	feeds   map[*tensor.Node][]float32
	updates []*tensor.Node
	state   []*tensor.Node // each update's moments or velocity, updated in place
}

func newUpdateCase(sizes []int) *updateCase {
	g := tensor.NewGraph()
	r := rand.New(rand.NewPCG(7, uint64(len(sizes))))
	c := &updateCase{feeds: map[*tensor.Node][]float32{}}
	// A parameter and its state are variables (the updates require it), a gradient an
	// input; runShared gives each a buffer holding its feed.
	input := func(name string, n int, abs bool) *tensor.Node {
		x := g.Input(name, tensor.F32, n)
		if name != "g" {
			x = g.Var(tensor.NewVariable(name, tensor.New(tensor.F32, n)))
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.Float64() - 0.5)
			if abs {
				v[i] = float32(math.Abs(float64(v[i])))
			}
		}
		c.feeds[x] = v
		c.nodes = append(c.nodes, x)
		return x
	}
	lr := g.Input("lr", tensor.F32)
	step := g.Input("step", tensor.F32)
	c.feeds[lr], c.feeds[step] = []float32{0.01}, []float32{3}
	c.nodes = append(c.nodes, lr, step)
	for k, n := range sizes {
		p, grad := input("p", n, false), input("g", n, false)
		var u *tensor.Node
		switch k % 4 {
		case 0, 1:
			m, v := input("m", n, false), input("v", n, true)
			u = tensor.AdamUpdate(p, grad, m, v, lr, step, tensor.AdamAttr{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8,
				WeightDecay: 0.1, Decoupled: k%4 == 1})
			c.state = append(c.state, m, v)
		default:
			vel := input("vel", n, false)
			u = tensor.SGDUpdate(p, grad, vel, lr, tensor.SGDAttr{Momentum: 0.9, WeightDecay: 0.01, Nesterov: k%4 == 3})
			c.state = append(c.state, vel)
		}
		c.nodes = append(c.nodes, u)
		c.updates = append(c.updates, u)
	}
	return c
}

// reference runs every update in a segment of its own (nothing to fuse) and returns the
// updates' outputs and the state, in the order of run's results.
func (c *updateCase) reference(t *testing.T) [][]float32 {
	var res [][]float32
	var state [][]float32
	for k, u := range c.updates {
		nodes := append(append([]*tensor.Node{}, u.Inputs()...), u)
		outs := []*tensor.Node{u, u.Input(2)}
		if u.Op() == tensor.OpAdamUpdate {
			outs = append(outs, u.Input(3))
		}
		steps, got := runShared(t, nodes, nil, c.feeds, outs...)
		if steps != 1 {
			t.Fatalf("update %d alone: %d steps, want 1", k, steps)
		}
		res = append(res, got[0])
		state = append(state, got[1:]...)
	}
	return append(res, state...)
}

func sameBits(t *testing.T, name string, got, want [][]float32) {
	t.Helper()
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("%s: result %d element %d = %v, want %v (unfused)", name, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// TestUpdateFusion checks that the updates of a segment run as one step and give the
// bits of the unfused updates, on ragged sizes and sizes the threads split.
func TestUpdateFusion(t *testing.T) {
	for _, sizes := range [][]int{{1, 7}, {33, 257, 1, 7}, {257, 40003, 7, 33, 1, 70001, 16, 5}} {
		c := newUpdateCase(sizes)
		want := c.reference(t)
		steps, got := runShared(t, c.nodes, nil, c.feeds, append(c.updates, c.state...)...)
		if steps != 1 {
			t.Errorf("sizes %v: %d steps, want 1 (the fused updates)", sizes, steps)
		}
		sameBits(t, fmt.Sprint("sizes ", sizes), got, want)
	}
}

// TestUpdateFusionHazards checks that updates do not move past a node that reads a
// parameter they update or writes memory they read, and still give the unfused bits,
// the node in between its value of the unfused order (the negated parameter after the
// first update, or the negated input it reads).
func TestUpdateFusionHazards(t *testing.T) {
	sizes := []int{257, 33, 7}
	cases := []struct {
		name  string
		steps int
		// build inserts a node after the first update and returns it with the buffer
		// sharing it needs.
		build func(c *updateCase) (*tensor.Node, map[*tensor.Node]*tensor.Node)
		// negated is what the node negates: an index into the reference's results, or -1
		// for its input's feed.
		negated int
	}{
		{"reads the first update's value", 3, func(c *updateCase) (*tensor.Node, map[*tensor.Node]*tensor.Node) {
			return tensor.Neg(c.updates[0]), nil
		}, 0},
		{"reads the first parameter's memory", 3, func(c *updateCase) (*tensor.Node, map[*tensor.Node]*tensor.Node) {
			return tensor.Neg(c.updates[0].Input(0)), nil
		}, 0},
		{"overwrites the first gradient", 3, func(c *updateCase) (*tensor.Node, map[*tensor.Node]*tensor.Node) {
			n := tensor.Neg(c.updates[1].Input(0)) // 33 values into the first gradient's 257
			return n, map[*tensor.Node]*tensor.Node{n: c.updates[0].Input(1)}
		}, -1},
		{"touches none of them", 2, func(c *updateCase) (*tensor.Node, map[*tensor.Node]*tensor.Node) {
			return tensor.Neg(c.updates[2].Input(1)), nil
		}, -1},
	}
	for _, tc := range cases {
		c := newUpdateCase(sizes)
		want := c.reference(t)
		mid, share := tc.build(c)
		at := 0
		for i, n := range c.nodes {
			if n == c.updates[0] {
				at = i + 1
			}
		}
		nodes := append(append(append([]*tensor.Node{}, c.nodes[:at]...), mid), c.nodes[at:]...)
		steps, got := runShared(t, nodes, share, c.feeds, append(append(c.updates, c.state...), mid)...)
		if steps != tc.steps {
			t.Errorf("%s: %d steps, want %d", tc.name, steps, tc.steps)
		}
		x := c.feeds[mid.Input(0)]
		if tc.negated >= 0 {
			x = want[tc.negated]
		}
		neg := make([]float32, len(x))
		for i, v := range x {
			neg[i] = -v
		}
		sameBits(t, tc.name, got, append(want, neg))
	}
}

// TestUpdateFusionOnEveryPath reruns the fusion tests at several thread counts (the
// chunks of the fused job cut through the updates at other places) and on the Go and
// AVX2 code.
func TestUpdateFusionOnEveryPath(t *testing.T) {
	childtest.Rerun(t, "^TestUpdateFusion", "GML_THREADS=1", "GML_THREADS=2", "GML_THREADS=3",
		"GML_THREADS=5", "GML_THREADS=16", "GML_SIMD=go", "GML_SIMD=avx2")
}

// TestSplitsAtEveryThreadCount reruns the tests of the ops whose split over the
// threads this package chooses (fused groups, copies, reductions, norms) at thread
// counts that cut their work at other places, where a wrong range or a scratch shared
// between chunks would show. (TestColumnReduceRowSplit compares thread counts itself;
// TestStridedCopyPaths takes seconds per process.)
func TestSplitsAtEveryThreadCount(t *testing.T) {
	childtest.Rerun(t, "^(TestElementwiseFusion|TestElementwiseFusionHazards|TestColumnSumFolding|TestGeluGradKernel|TestLayoutKernels|"+
		"TestStridedCopySlices|TestPermuteShortRows|TestReduceKernels|TestNormKernels)$", "GML_THREADS=1", "GML_THREADS=3", "GML_THREADS=5", "GML_THREADS=16")
}
