package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// runShared prepares and runs nodes on a fresh backend, every node with its own buffer
// except those share names, whose buffer is that of the node they map to (as the
// scheduler reuses the buffer of a value after its last reader). It returns the step
// count of the program and the outputs' values.
func runShared(t *testing.T, nodes []*tensor.Node, share map[*tensor.Node]*tensor.Node,
	feeds map[*tensor.Node][]float32, outs ...*tensor.Node) (int, [][]float32) {
	t.Helper()
	return runProfiled(t, nil, nodes, share, feeds, outs...)
}

// runProfiled is runShared recording the run in prof (when not nil).
func runProfiled(t *testing.T, prof *runtime.Profile, nodes []*tensor.Node, share map[*tensor.Node]*tensor.Node,
	feeds map[*tensor.Node][]float32, outs ...*tensor.Node) (int, [][]float32) {
	t.Helper()
	be := New()
	seg := &runtime.Segment{Nodes: nodes, Buffers: map[*tensor.Node]runtime.Buffer{}, Escapes: map[*tensor.Node]bool{}}
	for _, o := range outs {
		seg.Escapes[o] = true
	}
	for _, n := range nodes {
		if s, ok := share[n]; ok {
			seg.Buffers[n] = seg.Buffers[s]
			continue
		}
		if n.Op() == tensor.OpReshape {
			seg.Buffers[n] = seg.Buffers[n.Input(0)]
			continue
		}
		b, err := be.Alloc(int64(n.DType().Bytes(n.Shape().Size())), runtime.PoolActivations)
		if err != nil {
			t.Fatal(err)
		}
		seg.Buffers[n] = b
		if v, ok := feeds[n]; ok {
			copy(f32s(b.(*buffer).data), v)
		}
	}
	p, err := be.Prepare(seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(prof); err != nil {
		t.Fatal(err)
	}
	res := make([][]float32, len(outs))
	for i, o := range outs {
		res[i] = append([]float32(nil), f32s(seg.Buffers[o].(*buffer).data)[:o.Shape().Size()]...)
	}
	return len(p.(*program).steps), res
}

// TestAttentionTrioFusion checks the fused backward of attention: it is found when all
// three nodes are in the segment and not otherwise, and it gives the unfused results
// whether it writes the gradients in place or, when the buffer of ∂q is the forward
// output's (which the statistics still read), through scratch.
func TestAttentionTrioFusion(t *testing.T) {
	g := tensor.NewGraph()
	r := rand.New(rand.NewPCG(5, 6))
	shape := tensor.Shape{3, 2, 70, 8}
	feeds := map[*tensor.Node][]float32{}
	input := func() *tensor.Node {
		n := g.Input("x", tensor.F32, shape...)
		v := make([]float32, shape.Size())
		for i := range v {
			v[i] = float32(r.Float64()*2 - 1)
		}
		feeds[n] = v
		return n
	}
	q, k, v, o, gy := input(), input(), input(), input(), input()
	dq, dk, dv := tensor.AttentionGrad(q, k, v, nil, o, gy, tensor.AttentionAttr{Causal: true})
	stats := dq.Input(4)
	all := []*tensor.Node{q, k, v, o, gy, stats, dq, dk.Input(0), dk, dv}
	if trios := findAttnTrios(all); len(trios) != 1 || trios[stats] == nil {
		t.Fatalf("found trios %v, want one", trios)
	}
	if trios := findAttnTrios([]*tensor.Node{q, k, v, o, gy, stats, dq}); len(trios) != 0 {
		t.Fatalf("found trios %v without the ∂k|∂v node", trios)
	}
	// The unfused reference: each gradient node in a program of its own.
	_, wantQ := runShared(t, []*tensor.Node{q, k, v, o, gy, stats, dq}, nil, feeds, dq)
	_, wantKV := runShared(t, []*tensor.Node{q, k, v, o, gy, stats, dk.Input(0)}, nil, feeds, dk.Input(0))
	for _, share := range []map[*tensor.Node]*tensor.Node{nil, {dq: o}} {
		steps, got := runShared(t, all, share, feeds, dq, dk.Input(0))
		// stats (fused), the slices, and a copy step for ∂q when it went through scratch.
		if want := 3 + len(share); steps != want {
			t.Errorf("sharing %v: %d steps, want %d", share, steps, want)
		}
		for i, want := range [][]float32{wantQ[0], wantKV[0]} {
			for j, w := range want {
				if d := math.Abs(float64(got[i][j] - w)); !(d <= 1e-5*(1+math.Abs(float64(w)))) {
					t.Fatalf("sharing %v: gradient %d element %d = %v, want %v", share, i, j, got[i][j], w)
				}
			}
		}
	}
}

// TestProfileCountsFusedWork checks that a profiled run counts the FLOPs of every node
// once, fused or not: a fused step counts the work of the nodes it does.
func TestProfileCountsFusedWork(t *testing.T) {
	g := tensor.NewGraph()
	r := rand.New(rand.NewPCG(1, 2))
	feeds := map[*tensor.Node][]float32{}
	in := func(shape ...int) *tensor.Node {
		x := g.Input(fmt.Sprint("x", len(feeds)), tensor.F32, shape...)
		v := make([]float32, x.Shape().Size())
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		feeds[x] = v
		return x
	}
	x, w, b, gy, gamma, beta := in(64, 32), in(32, 48), in(48), in(64, 48), in(48), in(48)
	h := tensor.Relu(tensor.Add(tensor.MatMul(x, w), b))
	y := tensor.LayerNorm(h, gamma, beta, []int{-1}, 1e-5)
	outs := append([]*tensor.Node{y}, tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, w, b, gamma, beta})...)
	nodes := graphOf(outs...)
	total := 0.0
	for _, n := range nodes {
		if n.Op().Kind() != tensor.KindSource && n.Op() != tensor.OpReshape {
			total += runtime.FLOPs(n)
		}
	}
	for _, fused := range []bool{false, true} {
		func() {
			defer func(old bool) { fuseOff = old }(fuseOff)
			fuseOff = !fused
			prof := runtime.NewProfile()
			steps, _ := runProfiled(t, prof, nodes, nil, feeds, outs...)
			got := 0.0
			for _, s := range prof.Stats() {
				got += s.FLOPs
			}
			if math.Abs(got-total) > 1e-9*total {
				t.Errorf("fused=%v (%d steps): %v FLOPs counted, the nodes do %v", fused, steps, got, total)
			}
		}()
	}
}
