package gpu

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// allDTypes lists every element type, for ops that move data without reading it.
var allDTypes = []tensor.DType{tensor.F32, tensor.F16, tensor.BF16, tensor.I32, tensor.I64, tensor.Bool}

// typedInput feeds a random tensor of dtype dt: floats uniform in [lo, hi), integers
// drawn from [lo, hi), Bool 0 or 1.
func typedInput(g *tensor.Graph, r *rand.Rand, feeds map[*tensor.Node]*tensor.Tensor, dt tensor.DType, lo, hi float64, shape ...int) *tensor.Node {
	x := g.Input(fmt.Sprint("x", len(feeds)), dt, shape...)
	v := tensor.New(dt, shape...)
	for i := 0; i < v.Len(); i++ {
		switch {
		case dt == tensor.Bool:
			v.SetFloat(i, float64(r.IntN(2)))
		case dt.IsInt():
			v.SetFloat(i, float64(int64(lo)+r.Int64N(int64(hi-lo))))
		default:
			v.SetFloat(i, lo+(hi-lo)*r.Float64())
		}
	}
	feeds[x] = v
	return x
}

// compareWithCPU runs outputs on the CPU and Vulkan backends and compares them: F32
// outputs to a relative error of tol, every other output (and F32 with tol 0) bit for bit.
func compareWithCPU(t *testing.T, be *Backend, name string, tol float64, outputs []*tensor.Node, feeds map[*tensor.Node]*tensor.Tensor) {
	t.Helper()
	want, err := cputest.Run(outputs, feeds)
	if err != nil {
		t.Fatalf("%s on the CPU: %v", name, err)
	}
	got := runGPU(t, be, outputs, feeds, true)
	for i := range want {
		if tol > 0 && want[i].DType() == tensor.F32 {
			if e := relErr(got[i].Float32s(), want[i].Float32s()); e > tol {
				t.Errorf("%s output %d: relative error %.3g > %.0e", name, i, e, tol)
			}
			continue
		}
		if !bytes.Equal(got[i].Bytes(), want[i].Bytes()) {
			t.Errorf("%s output %d (%v %v) differs from the CPU's:\n got %v\nwant %v", name, i, want[i].DType(), want[i].Shape(), head(got[i]), head(want[i]))
		}
	}
}

// gpuExecutable compiles outputs under a runtime on the GPU; both are released when
// the test ends.
func gpuExecutable(t *testing.T, outputs []*tensor.Node) *runtime.Executable {
	t.Helper()
	rt, err := runtime.New(runtime.Device("gpu"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	exe, err := rt.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(exe.Free)
	return exe
}

// head formats the first elements of a tensor for failure messages.
func head(x *tensor.Tensor) []float64 {
	n := min(x.Len(), 12)
	v := make([]float64, n)
	for i := range v {
		v[i] = x.Float(i)
	}
	return v
}

func TestLayoutOps(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(31, 32))
	cases := []struct {
		name  string
		shape []int
		f     func(x *tensor.Node) *tensor.Node
	}{
		{"slice_steps", []int{7, 9, 5}, func(x *tensor.Node) *tensor.Node {
			return tensor.Slice(x, []int{1, 8, 0}, []int{6, -10, 5}, []int{2, -3, 1})
		}},
		{"slice_negative_inner", []int{3, 11}, func(x *tensor.Node) *tensor.Node {
			return tensor.Slice(x, []int{0, -2}, []int{3, -12}, []int{1, -1})
		}},
		{"slice_one_row", []int{5, 13}, func(x *tensor.Node) *tensor.Node { return tensor.SliceAxis(x, 0, 2, 3) }},
		{"pad_constant", []int{3, 5}, func(x *tensor.Node) *tensor.Node {
			return tensor.Pad(x, []int{1, 2}, []int{2, 3}, tensor.PadConstant, 1)
		}},
		{"pad_reflect", []int{2, 4, 5}, func(x *tensor.Node) *tensor.Node {
			return tensor.Pad(x, []int{0, 3, 2}, []int{1, 2, 4}, tensor.PadReflect, 0)
		}},
		{"pad_edge", []int{4, 1, 3}, func(x *tensor.Node) *tensor.Node {
			return tensor.Pad(x, []int{2, 1, 0}, []int{0, 2, 5}, tensor.PadEdge, 0)
		}},
		{"tile", []int{3, 1, 5}, func(x *tensor.Node) *tensor.Node { return tensor.Tile(x, 2, 3, 3) }},
		{"concat_0", []int{3, 5}, func(x *tensor.Node) *tensor.Node {
			return tensor.Concat(0, x, tensor.SliceAxis(x, 0, 1, 2), x)
		}},
		{"concat_1", []int{3, 7}, func(x *tensor.Node) *tensor.Node {
			return tensor.Concat(1, tensor.SliceAxis(x, 1, 0, 3), x, tensor.SliceAxis(x, 1, 6, 7))
		}},
		{"concat_mid", []int{2, 3, 5}, func(x *tensor.Node) *tensor.Node { return tensor.Concat(1, x, x) }},
		{"depth_to_space_dcr", []int{2, 12, 3, 5}, func(x *tensor.Node) *tensor.Node { return tensor.DepthToSpace(x, 2, "DCR") }},
		{"slice_empty", []int{4, 3}, func(x *tensor.Node) *tensor.Node { return tensor.Concat(0, tensor.SliceAxis(x, 0, 2, 2), x) }},
		{"concat_with_empty", []int{2, 3}, func(x *tensor.Node) *tensor.Node {
			return tensor.Concat(1, x, tensor.SliceAxis(x, 1, 1, 1), x)
		}},
		{"pad_scalar_rows", []int{1}, func(x *tensor.Node) *tensor.Node {
			return tensor.Pad(x, []int{3}, []int{2}, tensor.PadConstant, -7)
		}},
		{"depth_to_space_crd", []int{1, 18, 2, 3}, func(x *tensor.Node) *tensor.Node { return tensor.DepthToSpace(x, 3, "CRD") }},
	}
	for _, dt := range allDTypes {
		for _, c := range cases {
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			x := typedInput(g, r, feeds, dt, -50, 50, c.shape...)
			compareWithCPU(t, be, fmt.Sprint(c.name, "_", dt), 0, []*tensor.Node{c.f(x)}, feeds)
		}
	}
}

func TestAssignTyped(t *testing.T) {
	be := openBackend(t)
	r := rand.New(rand.NewPCG(33, 34))
	for _, dt := range allDTypes {
		g := tensor.NewGraph()
		feeds := map[*tensor.Node]*tensor.Tensor{}
		value := typedInput(g, r, feeds, dt, -9, 9, 5, 3)
		v := g.Var(tensor.NewVariable("v", tensor.New(dt, 5, 3)))
		compareWithCPU(t, be, fmt.Sprint("assign_", dt), 0, []*tensor.Node{tensor.Assign(v, value)}, feeds)
	}
}
