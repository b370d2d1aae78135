package runtime

import (
	"context"
	"errors"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/gml-dev/gml/tensor"
)

var allFake = []tensor.Op{tensor.OpAdd, tensor.OpMul, tensor.OpRelu, tensor.OpNeg, tensor.OpReshape, tensor.OpAssign}

func vec(v ...float32) *tensor.Tensor {
	t, err := tensor.FromFloat32s(tensor.Shape{len(v)}, v)
	if err != nil {
		panic(err)
	}
	return t
}

func TestRunPlacesAndComputes(t *testing.T) {
	cases := []struct {
		name          string
		gpuOps        []tensor.Op // nil: the CPU is the preferred device
		wantFallbacks int
		wantCrossings bool
	}{
		{"cpu only", nil, 0, false},
		{"gpu runs everything", allFake, 0, true},
		{"gpu lacks relu and mul", []tensor.Op{tensor.OpAdd, tensor.OpNeg, tensor.OpReshape, tensor.OpAssign}, 2, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cpu := newFake("cpu", allFake...)
			pref := Backend(cpu)
			if c.gpuOps != nil {
				pref = newFake("gpu", c.gpuOps...)
			}
			r := newRuntime(pref, cpu)
			g := tensor.NewGraph()
			x := g.Input("x", tensor.F32, 4)
			w := g.Var(tensor.NewVariable("w", vec(1, -5, 2, -1)))
			h := tensor.Relu(tensor.Add(x, w))       // relu(x+w)
			y := tensor.Mul(h, x)                    // relu(x+w)*x
			z := tensor.Neg(tensor.Reshape(y, 2, 2)) // -(...) as 2x2
			e, err := r.Compile([]*tensor.Node{z, h})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Free()
			out, err := e.Run(map[*tensor.Node]*tensor.Tensor{x: vec(1, 2, 3, 4)})
			if err != nil {
				t.Fatal(err)
			}
			if want := vec(-2, 0, -15, -12); !out[0].Clone().AllClose(mustReshape(want, 2, 2), 0, 0) {
				t.Errorf("z = %v, want %v", out[0], want)
			}
			if want := vec(2, 0, 5, 3); !out[1].AllClose(want, 0, 0) {
				t.Errorf("h = %v, want %v", out[1], want)
			}
			if got := len(e.Fallbacks()); got != c.wantFallbacks {
				t.Errorf("fallbacks = %d, want %d", got, c.wantFallbacks)
			}
			if st := r.Stats(); (st.Uploads > 0) != c.wantCrossings || st.Fallbacks != c.wantFallbacks {
				t.Errorf("stats = %+v, want crossings %v and %d fallbacks", st, c.wantCrossings, c.wantFallbacks)
			}
		})
	}
}

func mustReshape(t *tensor.Tensor, shape ...int) *tensor.Tensor {
	r, err := t.Reshape(shape...)
	if err != nil {
		panic(err)
	}
	return r
}

func TestActivationBuffersAreReused(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	r := newRuntime(cpu, cpu)
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 1024)
	y := x
	for i := 0; i < 20; i++ {
		y = tensor.Neg(y)
	}
	e, err := r.Compile([]*tensor.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Free()
	// The input, the output, and two buffers ping-ponging in between.
	if got := len(e.place.owned); got > 4 {
		t.Errorf("a chain of 20 negations allocated %d buffers, want at most 4", got)
	}
	in := make([]float32, 1024)
	in[7] = 3
	xt, _ := tensor.FromFloat32s(tensor.Shape{1024}, in)
	out, err := e.Run(map[*tensor.Node]*tensor.Tensor{x: xt})
	if err != nil {
		t.Fatal(err)
	}
	if v := out[0].Float32s()[7]; v != 3 {
		t.Errorf("after 20 negations element 7 = %v, want 3", v)
	}
}

