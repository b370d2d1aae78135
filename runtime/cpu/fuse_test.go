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
// whether it writes the gradients in place, into the forward output's buffer (which
// the statistics read last, so the scheduler may give it to ∂q) or through scratch, and
// ∂k and ∂v into the slices that take ∂k|∂v apart (when they are its only readers) or
// into ∂k|∂v, or (the rows only) into the memory of operands of their shape, which the
// scheduler hands on after the trio's nodes, their last readers, have run.
// The cases run the tiles of a short and a long sequence and the 16-feature rows of
// nn's attention (where the machine has them), one with a query that makes its scores
// infinite: the rows give up there and the tiles redo the entry, reading o again, which
// the rows have by then overwritten with ∂q unless they kept it.
func TestAttentionTrioFusion(t *testing.T) {
	cases := []struct {
		name  string
		shape tensor.Shape
		attr  tensor.AttentionAttr
		inf   bool // q's row 9 of the first entry holds +Inf
	}{
		{"tile", tensor.Shape{3, 2, 70, 8}, tensor.AttentionAttr{Causal: true}, false},
		{"tiles", tensor.Shape{1, 2, 150, 8}, tensor.AttentionAttr{Causal: true}, false},
		{"rows16", tensor.Shape{2, 24, 3, 16}, tensor.AttentionAttr{Causal: true, Layout: tensor.AttentionBTHD}, false},
		{"rows16_infinite_score", tensor.Shape{2, 24, 3, 16}, tensor.AttentionAttr{Causal: true, Layout: tensor.AttentionBTHD}, true},
	}
	for _, c := range cases {
		g := tensor.NewGraph()
		r := rand.New(rand.NewPCG(5, 6))
		feeds := map[*tensor.Node][]float32{}
		input := func() *tensor.Node {
			n := g.Input("x", tensor.F32, c.shape...)
			v := make([]float32, c.shape.Size())
			for i := range v {
				v[i] = float32(r.Float64()*2 - 1)
			}
			feeds[n] = v
			return n
		}
		q, k, v, o, gy := input(), input(), input(), input(), input()
		if c.inf {
			feeds[q][9*c.shape[2]*c.shape[3]] = float32(math.Inf(1)) // BTHD: row 9 of (0, 0)
		}
		dq, dk, dv := tensor.AttentionGrad(q, k, v, nil, o, gy, c.attr)
		stats := dq.Input(4)
		all := []*tensor.Node{q, k, v, o, gy, stats, dq, dk.Input(0), dk, dv}
		if trios := findAttnTrios(all); len(trios) != 1 || trios[stats] == nil {
			t.Fatalf("%s: found trios %v, want one", c.name, trios)
		}
		if trios := findAttnTrios([]*tensor.Node{q, k, v, o, gy, stats, dq}); len(trios) != 0 {
			t.Fatalf("%s: found trios %v without the ∂k|∂v node", c.name, trios)
		}
		// The unfused reference: each gradient node in a program of its own.
		_, wantQ := runShared(t, []*tensor.Node{q, k, v, o, gy, stats, dq}, nil, feeds, dq)
		_, wantKV := runShared(t, []*tensor.Node{q, k, v, o, gy, stats, dk.Input(0)}, nil, feeds, dk.Input(0))
		// ∂k and ∂v: the first and the second half of each row of ∂k|∂v.
		d := c.shape[3]
		var wantK, wantV []float32
		for r := 0; r < len(wantKV[0]); r += 2 * d {
			wantK, wantV = append(wantK, wantKV[0][r:r+d]...), append(wantV, wantKV[0][r+d:r+2*d]...)
		}
		// With ∂k and ∂v in the slices' outputs, the run where nothing shares memory is
		// the one the others must match bit for bit, NaNs too (the same kernels run).
		_, base := runShared(t, all, nil, feeds, dq, dk, dv)
		rows := attn16 && c.shape[3] == 16
		for _, sh := range []struct {
			share       map[*tensor.Node]*tensor.Node
			outs        []*tensor.Node // ∂q, then ∂k|∂v or ∂k and ∂v
			steps, late int            // stats (fused), the slices unless the trio writes them, and a copy step for each gradient through scratch; late: with the rows
		}{
			{nil, []*tensor.Node{dq, dk.Input(0)}, 3, 3},
			{map[*tensor.Node]*tensor.Node{dq: o}, []*tensor.Node{dq, dk.Input(0)}, 3, 3},
			{map[*tensor.Node]*tensor.Node{dq: q}, []*tensor.Node{dq, dk.Input(0)}, 4, 4}, // q is read until the end: through scratch
			{nil, []*tensor.Node{dq, dk, dv}, 1, 1},
			{map[*tensor.Node]*tensor.Node{dq: o}, []*tensor.Node{dq, dk, dv}, 1, 1},
			// The rows write ∂k and ∂v into operands of their shape (lateKV), the tiles
			// through scratch.
			{map[*tensor.Node]*tensor.Node{dk: k, dv: o}, []*tensor.Node{dq, dk, dv}, 3, 1},
			{map[*tensor.Node]*tensor.Node{dq: o, dk: gy, dv: v}, []*tensor.Node{dq, dk, dv}, 3, 1},
			{map[*tensor.Node]*tensor.Node{dk: q}, []*tensor.Node{dq, dk, dv}, 2, 1},
		} {
			want := [][]float32{wantQ[0], wantKV[0]}
			if len(sh.outs) == 3 {
				want = [][]float32{wantQ[0], wantK, wantV}
			}
			steps, got := runShared(t, all, sh.share, feeds, sh.outs...)
			if rows && steps != sh.late || !rows && steps != sh.steps {
				t.Errorf("%s sharing %v, outputs %v: %d steps, want %d (%d with the rows)", c.name, sh.share, sh.outs, steps, sh.steps, sh.late)
			}
			for i, want := range want {
				if len(sh.outs) == 3 {
					for j := range got[i] {
						if math.Float32bits(got[i][j]) != math.Float32bits(base[i][j]) {
							t.Fatalf("%s sharing %v: gradient %d element %d = %v, %v sharing nothing", c.name, sh.share, i, j, got[i][j], base[i][j])
						}
					}
				}
				if c.inf && i > 0 {
					continue // where the infinities turn into NaN differs between the kernels
				}
				for j, w := range want {
					d := math.Abs(float64(got[i][j] - w))
					if !(d <= 1e-5*(1+math.Abs(float64(w)))) && !(math.IsNaN(float64(w)) && math.IsNaN(float64(got[i][j]))) {
						t.Fatalf("%s sharing %v: gradient %d element %d = %v, want %v", c.name, sh.share, i, j, got[i][j], w)
					}
				}
			}
		}
	}
}

// TestProfileCountsFusedWork checks that a profiled run counts the FLOPs of every node
// once, fused or not: a fused step counts the work of the nodes it does.
func TestProfileCountsFusedWork(t *testing.T) {
	cases := []fusionCase{
		{"dense_relu_layer_norm", func(g *tensor.Graph, in func(...int) *tensor.Node, _ int) []*tensor.Node {
			x, w, b, gy, gamma, beta := in(64, 32), in(32, 48), in(48), in(64, 48), in(48), in(48)
			h := tensor.Relu(tensor.Add(tensor.MatMul(x, w), b))
			y := tensor.LayerNorm(h, gamma, beta, []int{-1}, 1e-5)
			return append([]*tensor.Node{y}, tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{x, w, b, gamma, beta})...)
		}},
		// The bias add and the pool move into the convolution's step, the ReLU into the
		// pool's first: the ReLU's work counts there through two owners.
		cnnLayer(2, 3, 4, 9, 3, 1, false, false),
	}
	for _, c := range cases {
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
		outs := c.build(g, in, 0)
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
					t.Errorf("%s fused=%v (%d steps): %v FLOPs counted, the nodes do %v", c.name, fused, steps, got, total)
				}
			}()
		}
	}
}
