package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

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

// openBackend opens the Vulkan backend, skipping only when Vulkan is absent.
func openBackend(t *testing.T) *Backend {
	t.Helper()
	d := openTest(t)
	return &Backend{d: d}
}

func randInput(g *tensor.Graph, r *rand.Rand, feeds map[*tensor.Node]*tensor.Tensor, lo, hi float64, shape ...int) *tensor.Node {
	x := g.Input(fmt.Sprint("x", len(feeds)), tensor.F32, shape...)
	data := make([]float32, tensor.Shape(shape).Size())
	for i := range data {
		data[i] = float32(lo + (hi-lo)*r.Float64())
	}
	t, err := tensor.FromFloat32s(tensor.Shape(shape), data)
	if err != nil {
		panic(err)
	}
	feeds[x] = t
	return x
}

// roundEveryProduct makes f32 products that allow half precision round their operands
// whatever their size, until the test ends, so that small test shapes take the path
// that big products take.
func roundEveryProduct(t *testing.T) { t.Cleanup(RoundEveryProduct()) }