func TestVariablesPersistAndUpdateInPlace(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	gpu := newFake("gpu", allFake...)
	r := newRuntime(gpu, cpu)
	v := tensor.NewVariable("counter", vec(0, 0))
	g := tensor.NewGraph()
	one := g.Const(vec(1, 1))
	vn := g.Var(v)
	read := tensor.Neg(vn) // reads the old value; must run before the update
	upd := tensor.Apply(tensor.OpAssign, nil, vn, tensor.Add(vn, one))
	e, err := r.Compile([]*tensor.Node{upd, read})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		out, err := e.Run(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := out[1].Float32s()[0]; got != -float32(i) {
			t.Fatalf("run %d read %v, want the value before the update, %v", i, got, -float32(i))
		}
	}
	got, err := r.Read(v)
	if err != nil {
		t.Fatal(err)
	}
	if !got.AllClose(vec(3, 3), 0, 0) {
		t.Errorf("after 3 updates variable = %v, want [3 3]", got)
	}
	// A second graph sees the updated value: variables outlive executables.
	g2 := tensor.NewGraph()
	e2, err := r.Compile([]*tensor.Node{tensor.Neg(g2.Var(v))})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := e2.Run(nil)
	if out[0].Float32s()[1] != -3 {
		t.Errorf("second graph read %v, want -3", out[0])
	}
	e.Free()
	e2.Free()
	r.Close()
	if n := len(gpu.live) + len(cpu.live); n != 0 {
		t.Errorf("%d buffers still allocated after Free and Close", n)
	}
	if total := r.Memory().Total(); total != 0 {
		t.Errorf("memory report says %d bytes in use after Close", total)
	}
}

