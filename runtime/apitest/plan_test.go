package apitest

import (
	"errors"
	"math"
	goruntime "runtime"
	"strings"
	"testing"

	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestExecutableSteps drives an executable as a plan: Set, Compute, Read, Bind to a
// device buffer (on its device and on another), ComputeAsync, and errors after Free.
func TestExecutableSteps(t *testing.T) {
	devs := devices(t)
	for _, d := range devs {
		t.Run(d.ID(), func(t *testing.T) {
			r := runtimeOn(t, d)
			_, x, y, w, b, w2 := mlp(5)
			exe, err := r.Compile([]*tensor.Node{y})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 { // compute many times
				in := random(uint64(10+i), 5, 6)
				if err := exe.Set(x, in); err != nil {
					t.Fatal(err)
				}
				if err := exe.Compute(); err != nil {
					t.Fatal(err)
				}
				got, err := exe.Read(y)
				if err != nil {
					t.Fatal(err)
				}
				closeTo(t, "Compute", got, reference(in, w, b, w2), 1e-5)
			}
			for _, e := range devs {
				in := random(20, 5, 6)
				buf, err := e.AllocTensor(tensor.F32, rt.UsageCompute, 5, 6)
				if err != nil {
					t.Fatal(err)
				}
				if err := buf.Set(in); err != nil {
					t.Fatal(err)
				}
				if err := exe.Bind(x, buf); err != nil {
					t.Fatal(err)
				}
				ev, err := exe.ComputeAsync()
				if err != nil {
					t.Fatal(err)
				}
				if ev.Kind() != "compute" {
					t.Errorf("ComputeAsync gave %v", ev)
				}
				got, err := exe.Read(y) // waits for the computation
				if err != nil {
					t.Fatal(err)
				}
				if !ev.Done() {
					t.Errorf("Read returned before the computation completed")
				}
				closeTo(t, "bound to a buffer on "+e.ID(), got, reference(in, w, b, w2), 1e-5)
				buf.Free()
			}
			// The bound buffer is freed: Compute says so.
			if err := exe.Compute(); !errors.Is(err, rt.ErrFreed) {
				t.Errorf("Compute with a freed bound buffer: %v", err)
			}
			small, _ := d.Alloc(8, rt.UsageAny)
			if err := exe.Bind(x, small); err == nil || !strings.Contains(err.Error(), "smaller") {
				t.Errorf("Bind to a small buffer: %v", err)
			}
			small.Free()
			if err := exe.Set(x, random(1, 4, 6)); err == nil || !strings.Contains(err.Error(), "wants f32[5 6]") {
				t.Errorf("Set of a wrong shape: %v", err)
			}
			if err := exe.Set(y, random(1, 5, 3)); err == nil || !strings.Contains(err.Error(), "not an input") {
				t.Errorf("Set of an output: %v", err)
			}
			if _, err := exe.Read(x); err == nil || !strings.Contains(err.Error(), "not an output") {
				t.Errorf("Read of an input: %v", err)
			}
			exe.Free()
			exe.Free()
			if err := exe.Compute(); !errors.Is(err, rt.ErrFreed) {
				t.Errorf("Compute after Free: %v", err)
			}
			if _, err := exe.Read(y); !errors.Is(err, rt.ErrFreed) {
				t.Errorf("Read after Free: %v", err)
			}
			if err := exe.Set(x, random(1, 5, 6)); !errors.Is(err, rt.ErrFreed) {
				t.Errorf("Set after Free: %v", err)
			}
			// An executable of a closed runtime refuses to run.
			r2 := runtimeOn(t, d)
			exe2, err := r2.Compile([]*tensor.Node{y})
			if err != nil {
				t.Fatal(err)
			}
			r2.Close()
			if _, err := exe2.Run(map[*tensor.Node]*tensor.Tensor{x: random(1, 5, 6)}); err == nil || !strings.Contains(err.Error(), "closed") {
				t.Errorf("Run after the runtime closed: %v", err)
			}
			exe2.Free()
		})
	}
}

// TestExecutablesFreedWhenCollected: an executable dropped without Free gives its
// buffers back when collected.
func TestExecutablesFreedWhenCollected(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		r := runtimeOn(t, d)
		inUse := func() int64 { return r.Memory().Total() }
		_, x, y, _, _, _ := mlp(64)
		warm, err := r.Compile([]*tensor.Node{y}) // makes the variables resident
		if err != nil {
			t.Fatal(err)
		}
		warm.Free()
		before := inUse()
		func() {
			var held []*rt.Executable // referenced until counted: a collection may come at any time
			for range 3 {
				e, err := r.Compile([]*tensor.Node{y})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.Run(map[*tensor.Node]*tensor.Tensor{x: random(1, 64, 6)}); err != nil {
					t.Fatal(err)
				}
				held = append(held, e)
			}
			if inUse() <= before {
				t.Fatalf("memory %d after three compiles, %d before", inUse(), before)
			}
			goruntime.KeepAlive(held)
		}()
		eventually(t, "dropped executables freed", func() bool { return inUse() <= before })
	})
}

// TestGradientsByHand builds the backward graph of a loss and reads the gradients on
// every device, against the closed form.
func TestGradientsByHand(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		r := runtimeOn(t, d)
		g := tensor.NewGraph()
		x := g.Input("x", tensor.F32, 4, 3)
		target := g.Input("target", tensor.F32, 4, 2)
		w := g.Var(tensor.NewVariable("w", random(30, 3, 2)))
		diff := tensor.Sub(tensor.MatMul(x, w), target)
		loss := tensor.Mean(tensor.Square(diff), nil, false)
		grads := tensor.Grad(loss, []*tensor.Node{w, x})
		exe, err := r.Compile([]*tensor.Node{loss, grads[0], grads[1]})
		if err != nil {
			t.Fatal(err)
		}
		defer exe.Free()
		xv, tv := random(31, 4, 3), random(32, 4, 2)
		out, err := exe.Run(map[*tensor.Node]*tensor.Tensor{x: xv, target: tv})
		if err != nil {
			t.Fatal(err)
		}
		wv := w.Variable().Init()
		// d loss/d w = 2/8 xᵀ (x w - t); d loss/d x = 2/8 (x w - t) wᵀ.
		res := make([]float64, 8)
		var l float64
		for i := range 4 {
			for j := range 2 {
				s := -tv.Float(i*2 + j)
				for k := range 3 {
					s += xv.Float(i*3+k) * wv.Float(k*2+j)
				}
				res[i*2+j] = s
				l += s * s / 8
			}
		}
		gw, gx := tensor.New(tensor.F32, 3, 2), tensor.New(tensor.F32, 4, 3)
		for k := range 3 {
			for j := range 2 {
				s := 0.0
				for i := range 4 {
					s += xv.Float(i*3+k) * res[i*2+j] / 4
				}
				gw.SetFloat(k*2+j, s)
			}
		}
		for i := range 4 {
			for k := range 3 {
				s := 0.0
				for j := range 2 {
					s += res[i*2+j] * wv.Float(k*2+j) / 4
				}
				gx.SetFloat(i*3+k, s)
			}
		}
		if math.Abs(out[0].Float(0)-l) > 1e-5 {
			t.Errorf("loss %g, want %g", out[0].Float(0), l)
		}
		closeTo(t, "d loss/d w", out[1], gw, 1e-5)
		closeTo(t, "d loss/d x", out[2], gx, 1e-5)
	})
}
