package gpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// attentionCase is one attention problem for the forward and backward tests.
type attentionCase struct {
	name   string
	lead   []int
	tq, tk int
	d, dv  int
	causal bool
	mask   []int // nil: no mask
	scale  float32
}

// attentionCases covers self and cross attention (Tq != Tk both ways, also under a
// causal mask), lengths that are not multiples of the tiles, feature sizes that need
// each shared-memory tile and are not multiples of four, additive masks broadcast in
// several ways, a custom scale, and no leading axes.
var attentionCases = []attentionCase{
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

// inputs makes random q, k, v and (when the case has one) a mask that hides some keys
// but never a whole row, and returns them with the attention attribute.
func (c attentionCase) inputs(g *tensor.Graph, r *rand.Rand, feeds map[*tensor.Node]*tensor.Tensor) (q, k, v, mask *tensor.Node, at tensor.AttentionAttr) {
	shape := func(t, d int) []int { return append(append([]int(nil), c.lead...), t, d) }
	q = randInput(g, r, feeds, -1, 1, shape(c.tq, c.d)...)
	k = randInput(g, r, feeds, -1, 1, shape(c.tk, c.d)...)
	v = randInput(g, r, feeds, -1, 1, shape(c.tk, c.dv)...)
	if c.mask != nil {
		mask = randInput(g, r, feeds, -2, 2, c.mask...)
		m := feeds[mask].Float32s()
		for i := 1; i < len(m) && c.mask[len(c.mask)-1] > 1; i += 7 {
			m[i] = float32(math.Inf(-1))
		}
	}
	return q, k, v, mask, tensor.AttentionAttr{Causal: c.causal, Scale: c.scale}
}

// TestBackendAttention checks the flash-attention forward against the CPU.
func TestBackendAttention(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(31, 32))
	for _, c := range attentionCases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		q, k, v, mask, at := c.inputs(g, r, feeds)
		y := tensor.Attention(q, k, v, mask, at)
		compareWithCPU(t, be, c.name, 1e-5, []*tensor.Node{y}, feeds)
	}
}

// TestBackendAttentionHiddenRow checks that a query whose keys are all masked gets NaN
// on both backends, and the other queries their values.
func TestBackendAttentionHiddenRow(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(33, 34))
	g := tensor.NewGraph()
	feeds := map[*tensor.Node]*tensor.Tensor{}
	q := randInput(g, r, feeds, -1, 1, 1, 4, 8)
	k := randInput(g, r, feeds, -1, 1, 1, 40, 8)
	v := randInput(g, r, feeds, -1, 1, 1, 40, 8)
	mask := randInput(g, r, feeds, 0, 0, 4, 40)
	m := feeds[mask].Float32s()
	for j := 0; j < 40; j++ {
		m[2*40+j] = float32(math.Inf(-1)) // query 2 sees nothing
	}
	y := tensor.Attention(q, k, v, mask, tensor.AttentionAttr{})
	want, err := cputest.Run([]*tensor.Node{y}, feeds)
	if err != nil {
		t.Fatal(err)
	}
	got := runGPU(t, be, []*tensor.Node{y}, feeds, false)[0].Float32s()
	for i, w := range want[0].Float32s() {
		hidden := i/8 == 2
		if math.IsNaN(float64(got[i])) != hidden || math.IsNaN(float64(w)) != hidden {
			t.Fatalf("element %d (query %d): gpu %v, cpu %v; want NaN exactly for query 2", i, i/8, got[i], w)
		}
		if !hidden && math.Abs(float64(got[i]-w)) > 1e-5 {
			t.Errorf("element %d: gpu %v, cpu %v", i, got[i], w)
		}
	}
}

// TestBackendRoPE checks rotary embeddings with I32 and I64 positions, partial
// rotation, negative positions (the gradient's) and positions in the thousands, where
// the angle needs range reduction.
func TestBackendRoPE(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(35, 36))
	cases := []struct {
		shape []int
		dims  int
		base  float32
		pos   func(i int) int64
		dt    tensor.DType
	}{
		{[]int{2, 3, 9, 16}, 0, 0, func(i int) int64 { return int64(i) }, tensor.I32},
		{[]int{2, 7, 12}, 8, 500, func(i int) int64 { return int64(3*i - 10) }, tensor.I64},
		{[]int{1, 33, 128}, 0, 0, func(i int) int64 { return int64(4000 + 97*i) }, tensor.I32},
		{[]int{5, 6}, 2, 0, func(i int) int64 { return -int64(i) }, tensor.I64},
	}
	for i, c := range cases {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		x := randInput(g, r, feeds, -1, 1, c.shape...)
		tlen := c.shape[len(c.shape)-2]
		pt := tensor.New(c.dt, tlen)
		for j := range tlen {
			pt.SetFloat(j, float64(c.pos(j)))
		}
		pos := g.Input(fmt.Sprint("pos", i), c.dt, tlen)
		feeds[pos] = pt
		y := tensor.RoPE(x, pos, tensor.RoPEAttr{Dims: c.dims, Base: c.base})
		compareWithCPU(t, be, fmt.Sprint("rope", c.shape), 2e-6, []*tensor.Node{y}, feeds)
	}
}

// TestBackendAttentionGradients runs attention's backward graph (the fused
// OpAttentionGrad passes, and the composition that gives a learned mask its gradient)
// through RoPE under the runtime on the GPU, and compares every gradient with the CPU's.
// Only integer nodes (RoPE's negated positions) may fall back to the CPU.
func TestBackendAttentionGradients(t *testing.T) {
	if _, err := Devices(); errors.Is(err, ErrNoVulkan) {
		t.Skipf("no Vulkan loader or device: %v", err)
	}
	rt, err := runtime.New(runtime.Device("gpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	r := rand.New(rand.NewPCG(37, 38))
	for _, causal := range []bool{false, true} {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		q := randInput(g, r, feeds, -1, 1, 2, 3, 11, 8)
		k := randInput(g, r, feeds, -1, 1, 2, 3, 11, 8)
		v := randInput(g, r, feeds, -1, 1, 2, 3, 11, 6)
		mask := randInput(g, r, feeds, -1, 1, 11, 11)
		pt := tensor.New(tensor.I32, 11)
		for i := range 11 {
			pt.SetFloat(i, float64(2*i))
		}
		pos := g.Input("pos", tensor.I32, 11)
		feeds[pos] = pt
		y := tensor.Attention(tensor.RoPE(q, pos, tensor.RoPEAttr{}), tensor.RoPE(k, pos, tensor.RoPEAttr{}), v, mask, tensor.AttentionAttr{Causal: causal})
		gy := randInput(g, r, feeds, -1, 1, y.Shape()...)
		outs := append([]*tensor.Node{y}, tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{gy}, []*tensor.Node{q, k, v, mask})...)
		want, err := cputest.Run(outs, feeds)
		if err != nil {
			t.Fatal(err)
		}
		exe, err := rt.Compile(outs)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range exe.Fallbacks() {
			if n.DType() == tensor.F32 {
				t.Errorf("causal=%v: %v ran on the CPU", causal, n)
			}
		}
		got, err := exe.Run(feeds)
		exe.Free()
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if e := relErr(got[i].Float32s(), want[i].Float32s()); e > 1e-5 {
				t.Errorf("causal=%v output %d (%v): relative error %.3g", causal, i, outs[i], e)
			}
		}
	}
}