func TestThousandRunsLeakNothing(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	gpu := newFake("gpu", tensor.OpAdd)
	r := newRuntime(gpu, cpu)
	for i := 0; i < 1000; i++ {
		g := tensor.NewGraph()
		x := g.Input("x", tensor.F32, 2)
		e, err := r.Compile([]*tensor.Node{tensor.Relu(tensor.Add(x, x))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(map[*tensor.Node]*tensor.Tensor{x: vec(1, -1)}); err != nil {
			t.Fatal(err)
		}
		e.Free()
	}
	if n := len(gpu.live) + len(cpu.live); n != 0 {
		t.Errorf("%d buffers leaked after 1000 compile/run/free cycles", n)
	}
	if gpu.prepared != gpu.released {
		t.Errorf("prepared %d programs, released %d", gpu.prepared, gpu.released)
	}
}

func TestRunErrors(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	r := newRuntime(cpu, cpu)
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 3)
	e, err := r.Compile([]*tensor.Node{tensor.Neg(x)})
	if err != nil {
		t.Fatal(err)
	}
	other := tensor.NewGraph().Input("x", tensor.F32, 3)
	cases := []struct {
		name  string
		feeds map[*tensor.Node]*tensor.Tensor
		want  string
	}{
		{"missing", nil, `input "x" (f32[3]) was not fed`},
		{"wrong shape", map[*tensor.Node]*tensor.Tensor{x: vec(1, 2)}, `input "x" wants f32[3], was fed f32[2]`},
		{"wrong dtype", map[*tensor.Node]*tensor.Tensor{x: tensor.New(tensor.I32, 3)}, `wants f32[3], was fed i32[3]`},
		{"foreign input", map[*tensor.Node]*tensor.Tensor{x: vec(1, 2, 3), other: vec(1, 2, 3)}, "the outputs do not depend on"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.Run(c.feeds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := r.Compile(nil); err == nil {
		t.Error("Compile(nil) succeeded")
	}
	if _, err := r.Compile([]*tensor.Node{tensor.Neg(x), other}); err == nil || !strings.Contains(err.Error(), "another graph") {
		t.Errorf("mixing graphs: %v", err)
	}
	e.Free()
	if _, err := e.Run(nil); err == nil || !strings.Contains(err.Error(), "freed") {
		t.Errorf("Run after Free: %v", err)
	}
}

func TestRunStopsWhenInterrupted(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	r := newRuntime(cpu, cpu)
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 1)
	e, err := r.Compile([]*tensor.Node{tensor.Neg(x)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Free()
	ctx, cancel := context.WithCancel(context.Background())
	restore := BindInterrupt(ctx)
	defer restore()
	cancel()
	if _, err := e.Run(map[*tensor.Node]*tensor.Tensor{x: vec(1)}); !errors.Is(err, ErrInterrupted) {
		t.Errorf("Run after cancel: %v, want ErrInterrupted", err)
	}
}

func TestProfileReport(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	r := newRuntime(cpu, cpu)
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 2)
	e, _ := r.Compile([]*tensor.Node{tensor.Add(tensor.Neg(x), x)})
	defer e.Free()
	r.Profile(true)
	for i := 0; i < 3; i++ {
		if _, err := e.Run(map[*tensor.Node]*tensor.Tensor{x: vec(1, 2)}); err != nil {
			t.Fatal(err)
		}
	}
	rep := r.ProfileReport()
	if len(rep.Rows) != 2 || rep.Rows[0].Count != 3 {
		t.Fatalf("profile rows %+v, want 2 op kinds run 3 times each", rep.Rows)
	}
	if s := rep.String(); !strings.Contains(s, "neg") || !strings.Contains(s, "add") {
		t.Errorf("profile table lacks the ops:\n%s", s)
	}
	if _, ok := rep.MIMEBundle()["text/html"]; !ok {
		t.Error("profile report has no HTML rendering")
	}
}

// A value copied in from another backend lands before its segment starts, so its
// buffer must not be one that an earlier node of the same segment frees.
func TestTransferDoesNotReuseBuffersOfItsSegment(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	gpu := newFake("gpu", tensor.OpAdd, tensor.OpNeg, tensor.OpReshape, tensor.OpAssign)
	r := newRuntime(gpu, cpu)
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 4)
	a := tensor.Neg(x)      // gpu
	c := tensor.Relu(a)     // cpu: the fallback splits the graph
	n1 := tensor.Neg(a)     // gpu, second segment
	n2 := tensor.Neg(n1)    // frees n1's buffer
	n3 := tensor.Add(n2, c) // needs c copied in
	e, err := r.Compile([]*tensor.Node{n3})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Free()
	out, err := e.Run(map[*tensor.Node]*tensor.Tensor{x: vec(1, 2, -3, 4)})
	if err != nil {
		t.Fatal(err)
	}
	if want := vec(-1, -2, 6, -4); !out[0].AllClose(want, 0, 0) {
		t.Errorf("a + relu(a) = %v, want %v", out[0], want)
	}
}

// TestKeepSkipsUploads feeds a kept tensor repeatedly to a graph on a fake GPU: it is
// uploaded once, again after Keep is called anew (its data changed), and on every run
// after Unkeep.
func TestKeepSkipsUploads(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   func(r *Runtime, x *tensor.Tensor) []bool
		want    []float32 // the first output element after each run
		uploads int       // uploads of x
	}{
		{"kept", func(r *Runtime, x *tensor.Tensor) []bool { r.Keep(x); return []bool{true, true, true} }, []float32{2, 2, 2}, 1},
		{"kept again after a change", func(r *Runtime, x *tensor.Tensor) []bool {
			r.Keep(x)
			return []bool{true, false, true} // false: change x and Keep it again before the run
		}, []float32{2, 20, 20}, 2},
		{"unkept", func(r *Runtime, x *tensor.Tensor) []bool { r.Keep(x); r.Unkeep(x); return []bool{true, true, true} }, []float32{2, 2, 2}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRuntime(newFake("gpu", allFake...), newFake("cpu", allFake...))
			g := tensor.NewGraph()
			in := g.Input("x", tensor.F32, 4)
			e, err := r.Compile([]*tensor.Node{tensor.Add(in, in)})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Free()
			x := vec(1, 2, 3, 4)
			for i, same := range tc.steps(r, x) {
				if !same {
					x.Float32s()[0] = 10
					r.Keep(x)
				}
				before := r.Stats().Uploads
				out, err := e.Run(map[*tensor.Node]*tensor.Tensor{in: x})
				if err != nil {
					t.Fatal(err)
				}
				if got := out[0].Float32s()[0]; got != tc.want[i] {
					t.Errorf("run %d: y[0] = %v, want %v", i, got, tc.want[i])
				}
				tc.uploads -= r.Stats().Uploads - before
			}
			if tc.uploads != 0 {
				t.Errorf("x was uploaded %+d times more than expected (stats %+v)", -tc.uploads, r.Stats())
			}
		})
	}
}

// TestKeepHoldsNothing keeps tensors that then become unreachable: they are collected
// and the runtime forgets them, so keeping every new batch leaks nothing.
func TestKeepHoldsNothing(t *testing.T) {
	r := newRuntime(newFake("gpu", allFake...), newFake("cpu", allFake...))
	for i := 0; i < 100; i++ {
		r.Keep(vec(1, 2, 3, 4))
	}
	kept := func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.kept)
	}
	for start := time.Now(); kept() > 0 && time.Since(start) < 5*time.Second; {
		goruntime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := kept(); n > 0 {
		t.Errorf("%d of 100 unreachable kept tensors are still remembered", n)
	}
}

