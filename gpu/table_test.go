package gpu_test

import (
	"strings"
	"testing"

	"github.com/gml-dev/gml/gpu"
	"github.com/gml-dev/gml/internal/backendtest"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// The op cases themselves run on every backend in internal/backendtest. These tests
// run parts of that table through GPU paths that the default settings keep for large
// problems.

// TestMatMulCasesRounded runs the table's matrix products with every product that
// allows half precision rounded to it, however small, so the small shapes of the table
// take the path that big products take; and requires every product, in every float
// dtype, to run on the GPU (f16 and bf16 ones on cooperative matrices where the device
// has them, else widened to f32).
func TestMatMulCasesRounded(t *testing.T) {
	rt, err := runtime.New(runtime.Device("gpu"))
	if err != nil {
		t.Skipf("no Vulkan device: %v", err)
	}
	defer rt.Close()
	defer gpu.RoundEveryProduct()()
	ran := 0
	for _, c := range backendtest.AllCases() {
		if !strings.HasPrefix(c.Name, "matmul") || c.Decline != "" {
			continue
		}
		for _, dt := range c.RunDTypes() {
			in, err := c.Instantiate(dt)
			if err != nil {
				t.Fatal(err)
			}
			if in.Under != tensor.OpMatMul {
				continue
			}
			outs, vars, err := in.Reference()
			if err != nil {
				t.Fatal(err)
			}
			r, err := in.Run(rt)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Fallbacks) > 0 {
				t.Errorf("%s: %v ran on the CPU", in.Name, r.Fallbacks)
			}
			if err := in.Check(r, outs, vars, nil); err != nil {
				t.Errorf("%s: %v", in.Name, err)
			}
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("the case table has no matrix product")
	}
}
