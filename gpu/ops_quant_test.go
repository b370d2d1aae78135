package gpu

import (
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// TestQuantLayoutsLeftToCPU: the layouts the shader does not read, and encoding, are
// unsupported (the scheduler runs them on the CPU).
func TestQuantLayoutsLeftToCPU(t *testing.T) {
	be := openBackend(t)
	defer be.Close()
	g := tensor.NewGraph()
	w := g.Input("w", tensor.Q8_0, 4, 64)
	for _, n := range []*tensor.Node{
		tensor.MatMulT(g.Input("x", tensor.F32, 64, 3), w, true, true),
		tensor.MatMul(w, g.Input("y", tensor.F32, 64, 3)),
		tensor.Cast(g.Input("z", tensor.F32, 2, 64), tensor.Q8_0),
		tensor.Cast(w, tensor.F16),
	} {
		if be.Supports(n) {
			t.Errorf("%v is supported; the shader does not read it", n)
		}
	}
}

// TestQuantWeightsResident runs x @ wᵀ through the runtime with w a quantised variable:
// the product runs on the GPU (no fallback), the weights' buffer holds the blocks (not
// floats), and the result matches the CPU backend's.
func TestQuantWeightsResident(t *testing.T) {
	openBackend(t).Close()
	r := rand.New(rand.NewPCG(5, 5))
	feeds := map[*tensor.Node]*tensor.Tensor{}
	g := tensor.NewGraph()
	src := make([]float32, 96*256)
	for i := range src {
		src[i] = float32(r.NormFloat64())
	}
	f, _ := tensor.FromFloat32s(tensor.Shape{96, 256}, src)
	v := tensor.NewVariable("w", f.Convert(tensor.Q4_K))
	x := randInput(g, r, feeds, -1, 1, 4, 256)
	y := tensor.MatMulT(x, g.Var(v), false, true)
	want, err := cputest.Run([]*tensor.Node{y}, feeds)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Device("gpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	exe, err := rt.Compile([]*tensor.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Free()
	if fb := exe.Fallbacks(); len(fb) != 0 {
		t.Errorf("fallbacks %v", fb)
	}
	got, err := exe.Run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(got[0].Float32s(), want[0].Float32s()); e > 1e-4 {
		t.Errorf("relative error %.3g against the CPU", e)
	}
	found := false
	for _, row := range rt.Memory().Rows {
		if row.Backend == "vulkan" && row.Pool == runtime.PoolWeights {
			found = true
			if row.Bytes != int64(tensor.Q4_K.Bytes(96*256)) {
				t.Errorf("the weights take %d bytes on the GPU; their blocks are %d", row.Bytes, tensor.Q4_K.Bytes(96*256))
			}
		}
	}
	if !found {
		t.Errorf("no weights on the GPU: %+v", rt.Memory().Rows)
	}
}
