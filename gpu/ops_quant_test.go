package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// quantInput adds an input holding a random matrix quantised to dt.
func quantInput(g *tensor.Graph, r *rand.Rand, feeds map[*tensor.Node]*tensor.Tensor, dt tensor.DType, rows, k int) *tensor.Node {
	x := make([]float32, rows*k)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	f, _ := tensor.FromFloat32s(tensor.Shape{rows, k}, x)
	q := f.Convert(dt)
	n := g.Input(fmt.Sprint("w", len(feeds)), dt, rows, k)
	feeds[n] = q
	return n
}

// TestBackendQuantMatMul checks products with quantised weights, and their decoding,
// against the CPU backend: matrix-vector, a batch of 32 rows (four chunks of the
// shader's eight), batched activations, w @ y with y a vector or transposed, and rows
// whose byte length is not a multiple of four (Q4_0 and Q8_0 rows of 32 weights).
func TestBackendQuantMatMul(t *testing.T) {
	be := openBackend(t)
	defer be.Close()
	r := rand.New(rand.NewPCG(4, 4))
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K} {
		kk := 512
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		w := quantInput(g, r, feeds, dt, 67, kk)
		outs := []*tensor.Node{
			tensor.MatMulT(randInput(g, r, feeds, -1, 1, 1, kk), w, false, true),
			tensor.MatMulT(randInput(g, r, feeds, -1, 1, 32, kk), w, false, true),
			tensor.MatMulT(randInput(g, r, feeds, -1, 1, 2, 3, kk), w, false, true),
			tensor.MatMul(w, randInput(g, r, feeds, -1, 1, kk, 1)),
			tensor.MatMulT(w, randInput(g, r, feeds, -1, 1, 3, 5, kk), false, true),
			tensor.Cast(w, tensor.F32),
		}
		if dt != tensor.Q4_K {
			odd := quantInput(g, r, feeds, dt, 5, 32)
			outs = append(outs, tensor.MatMulT(randInput(g, r, feeds, -1, 1, 9, 32), odd, false, true), tensor.Cast(odd, tensor.F32))
		}
		want, err := cputest.Run(outs, feeds)
		if err != nil {
			t.Fatal(err)
		}
		exe := gpuExecutable(t, outs)
		if fb := exe.Fallbacks(); len(fb) > 0 {
			t.Fatalf("%v: %v ran on the CPU", dt, fb)
		}
		got, err := exe.Run(feeds)
		if err != nil {
			t.Fatal(err)
		}
		for i := range outs {
			if e := relErr(got[i].Float32s(), want[i].Float32s()); e > 1e-5 {
				t.Errorf("%v output %d (%v): relative error %.3g against the CPU", dt, i, outs[i], e)
			}
		}
	}
}

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
	if e := relErr(got[0].Float32s(), want[0].Float32s()); e > 1e-5 {
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
