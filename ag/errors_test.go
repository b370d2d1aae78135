package ag_test

import (
	"strings"
	"testing"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

func TestBadInputErrors(t *testing.T) {
	cpuTape(t)
	w := ag.Param(tensor.New(tensor.F32, 3, 2))
	x := ag.Ones(4, 3)
	cases := []struct {
		name string
		do   func()
		want []string
	}{
		{"backward on a non-scalar", func() { ag.MatMul(x, w).Backward() }, []string{"backward", "not a scalar", "ag.Mean"}},
		{"backward without parameters", func() { ag.Sum(x, false).Backward() }, []string{"does not require a gradient"}},
		{"gradient of a constant", func() { x.Grad() }, []string{"has no gradient", "not a parameter"}},
		{"gradient of an intermediate", func() { ag.MatMul(x, w).Grad() }, []string{"intermediate", "RetainGrad"}},
		{"shape mismatch", func() { ag.MatMul(w, x) }, []string{"matmul", "errors_test.go"}},
		{"capture that downloads", func() {
			c := ag.Capture(func(in ...*ag.Tensor) *ag.Tensor {
				y := ag.MatMul(in[0], w)
				_ = ag.Sum(y, false).Item()
				return y
			})
			c.Call(x)
		}, []string{"inside a Capture", "item at", "errors_test.go"}},
		{"capture that uploads", func() {
			c := ag.Capture(func(in ...*ag.Tensor) *ag.Tensor { return ag.Add(ag.MatMul(in[0], w), ag.Ones(4, 2)) })
			c.Call(x)
		}, []string{"host data that is not an input"}},
		{"capture that uses an outside value", func() {
			h := ag.MatMul(x, w)
			h.Float32s()
			c := ag.Capture(func(in ...*ag.Tensor) *ag.Tensor { return ag.Add(in[0], h) })
			c.Call(ag.Ones(4, 2))
		}, []string{"computed outside this Capture"}},
		{"freed capture", func() {
			c := ag.Capture(func(in ...*ag.Tensor) *ag.Tensor { return ag.MatMul(in[0], w) })
			c.Call(x)
			c.Free()
			c.Call(x)
		}, []string{"freed"}},
		{"shape mismatch in a captured step", func() {
			s := ag.CaptureStep(func(in ...*ag.Tensor) *ag.Tensor { return ag.MSE(ag.MatMul(in[0], w), in[1]) }, ag.SGD([]*ag.Tensor{w}, 0.1))
			s.Step(x, ag.Zeros(4, 2))
			s.Step(ag.Ones(4, 5), ag.Zeros(4, 2))
		}, []string{"matmul", "[4 5]"}},
		{"value of a capture's intermediate", func() {
			var inner *ag.Tensor
			c := ag.Capture(func(in ...*ag.Tensor) *ag.Tensor { inner = ag.Relu(in[0]); return ag.Exp(inner) })
			c.Call(x)
			inner.Float32s()
		}, []string{"Capture"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ag.Catch(c.do)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// The tape is still usable after every error.
	loss := ag.Mean(ag.MatMul(x, w), false)
	loss.Backward()
	if got := w.Grad().Float64s(); got[0] != 0.5 {
		t.Errorf("after the errors, dL/dw = %v, want 0.5 everywhere", got)
	}
}
