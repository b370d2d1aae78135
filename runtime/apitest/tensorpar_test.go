package apitest

import (
	"fmt"
	"testing"

	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// attentionBlock builds x + (multi-head attention of x) with weights wq, wk, wv
// (features x heads·head size) and wo (heads·head size x features), and its training
// step: the mean square of the block's output, plain SGD on the four weights. The
// attention runs in the given layout (the heads permuted first for AttentionBHTD).
func attentionBlock(layout tensor.AttentionLayout) (x *tensor.Node, block, loss *tensor.Node, updates []*tensor.Node, ws []*tensor.Variable) {
	const b, s, dm, h, d = 2, 5, 6, 4, 3
	g := tensor.NewGraph()
	x = g.Input("x", tensor.F32, b, s, dm)
	heads := func(y *tensor.Node) *tensor.Node {
		if layout == tensor.AttentionBTHD {
			return y
		}
		return tensor.Permute(y, 0, 2, 1, 3)
	}
	project := func(w *tensor.Node) *tensor.Node { return heads(tensor.Reshape(tensor.MatMul(x, w), b, s, h, d)) }
	var nodes []*tensor.Node
	for i, name := range []string{"wq", "wk", "wv", "wo"} {
		shape := []int{dm, h * d}
		if name == "wo" {
			shape = []int{h * d, dm}
		}
		v := tensor.NewVariable(name, random(uint64(40+i), shape...))
		ws = append(ws, v)
		nodes = append(nodes, g.Var(v))
	}
	att := tensor.Attention(project(nodes[0]), project(nodes[1]), project(nodes[2]), nil, tensor.AttentionAttr{Causal: true, Layout: layout})
	merged := tensor.Reshape(heads(att), b, s, h*d)
	block = tensor.Add(x, tensor.MatMul(merged, nodes[3]))
	loss = tensor.Mean(tensor.Square(block), nil, false)
	for i, gr := range tensor.Grad(loss, nodes) {
		updates = append(updates, tensor.Assign(nodes[i], tensor.Sub(nodes[i], tensor.MulScalar(gr, 0.1))))
	}
	return x, block, loss, updates, ws
}

// splitHeads is Megatron's split of an attention block: the projections' columns (whole
// heads) and the output projection's rows.
func splitHeads(n *tensor.Node) (int, bool) {
	switch v := n.Variable(); {
	case v == nil:
		return 0, false
	case v.Name() == "wo":
		return 0, true
	default:
		return 1, true
	}
}

// TestTensorParallelAttention splits an attention block's heads across replicas: each
// part projects, attends and projects back its heads; the parts' outputs are summed
// once. Forward passes and training steps give one device's results, the split weights
// read back whole.
func TestTensorParallelAttention(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		for _, c := range []struct {
			parts  int
			layout tensor.AttentionLayout
		}{{2, tensor.AttentionBHTD}, {3, tensor.AttentionBHTD}, {2, tensor.AttentionBTHD}, {3, tensor.AttentionBTHD}} {
			parts := c.parts
			t.Run(fmt.Sprint(parts, " parts ", c.layout), func(t *testing.T) {
				x, block, loss, updates, ws := attentionBlock(c.layout)
				feeds := map[*tensor.Node]*tensor.Tensor{x: random(50, 2, 5, 6)}
				want := single(t, d, []*tensor.Node{block}, feeds)
				m, err := rt.NewMeta(rt.Replicate(d, parts), rt.SplitBy(splitHeads))
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				fwd, err := m.Compile([]*tensor.Node{block})
				if err != nil {
					t.Fatal(err)
				}
				defer fwd.Free()
				if fwd.Phases() != 2 { // the heads' partial sums, then the residual
					t.Errorf("%d phases, want 2", fwd.Phases())
				}
				got, err := fwd.Run(feeds)
				if err != nil {
					t.Fatal(err)
				}
				closeTo(t, "attention block", got[0], want[0], 1e-5)
				if r := fwd.Parts()[parts-1].Ranges["wq"]; r[1] != 12 || r[0]%3 != 0 {
					t.Errorf("last part's columns of wq: %v; want whole heads up to 12", r)
				}

				step := append([]*tensor.Node{loss}, updates...)
				one := runtimeOn(t, d)
				stepBoth(t, one, m, step, 3, func(i int) map[*tensor.Node]*tensor.Tensor {
					return map[*tensor.Node]*tensor.Tensor{x: random(uint64(60+i), 2, 5, 6)}
				}, func(i int, got, want []*tensor.Tensor) {
					closeTo(t, fmt.Sprintf("step %d loss", i), got[0], want[0], 1e-5)
				})
				for _, v := range ws {
					w, _ := one.Read(v)
					got, err := m.Replicas(v)
					if err != nil {
						t.Fatal(err)
					}
					closeTo(t, v.Name()+" after 3 steps", got[0], w, 1e-5)
				}
			})
		}
	})
}

// TestHybridParallel: a meta device of two tensor-parallel groups (each splitting an
// attention block's heads over two replicas) splits the batch between the groups: the
// forward pass and training steps give one device's results, and both groups hold the
// same weights after every step.
func TestHybridParallel(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		x, block, loss, updates, ws := attentionBlock(tensor.AttentionBHTD)
		var groups []*rt.Meta
		for range 2 {
			g, err := rt.NewMeta(rt.Replicate(d, 2), rt.SplitBy(splitHeads))
			if err != nil {
				t.Fatal(err)
			}
			groups = append(groups, g)
		}
		m, err := rt.NewMetaOfGroups(groups)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if len(m.Devices()) != 4 {
			t.Errorf("%v has %d devices; want 4", m, len(m.Devices()))
		}
		one := runtimeOn(t, d)
		step := append([]*tensor.Node{loss, block}, updates...)
		ref, err := one.Compile(step)
		if err != nil {
			t.Fatal(err)
		}
		defer ref.Free()
		train, err := m.Compile(step)
		if err != nil {
			t.Fatal(err)
		}
		defer train.Free()
		for i := range 3 {
			feeds := map[*tensor.Node]*tensor.Tensor{x: random(uint64(70+i), 2, 5, 6)}
			want, err := ref.Run(feeds)
			if err != nil {
				t.Fatal(err)
			}
			got, err := train.Run(feeds)
			if err != nil {
				t.Fatal(err)
			}
			closeTo(t, fmt.Sprintf("step %d loss", i), got[0], want[0], 1e-5)
			closeTo(t, fmt.Sprintf("step %d block", i), got[1], want[1], 1e-5)
			for _, v := range ws {
				w, _ := one.Read(v)
				reps, err := m.Replicas(v)
				if err != nil {
					t.Fatal(err)
				}
				if len(reps) != 2 {
					t.Fatalf("%d replicas of %v; want one per group", len(reps), v)
				}
				for k, r := range reps {
					closeTo(t, fmt.Sprintf("step %d: %v in group %d", i, v, k), r, w, 1e-5)
				}
			}
		}
		if _, ok := train.Parts()[0].Executables[0].(*rt.MetaExecutable); !ok {
			t.Errorf("a group's part runs %T; want a MetaExecutable", train.Parts()[0].Executables[0])
		}
	})
}
