package test

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/nn"
	"github.com/gml-dev/gml/tensor"
)

// TestFromNetTrainsTheModelItself trains a compiled nn model with an ag loop through
// FromNet, then checks that nn sees the trained weights and that Fit continues.
func TestFromNetTrainsTheModelItself(t *testing.T) {
	nn.SetSeed(2)
	net := nn.Sequential(nn.Dense(16, nn.Activation("relu"), nn.InputShape(4)), nn.BatchNorm(), nn.Dropout(0.2), nn.Dense(3))
	if err := net.Compile(nn.Adam(1e-2), nn.Loss("mse"), nn.Device("cpu")); err != nil {
		t.Fatal(err)
	}
	defer net.Free()
	view, err := ag.FromNet(net)
	if err != nil {
		t.Fatal(err)
	}
	named := ag.NamedParameters(view)
	if len(named) != 6 || len(ag.Buffers(view)) != 2 {
		t.Fatalf("parameters %v, buffers %v", named, ag.Buffers(view))
	}
	xt := tensor.New(tensor.F32, 32, 4)
	yt := tensor.New(tensor.F32, 32, 3)
	for i := range xt.Float32s() {
		xt.Float32s()[i] = float32(math.Sin(float64(i)))
	}
	for i := range yt.Float32s() {
		yt.Float32s()[i] = float32(math.Cos(float64(i) / 3))
	}
	var first, last float64
	ag.WithTape(view.Tape(), func() {
		x, y := ag.Const(xt), ag.Const(yt)
		opt := ag.Adam(ag.Parameters(view), 1e-2)
		for i := 0; i < 60; i++ {
			opt.ZeroGrad()
			loss := ag.MSE(view.Forward(x), y)
			loss.Backward()
			opt.Step()
			if i == 0 {
				first = loss.Item()
			}
			last = loss.Item()
		}
		// Evaluation mode matches nn's Predict on the same weights.
		ag.SetTraining(view, false)
		p, err := net.Predict(xt)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxDiff(view.Forward(x).Float64s(), ag.Const(p).Float64s()); d > 1e-5 {
			t.Errorf("the view and nn's Predict differ by %v", d)
		}
	})
	if !(last < first/2) {
		t.Errorf("ag's loop did not train the nn model: loss %v -> %v", first, last)
	}
	hist, err := net.Fit(xt, yt, nn.Epochs(5), nn.BatchSize(32), nn.Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if l := hist.Last("loss"); l > first {
		t.Errorf("Fit after the ag loop starts over: loss %v (ag began at %v)", l, first)
	}
}

// maxDiff is the largest elementwise difference, relative where values exceed 1.
func maxDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i])/math.Max(1, math.Abs(b[i])))
	}
	return d
}
