package cpu_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

// TestCustomExamples runs the three custom ops that ship against direct computations.
func TestCustomExamples(t *testing.T) {
	e := newEnv(t)
	x, xv := e.f32(3, 5)
	xe, xev := e.f32(2, 4)
	med := tensor.Custom("row_median", []*tensor.Node{x}, tensor.Shape{3, 1})
	medEven := tensor.Custom("row_median", []*tensor.Node{xe}, tensor.Shape{2, 1})
	perm := tensor.Custom("row_permute", []*tensor.Node{x}, x.Shape(), 4, 0, 3, 1, 2)
	clip := tensor.CustomInPlace("clip_inplace", x, nil, -0.5, 0.75)
	outs := e.run(med, medEven, perm, clip, x)
	median := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	var wantMed, wantEven, wantPerm, wantClip []float64
	for r := range 3 {
		row := xv[5*r : 5*r+5]
		wantMed = append(wantMed, median(row))
		for _, p := range []int{4, 0, 3, 1, 2} {
			wantPerm = append(wantPerm, row[p])
		}
	}
	for r := range 2 {
		wantEven = append(wantEven, median(xev[4*r:4*r+4]))
	}
	for _, v := range xv {
		wantClip = append(wantClip, math.Min(math.Max(v, -0.5), 0.75))
	}
	check(t, "row_median", outs[0], tensor.Shape{3, 1}, wantMed, 1e-7)
	check(t, "row_median even", outs[1], tensor.Shape{2, 1}, wantEven, 1e-7)
	check(t, "row_permute", outs[2], x.Shape(), wantPerm, 0)
	check(t, "clip_inplace", outs[3], x.Shape(), wantClip, 0)
	check(t, "clip_inplace leaves a non-variable input alone", outs[4], x.Shape(), xv, 0)
}

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

// TestCustomHalf: a custom op on f16 data sees float32 values and returns f16.
func TestCustomHalf(t *testing.T) {
	e := newEnv(t)
	x, xv := e.input(tensor.F16, -2, 2, 2, 3)
	out := e.run(tensor.CustomInPlace("clip_inplace", x, nil, -1, 1))[0]
	want := make([]float64, len(xv))
	for i, v := range xv {
		want[i] = math.Min(math.Max(v, -1), 1)
	}
	if out.DType() != tensor.F16 {
		t.Errorf("dtype %v", out.DType())
	}
	check(t, "clip_inplace f16", out, x.Shape(), want, 0)
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
