package gpu

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// TestBackendAttentionGradients runs attention's backward graph (the fused
// OpAttentionGrad passes, and the composition that gives a learned mask its gradient)
// through RoPE under the runtime on the GPU, in both layouts (the AttentionBTHD one
// without RoPE), and compares every gradient with the CPU's.
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
		// The same in the AttentionBTHD layout: (B, T, H, D) operands, 5 heads per row.
		qr := randInput(g, r, feeds, -1, 1, 2, 13, 5, 8)
		kr := randInput(g, r, feeds, -1, 1, 2, 9, 5, 8)
		vr := randInput(g, r, feeds, -1, 1, 2, 9, 5, 6)
		mr := randInput(g, r, feeds, -1, 1, 5, 1, 9)
		yr := tensor.Attention(qr, kr, vr, mr, tensor.AttentionAttr{Causal: causal, Layout: tensor.AttentionBTHD})
		gyr := randInput(g, r, feeds, -1, 1, yr.Shape()...)
		outs = append(append(outs, yr), tensor.GradWithSeed([]*tensor.Node{yr}, []*tensor.Node{gyr}, []*tensor.Node{qr, kr, vr, mr})...)
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
