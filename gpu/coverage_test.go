package gpu

import (
	"bytes"
	"os"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/shaders"
	"github.com/gml-dev/gml/tensor"
)

// TestOpTableMatchesKernels checks the op table's GPU column against what this package
// registers: an op has a recorder exactly when the table names a shader for it (the
// table is where "runs on the CPU" is stated). It needs no device.
func TestOpTableMatchesKernels(t *testing.T) {
	var cpuOnly []string
	for o := tensor.Op(1); int(o) < tensor.NumOps; o++ {
		if o.Kind() == tensor.KindSource {
			continue
		}
		_, registered := ops[o]
		shader := o.GPU().Shader
		switch {
		case shader == "" && registered:
			t.Errorf("%v has a recorder, but the op table names no shader for it", o)
		case shader != "" && !registered:
			t.Errorf("the op table puts %v on %s.comp, but no recorder is registered", o, shader)
		case shader == "":
			cpuOnly = append(cpuOnly, o.String())
		}
	}
	t.Logf("ops without a GPU kernel (they run on the CPU): %v", cpuOnly)
}

// TestOpCodesFresh compares opcodes.go with what the op table gives now.
func TestOpCodesFresh(t *testing.T) {
	got, err := os.ReadFile("opcodes.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, shaders.GoOpCodes()) {
		t.Error("opcodes.go is stale: run `go generate ./shaders` (make generate)")
	}
}

// TestFallbackRunsOnCPU compiles a graph through the runtime on the Vulkan backend after
// taking CumSum's shader away (so the test does not depend on which ops still lack
// one): the scheduler must run that node on the CPU, count the fallback, and give the
// CPU backend's result.
func TestFallbackRunsOnCPU(t *testing.T) {
	openBackend(t).Close()
	saved, ok := ops[tensor.OpCumSum]
	if !ok {
		t.Fatal("cumsum has no shader to take away")
	}
	delete(ops, tensor.OpCumSum)
	defer func() { ops[tensor.OpCumSum] = saved }()

	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 5, 7)
	c := tensor.CumSum(tensor.Exp(x), 1, false, false)
	y := tensor.Sum(tensor.Mul(c, x), []int{1}, false)
	data := make([]float32, 35)
	for i := range data {
		data[i] = float32(i%9)/9 - 0.4
	}
	xt, err := tensor.FromFloat32s(tensor.Shape{5, 7}, data)
	if err != nil {
		t.Fatal(err)
	}
	feeds := map[*tensor.Node]*tensor.Tensor{x: xt}
	want, err := cputest.Run([]*tensor.Node{y}, feeds)
	if err != nil {
		t.Fatal(err)
	}

	rt, err := runtime.New(runtime.Device("gpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if rt.Backend() != "vulkan" {
		t.Fatalf("runtime picked %q, want the Vulkan backend", rt.Backend())
	}
	exe, err := rt.Compile([]*tensor.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Free()
	if fb := exe.Fallbacks(); len(fb) != 1 || fb[0] != c {
		t.Errorf("fallbacks %v, want just %v", fb, c)
	}
	if n := rt.Stats().Fallbacks; n != 1 {
		t.Errorf("runtime counted %d fallbacks, want 1", n)
	}
	got, err := exe.Run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(got[0].Float32s(), want[0].Float32s()); e > 1e-6 {
		t.Errorf("GPU graph with a CPU fallback: relative error %.3g against the CPU", e)
	}
}
