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
// T = 64, causal, (B, T, H, D) operands) with 16 features per head, and the same with
// 32 and 64 (d_model 256 and 512): the forward alone and the forward with the fused
// backward, by the four-row kernels and by tiles.
func BenchmarkAttention16(b *testing.B) {
	for _, d := range []int{16, 32, 64} {
		for _, grad := range []bool{false, true} {
			for _, rows := range []bool{true, false} {
				if rows && !attn16 {
					continue
				}
				b.Run(fmt.Sprintf("d=%d/grad=%v/rows=%v", d, grad, rows), func(b *testing.B) {
					defer func(old bool) { attn16 = old }(attn16)
					attn16 = rows
					g := tensor.NewGraph()
					shape := []int{32, 64, 8, d}
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
}

// runAttention16 runs attention and its fused backward on q, k, v and gy (shaped
// (2, T, H, d) in the AttentionBTHD layout, (2, H, T, d) in the default one) with the
// four-row kernels on or off, and returns o, ∂q, ∂k and ∂v. With late, ∂k and ∂v take
// the memory of k and v, as the scheduler hands it on when the backward reads them last
// (the trio's lateKV).
func runAttention16(t *testing.T, rows, late bool, tq, tk, heads, d int, at tensor.AttentionAttr, vals map[string][]float32) [][]float32 {
	t.Helper()
	defer func(old bool) { attn16 = old }(attn16)
	attn16 = rows
	g := tensor.NewGraph()
	qs, ks := []int{2, heads, tq, d}, []int{2, heads, tk, d}
	if at.Layout == tensor.AttentionBTHD {
		qs, ks = []int{2, tq, heads, d}, []int{2, tk, heads, d}
	}
	q, k, v, gy := g.Input("q", tensor.F32, qs...), g.Input("k", tensor.F32, ks...), g.Input("v", tensor.F32, ks...), g.Input("gy", tensor.F32, qs...)
	o := tensor.Attention(q, k, v, nil, at)
	dq, dk, dv := tensor.AttentionGrad(q, k, v, nil, o, gy, at)
	feeds := map[*tensor.Node][]float32{}
	for _, n := range []*tensor.Node{q, k, v, gy} {
		feeds[n] = vals[n.Name()]
	}
	var share map[*tensor.Node]*tensor.Node
	if late {
		share = map[*tensor.Node]*tensor.Node{dk: k, dv: v}
	}
	_, out := runShared(t, graphOf(o, dq, dk, dv), share, feeds, o, dq, dk, dv)
	return out
}

// TestAttention16MatchesTiles checks the four-row kernels (16, 32 and 64 features)
// against the tile kernels (the float64 references are in kernels_attention_test.go,
// which runs the rows where the CPU has AVX-512): ragged lengths around the groups of
// four rows and the blocks of 16 keys up to the most keys the rows take, cross attention
// both ways, both layouts, causal or not; and a key with an
// infinite feature that every query sees, whose entry the rows hand back to the tiles:
// its NaNs must be the tiles' NaNs. (A non-finite key that no query sees does not reach
// the rows' results, where the tiles' products can turn it into NaNs by 0·Inf.)
func TestAttention16MatchesTiles(t *testing.T) {
	if !attn16 {
		t.Skip("the 16-feature rows need AVX-512")
	}
	r := rand.New(rand.NewPCG(16, 17))
	type size struct{ tq, tk, heads, d int }
	var sizes []size
	for _, d := range []int{16, 32, 64} {
		for _, sz := range []size{{1, 1, 3, d}, {5, 5, 2, d}, {64, 64, 3, d}, {70, 70, 1, d}, {33, 7, 2, d}, {7, 33, 2, d}, {17, 16 * attn16Keys / d, 1, d}} {
			sizes = append(sizes, sz)
		}
	}
	for _, sz := range sizes {
		for _, at := range []tensor.AttentionAttr{{}, {Causal: true}, {Layout: tensor.AttentionBTHD}, {Causal: true, Layout: tensor.AttentionBTHD, Scale: 0.3}} {
			for _, inf := range []bool{false, true} {
				vals := map[string][]float32{}
				for _, name := range []string{"q", "k", "v", "gy"} {
					n := 2 * sz.heads * sz.d * sz.tq
					if name == "k" || name == "v" {
						n = 2 * sz.heads * sz.d * sz.tk
					}
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(r.NormFloat64())
					}
					vals[name] = x
				}
				if inf {
					// Key 0 of the last head of batch row 1, which every query sees.
					at0 := ((1*sz.heads+sz.heads-1)*sz.tk)*sz.d + 3
					if at.Layout == tensor.AttentionBTHD {
						at0 = (sz.tk*sz.heads+sz.heads-1)*sz.d + 3
					}
					vals["k"][at0] = float32(math.Inf(1))
				}
				want := runAttention16(t, false, false, sz.tq, sz.tk, sz.heads, sz.d, at, vals)
				for _, late := range []bool{false, true} {
					name := fmt.Sprintf("q%d k%d heads %d d %d %+v inf %v late %v", sz.tq, sz.tk, sz.heads, sz.d, at, inf, late)
					got := runAttention16(t, true, late, sz.tq, sz.tk, sz.heads, sz.d, at, vals)
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
}

// TestAttention16ThreadCounts checks that the four-row kernels give the same bits with
// one worker and with several (one task per (batch, head), whoever runs it), and
// whether ∂k and ∂v take the memory of k and v or not.
func TestAttention16ThreadCounts(t *testing.T) {
	if !attn16 {
		t.Skip("the 16-feature rows need AVX-512")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(3, 4))
	for _, d := range []int{16, 32, 64} {
		vals := map[string][]float32{}
		for _, name := range []string{"q", "k", "v", "gy"} {
			x := make([]float32, 2*37*3*d)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			vals[name] = x
		}
		at := tensor.AttentionAttr{Causal: true, Layout: tensor.AttentionBTHD}
		var first [][]float32
		for _, procs := range []int{1, 3, 8} {
			runtime.GOMAXPROCS(procs)
			for _, late := range []bool{false, true} {
				got := runAttention16(t, true, late, 37, 37, 3, d, at, vals)
				if first == nil {
					first = got
					continue
				}
				for i := range got {
					for j := range got[i] {
						if math.Float32bits(got[i][j]) != math.Float32bits(first[i][j]) {
							t.Fatalf("d %d GOMAXPROCS %d late %v: output %d element %d = %v, %v with one worker", d, procs, late, i, j, got[i][j], first[i][j])
						}
					}
				}
			}
		}
	}
}
