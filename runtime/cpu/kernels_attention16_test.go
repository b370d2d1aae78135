package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// BenchmarkAttention16 times the transformer bench's attention (batch 32, 8 heads,
// T = 64, 16 features, causal, (B, T, H, D) operands): the forward alone and the
// forward with the fused backward, by the 16-feature rows and by tiles.
func BenchmarkAttention16(b *testing.B) {
	for _, grad := range []bool{false, true} {
		for _, rows := range []bool{true, false} {
			if rows && !attn16 {
				continue
			}
			b.Run(fmt.Sprintf("grad=%v/rows=%v", grad, rows), func(b *testing.B) {
				defer func(old bool) { attn16 = old }(attn16)
				attn16 = rows
				g := tensor.NewGraph()
				shape := []int{32, 64, 8, 16}
				q, k, v := g.Input("q", tensor.F32, shape...), g.Input("k", tensor.F32, shape...), g.Input("v", tensor.F32, shape...)
				at := tensor.AttentionAttr{Causal: true, Layout: tensor.AttentionBTHD}
				outs := []*tensor.Node{tensor.Attention(q, k, v, nil, at)}
				if grad {
					gy := g.Input("gy", tensor.F32, shape...)
					dq, dk, dv := tensor.AttentionGrad(q, k, v, nil, outs[0], gy, at)
					outs = append(outs, dq, dk, dv)
				}
				benchProgram(b, graphOf(outs...), true, outs...)
			})
		}
	}
}

// runAttention16 runs attention and its fused backward on q, k, v and gy (shaped
// (2, T, H, 16) in the AttentionBTHD layout, (2, H, T, 16) in the default one) with the
// 16-feature rows on or off, and returns o, ∂q, ∂k and ∂v.
func runAttention16(t *testing.T, rows bool, tq, tk, heads int, at tensor.AttentionAttr, vals map[string][]float32) [][]float32 {
	t.Helper()
	defer func(old bool) { attn16 = old }(attn16)
	attn16 = rows
	g := tensor.NewGraph()
	qs, ks := []int{2, heads, tq, 16}, []int{2, heads, tk, 16}
	if at.Layout == tensor.AttentionBTHD {
		qs, ks = []int{2, tq, heads, 16}, []int{2, tk, heads, 16}
	}
	q, k, v, gy := g.Input("q", tensor.F32, qs...), g.Input("k", tensor.F32, ks...), g.Input("v", tensor.F32, ks...), g.Input("gy", tensor.F32, qs...)
	o := tensor.Attention(q, k, v, nil, at)
	dq, dk, dv := tensor.AttentionGrad(q, k, v, nil, o, gy, at)
	feeds := map[*tensor.Node][]float32{}
	for _, n := range []*tensor.Node{q, k, v, gy} {
		feeds[n] = vals[n.Name()]
	}
	_, out := runShared(t, graphOf(o, dq, dk, dv), nil, feeds, o, dq, dk, dv)
	return out
}

// TestAttention16MatchesTiles checks the 16-feature rows against the tile kernels (the
// float64 references are in kernels_attention_test.go, which runs the rows where the
// CPU has AVX-512): ragged lengths around the groups of four rows and the blocks of 16
// keys, cross attention both ways, both layouts, causal or not; and a key with an
// infinite feature that every query sees, whose entry the rows hand back to the tiles:
// its NaNs must be the tiles' NaNs. (A non-finite key that no query sees does not reach
// the rows' results, where the tiles' products can turn it into NaNs by 0·Inf.)
func TestAttention16MatchesTiles(t *testing.T) {
	if !attn16 {
		t.Skip("the 16-feature rows need AVX-512")
	}
	r := rand.New(rand.NewPCG(16, 17))
	for _, sz := range []struct{ tq, tk, heads int }{{1, 1, 3}, {5, 5, 2}, {64, 64, 3}, {70, 70, 1}, {33, 7, 2}, {7, 33, 2}, {17, 320, 1}} {
		for _, at := range []tensor.AttentionAttr{{}, {Causal: true}, {Layout: tensor.AttentionBTHD}, {Causal: true, Layout: tensor.AttentionBTHD, Scale: 0.3}} {
			for _, inf := range []bool{false, true} {
				vals := map[string][]float32{}
				for _, name := range []string{"q", "k", "v", "gy"} {
					n := 2 * sz.heads * 16 * sz.tq
					if name == "k" || name == "v" {
						n = 2 * sz.heads * 16 * sz.tk
					}
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(r.NormFloat64())
					}
					vals[name] = x
				}
				if inf {
					// Key 0 of the last head of batch row 1, which every query sees.
					at0 := ((1*sz.heads+sz.heads-1)*sz.tk)*16 + 3
					if at.Layout == tensor.AttentionBTHD {
						at0 = (sz.tk*sz.heads+sz.heads-1)*16 + 3
					}
					vals["k"][at0] = float32(math.Inf(1))
				}
				name := fmt.Sprintf("q%d k%d heads %d %+v inf %v", sz.tq, sz.tk, sz.heads, at, inf)
				got := runAttention16(t, true, sz.tq, sz.tk, sz.heads, at, vals)
				want := runAttention16(t, false, sz.tq, sz.tk, sz.heads, at, vals)
				for i, out := range []string{"o", "dq", "dk", "dv"} {
					for j := range want[i] {
						g, w := float64(got[i][j]), float64(want[i][j])
						if math.IsNaN(g) != math.IsNaN(w) || math.Abs(g-w) > 2e-5*(1+math.Abs(w)) {
							t.Fatalf("%s: %s[%d] = %v by rows, %v by tiles", name, out, j, g, w)
						}
					}
				}
			}
		}
	}
}

// TestAttention16ThreadCounts checks that the 16-feature rows give the same bits with
// one worker and with several (one task per (batch, head), whoever runs it).
func TestAttention16ThreadCounts(t *testing.T) {
	if !attn16 {
		t.Skip("the 16-feature rows need AVX-512")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(3, 4))
	vals := map[string][]float32{}
	for _, name := range []string{"q", "k", "v", "gy"} {
		x := make([]float32, 2*37*3*16)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		vals[name] = x
	}
	at := tensor.AttentionAttr{Causal: true, Layout: tensor.AttentionBTHD}
	var first [][]float32
	for _, procs := range []int{1, 3, 8} {
		runtime.GOMAXPROCS(procs)
		got := runAttention16(t, true, 37, 37, 3, at, vals)
		if first == nil {
			first = got
			continue
		}
		for i := range got {
			for j := range got[i] {
				if math.Float32bits(got[i][j]) != math.Float32bits(first[i][j]) {
					t.Fatalf("GOMAXPROCS %d: output %d element %d = %v, %v with one worker", procs, i, j, got[i][j], first[i][j])
				}
			}
		}
	}
}
