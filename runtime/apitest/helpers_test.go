// Package apitest tests the runtime's low-level API (device registry, buffers, events,
// asynchronous transfers, step-by-step executables, Explain, timelines, the meta
// device) on every device this machine has: the CPU, and the Vulkan backend's device
// where a Vulkan loader exists (lavapipe in CI, the GPU on a GPU machine). It lives in
// a package of its own because the runtime's own external tests register a stand-in
// "gpu" backend.
package apitest

import (
	"errors"
	"math"
	"math/rand/v2"
	goruntime "runtime"
	"testing"
	"time"

	_ "github.com/gml-dev/gml/backends"
	"github.com/gml-dev/gml/gpu"
	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// devices returns the CPU and the Vulkan backend's default device, when there is one.
func devices(t *testing.T) []*rt.PhysicalDevice {
	t.Helper()
	cpu, err := rt.FindDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	out := []*rt.PhysicalDevice{cpu}
	if g := vulkan(t); g != nil {
		out = append(out, g)
	}
	return out
}

// vulkan returns the Vulkan backend's default device, or nil where Vulkan is absent
// (logged, so a run shows what it did not cover).
func vulkan(t *testing.T) *rt.PhysicalDevice {
	t.Helper()
	d, err := rt.FindDevice("vulkan")
	if err != nil {
		if errors.Is(err, gpu.ErrNoVulkan) {
			t.Logf("no Vulkan here, CPU only: %v", err)
			return nil
		}
		t.Fatal(err)
	}
	return d
}

// eachDevice runs f as a subtest per device.
func eachDevice(t *testing.T, f func(t *testing.T, d *rt.PhysicalDevice)) {
	for _, d := range devices(t) {
		t.Run(d.ID(), func(t *testing.T) { f(t, d) })
	}
}

// runtimeOn opens a runtime preferring d, closed when the test ends.
func runtimeOn(t *testing.T, d *rt.PhysicalDevice) *rt.Runtime {
	t.Helper()
	r, err := rt.New(rt.Device(d.ID()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// random returns a tensor of dtype F32 with values in [-1, 1).
func random(seed uint64, shape ...int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 7))
	v := make([]float32, tensor.Shape(shape).Size())
	for i := range v {
		v[i] = float32(2*r.Float64() - 1)
	}
	t, err := tensor.FromFloat32s(tensor.Shape(shape), v)
	if err != nil {
		panic(err)
	}
	return t
}

// close reports whether two tensors agree within a relative and absolute tolerance.
func closeTo(t *testing.T, what string, got, want *tensor.Tensor, tol float64) {
	t.Helper()
	if got == nil || want == nil {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	if !got.Shape().Equal(want.Shape()) || got.DType() != want.DType() {
		t.Fatalf("%s: got %v%v, want %v%v", what, got.DType(), got.Shape(), want.DType(), want.Shape())
	}
	for i := 0; i < got.Len(); i++ {
		g, w := got.Float(i), want.Float(i)
		if math.Abs(g-w) > tol*(1+math.Abs(w)) || math.IsNaN(g) != math.IsNaN(w) {
			t.Fatalf("%s: element %d is %g, want %g", what, i, g, w)
		}
	}
}

// eventually retries cond after garbage collections until it holds or 5 s pass: cleanups
// run on a goroutine of their own after a collection.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 5 s of collections", what)
		}
		goruntime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// mlp builds relu(x @ w + b) @ w2 on a graph of its own: the graph the executable and
// meta tests compute. The weights are variables.
func mlp(rows int) (g *tensor.Graph, x, y *tensor.Node, w, b, w2 *tensor.Variable) {
	g = tensor.NewGraph()
	w = tensor.NewVariable("w", random(1, 6, 8))
	b = tensor.NewVariable("b", random(2, 8))
	w2 = tensor.NewVariable("w2", random(3, 8, 3))
	x = g.Input("x", tensor.F32, rows, 6)
	h := tensor.Relu(tensor.Add(tensor.MatMul(x, g.Var(w)), g.Var(b)))
	y = tensor.MatMul(h, g.Var(w2)).SetName("y")
	return g, x, y, w, b, w2
}

// reference computes the mlp on the host in float64.
func reference(x *tensor.Tensor, w, b, w2 *tensor.Variable) *tensor.Tensor {
	rows := x.Shape()[0]
	out := tensor.New(tensor.F32, rows, 3)
	for r := 0; r < rows; r++ {
		h := make([]float64, 8)
		for j := range h {
			s := b.Init().Float(j)
			for k := 0; k < 6; k++ {
				s += x.Float(r*6+k) * w.Init().Float(k*8+j)
			}
			h[j] = math.Max(s, 0)
		}
		for c := 0; c < 3; c++ {
			s := 0.0
			for j := range h {
				s += h[j] * w2.Init().Float(j*3+c)
			}
			out.SetFloat(r*3+c, s)
		}
	}
	return out
}

// stepBoth compiles outputs on one device's runtime and on m, runs steps of them with
// feeds(i), and hands each step's results to check: the comparison every meta-device
// training test makes.
func stepBoth(t *testing.T, one *rt.Runtime, m *rt.Meta, outputs []*tensor.Node, steps int,
	feeds func(i int) map[*tensor.Node]*tensor.Tensor, check func(i int, got, want []*tensor.Tensor)) {
	t.Helper()
	ref, err := one.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Free()
	e, err := m.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Free()
	for i := range steps {
		f := feeds(i)
		want, err := ref.Run(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Run(f)
		if err != nil {
			t.Fatal(err)
		}
		check(i, got, want)
	}
}
