package gpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestBackendAttentionGrad checks the three flash-attention backward passes (statistics,
// ∂q, ∂k|∂v) against the CPU: self and cross attention (Tq != Tk both ways, also under a
// causal mask), lengths that are not multiples of the tiles, feature sizes that need
// each shared-memory tile and are not multiples of four, additive masks broadcast in
// several ways, a custom scale, and no leading axes.
func TestBackendAttentionGrad(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(41, 42))
	cases := []struct {
		name   string
		lead   []int
		tq, tk int
		d, dv  int
		causal bool
		mask   []int // nil: no mask
		scale  float32
	}{
		{"self", []int{2, 3}, 37, 37, 16, 16, false, nil, 0},
		{"causal", []int{2, 3}, 37, 37, 16, 16, true, nil, 0},
		{"cross", []int{2}, 5, 70, 24, 40, false, nil, 0.3},
		{"causal_wide", []int{2}, 19, 53, 7, 5, true, nil, 0},
		{"causal_tall", []int{3}, 45, 20, 8, 8, true, nil, 0},
		{"mask_full", []int{2, 2}, 19, 33, 32, 32, false, []int{2, 2, 19, 33}, 0},
		{"mask_per_batch", []int{2, 3}, 17, 17, 12, 12, true, []int{2, 1, 17, 17}, 0},
		{"mask_keys", []int{4}, 9, 50, 20, 20, false, []int{1, 50}, 0},
		{"d100", []int{1, 2}, 21, 29, 100, 70, false, nil, 0},
		{"d200", []int{2}, 10, 23, 200, 130, true, []int{10, 23}, 0},
		{"rank2", nil, 13, 11, 7, 5, false, []int{13, 1}, 0},
	}
	for _, c := range cases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		shape := func(t, d int) []int { return append(append([]int(nil), c.lead...), t, d) }
		q := randInput(g, r, feeds, -1, 1, shape(c.tq, c.d)...)
		k := randInput(g, r, feeds, -1, 1, shape(c.tk, c.d)...)
		v := randInput(g, r, feeds, -1, 1, shape(c.tk, c.dv)...)
		var mask *tensor.Node
		if c.mask != nil {
			mask = randInput(g, r, feeds, -2, 2, c.mask...)
			m := feeds[mask].Float32s()
			for i := 1; i < len(m) && c.mask[len(c.mask)-1] > 1; i += 7 { // some hidden keys, never a whole row
				m[i] = float32(math.Inf(-1))
			}
		}
		at := tensor.AttentionAttr{Causal: c.causal, Scale: c.scale}
		o := tensor.Attention(q, k, v, mask, at)
		gy := randInput(g, r, feeds, -1, 1, o.Shape()...)
		dq, dk, dv := tensor.AttentionGrad(q, k, v, mask, o, gy, at)
		compareWithCPU(t, be, c.name, 1e-5, []*tensor.Node{dq.Input(4), dq, dk.Input(0), dk, dv}, feeds)
	}
}
