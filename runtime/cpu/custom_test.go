package cpu_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

// TestCustomThreads registers a kernel that records its calls: they cover every row
// exactly once, large outputs split over several calls, and Serial gives one call.
func TestCustomThreads(t *testing.T) {
	var mu sync.Mutex
	var calls [][2]int
	record := func(c *runtime.CustomCall) error {
		mu.Lock()
		calls = append(calls, [2]int{c.Lo, c.Hi})
		mu.Unlock()
		for r := c.Lo; r < c.Hi; r++ {
			for j := range c.Row {
				c.Out[r*c.Row+j] = c.In[0][r*c.Row+j] * 2
			}
		}
		return nil
	}
	if err := runtime.RegisterCustomOp("test_double", record, runtime.WithGrain(8)); err != nil {
		t.Fatal(err)
	}
	if err := runtime.RegisterCustomOp("test_double_serial", record, runtime.Serial()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"test_double", "test_double_serial"} {
		calls = nil
		e := newEnv(t)
		x, xv := e.f32(64, 3)
		out := e.run(tensor.Custom(name, []*tensor.Node{x}, x.Shape()))[0]
		want := make([]float64, len(xv))
		for i, v := range xv {
			want[i] = 2 * v
		}
		check(t, name, out, x.Shape(), want, 0)
		covered := make([]int, 64)
		for _, c := range calls {
			for r := c[0]; r < c[1]; r++ {
				covered[r]++
			}
		}
		for r, k := range covered {
			if k != 1 {
				t.Errorf("%s: row %d computed %d times (calls %v)", name, r, k, calls)
			}
		}
		serial := name == "test_double_serial"
		if serial && len(calls) != 1 || !serial && parallel.Workers() > 1 && len(calls) < 2 {
			t.Errorf("%s: %d calls %v with %d workers", name, len(calls), calls, parallel.Workers())
		}
	}
}

// TestCustomErrors: an unknown name fails at build time naming the registered ops; a
// kernel's error and a kernel's panic fail the run naming the node.
func TestCustomErrors(t *testing.T) {
	err := tensor.Catch(func() {
		g := tensor.NewGraph()
		tensor.Custom("row_medain", []*tensor.Node{g.Input("x", tensor.F32, 2)}, tensor.Shape{1})
	})
	if err == nil || !strings.Contains(err.Error(), `"row_medain"`) || !strings.Contains(err.Error(), "row_median") {
		t.Errorf("unknown custom op: %v", err)
	}
	runtime.RegisterCustomOp("test_fails", func(*runtime.CustomCall) error { return errors.New("bad row") })
	runtime.RegisterCustomOp("test_panics", func(c *runtime.CustomCall) error { _ = c.In[7]; return nil })
	for _, name := range []string{"test_fails", "test_panics"} {
		e := newEnv(t)
		x, _ := e.f32(4, 4)
		_, err := cputest.Run([]*tensor.Node{tensor.Custom(name, []*tensor.Node{x}, x.Shape())}, e.feeds)
		if err == nil || !strings.Contains(err.Error(), "custom") {
			t.Errorf("%s: %v", name, err)
		}
	}
	e := newEnv(t)
	x, _ := e.f32(4, 4)
	if _, err := cputest.Run([]*tensor.Node{tensor.Custom("row_permute", []*tensor.Node{x}, x.Shape(), 0, 0, 1, 2)}, e.feeds); err == nil || !strings.Contains(err.Error(), "not a permutation") {
		t.Errorf("row_permute with a bad permutation: %v", err)
	}
}

// TestCustomAssignVariable clips a variable in place through the runtime, twice: the
// variable holds the clipped values afterwards.
func TestCustomAssignVariable(t *testing.T) {
	rt, err := runtime.New(runtime.Device("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	init, _ := tensor.FromFloat32s(tensor.Shape{2, 3}, []float32{-3, -0.5, 0, 0.5, 2, 9})
	v := tensor.NewVariable("w", init)
	g := tensor.NewGraph()
	clip := tensor.CustomInPlace("clip_inplace", g.Var(v), nil, -1, 1)
	if clip.Op() != tensor.OpCustomAssign {
		t.Fatalf("in place on a variable built %v", clip)
	}
	exe, err := rt.Compile([]*tensor.Node{clip})
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Free()
	for range 2 {
		if _, err := exe.Run(nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := rt.Read(v)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "clipped variable", got, tensor.Shape{2, 3}, []float64{-1, -0.5, 0, 0.5, 1, 1}, 0)
}