func TestRunResidentKeepsOutputsOnTheDevice(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	r := newRuntime(newFake("gpu", allFake...), cpu)
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 2)
	w := tensor.NewVariable("w", vec(1, 2))
	h := tensor.Relu(tensor.Add(x, g.Var(w)))
	e, err := r.Compile([]*tensor.Node{h, tensor.Assign(g.Var(w), tensor.Neg(h))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Free()
	if err := e.RunResident(map[*tensor.Node]*tensor.Tensor{x: vec(1, -5)}); err != nil {
		t.Fatal(err)
	}
	if st := r.Stats(); st.Downloads != 0 {
		t.Errorf("RunResident downloaded %d times", st.Downloads)
	}
	got, err := e.Output(0)
	if err != nil {
		t.Fatal(err)
	}
	if want := vec(2, 0); !got.AllClose(want, 0, 0) {
		t.Errorf("h = %v, want %v", got, want)
	}
	if got, err := e.Output(1); err != nil || !got.AllClose(vec(-2, 0), 0, 0) {
		t.Errorf("the written variable reads %v (%v), want [-2 0]", got, err)
	}
	if m := e.Memory(); m[PoolIO] < 2*4 || m[PoolWeights] != 0 {
		t.Errorf("Memory() = %v: want the input and the output (8 bytes each at least) and no variable", m)
	}
	if _, err := e.Output(2); err == nil || !strings.Contains(err.Error(), "output 2") {
		t.Errorf("Output(2) of 2 outputs: %v", err)
	}
	e.Free()
	if _, err := e.Output(0); err == nil || !strings.Contains(err.Error(), "freed") {
		t.Errorf("Output after Free: %v", err)
	}
}

// TestFailedAllocationIsAnError: a buffer the backend refuses fails Compile with the
// backend's error, and what the plan had taken goes back (it once panicked instead).
func TestFailedAllocationIsAnError(t *testing.T) {
	cpu := newFake("cpu", allFake...)
	r := newRuntime(cpu, cpu)
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 4)
	small := tensor.Relu(x)
	big := tensor.Neg(g.Input("y", tensor.F32, 1<<29))
	_, err := r.Compile([]*tensor.Node{small, big})
	if err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("Compile = %v, want the backend's out-of-memory error", err)
	}
	if n := len(cpu.live); n != 0 {
		t.Errorf("%d buffers still live after the failed Compile", n)
	}
}
