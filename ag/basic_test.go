package ag_test

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

// cpuTape makes a tape on the CPU and makes it current for the test.
func cpuTape(t *testing.T) *ag.Tape {
	t.Helper()
	tp, err := ag.NewTape(ag.Device("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	prev := ag.SetTape(tp)
	t.Cleanup(func() { ag.SetTape(prev); tp.Free() })
	return tp
}

func TestLinearRegressionGradients(t *testing.T) {
	cpuTape(t)
	w := ag.Param(mustT(tensor.FromFloat32s(tensor.Shape{2, 1}, []float32{0.5, -1})))
	b := ag.Param(tensor.Scalar(tensor.F32, 0.25))
	x := ag.FromFloat32s([]int{3, 2}, []float32{1, 2, 3, 4, 5, 6})
	y := ag.FromFloat32s([]int{3, 1}, []float32{1, 0, -1})
	pred := ag.Add(ag.MatMul(x, w), b)
	loss := ag.MSE(pred, y)
	loss.Backward()
	// pred = [-1.25, -2.25, -3.25]; d = pred - y = [-2.25, -2.25, -2.25]
	if got, want := loss.Item(), (2.25*2.25*3)/3; math.Abs(got-want) > 1e-5 {
		t.Errorf("loss = %v, want %v", got, want)
	}
	// dL/dw = 2/3 Σ d_i x_i = 2/3 * -2.25 * [9, 12]; dL/db = 2/3 * 3 * -2.25
	gw := w.Grad().Float64s()
	if want := []float64{-13.5, -18}; math.Abs(gw[0]-want[0]) > 1e-4 || math.Abs(gw[1]-want[1]) > 1e-4 {
		t.Errorf("dL/dw = %v, want %v", gw, want)
	}
	if got := b.Grad().Item(); math.Abs(got+4.5) > 1e-5 {
		t.Errorf("dL/db = %v, want -4.5", got)
	}
	if got := pred.Float64s(); math.Abs(got[2]+3.25) > 1e-5 {
		t.Errorf("pred = %v", got)
	}
}

func TestTrainingLoopConverges(t *testing.T) {
	tp := cpuTape(t)
	ag.SetSeed(1)
	w := ag.Param(tensor.New(tensor.F32, 2, 1))
	b := ag.Param(tensor.Scalar(tensor.F32, 0))
	xs := make([]float32, 64*2)
	ys := make([]float32, 64)
	for i := 0; i < 64; i++ {
		xs[2*i], xs[2*i+1] = float32(i%8)/4-1, float32(i/8)/4-1
		ys[i] = 3*xs[2*i] - 2*xs[2*i+1] + 0.5
	}
	x := ag.FromFloat32s([]int{64, 2}, xs)
	y := ag.FromFloat32s([]int{64, 1}, ys)
	opt := ag.Adam([]*ag.Tensor{w, b}, 0.1)
	var last float64
	for i := 0; i < 300; i++ {
		opt.ZeroGrad()
		loss := ag.MSE(ag.Add(ag.MatMul(x, w), b), y)
		loss.Backward()
		opt.Step()
		last = loss.Item()
	}
	if last > 1e-3 {
		t.Errorf("loss after 300 steps = %v", last)
	}
	got := w.Float64s()
	if math.Abs(got[0]-3) > 0.05 || math.Abs(got[1]+2) > 0.05 || math.Abs(b.Item()-0.5) > 0.05 {
		t.Errorf("w = %v, b = %v; want [3 -2], 0.5", got, b.Item())
	}
	if opt.Steps() != 300 {
		t.Errorf("steps = %d", opt.Steps())
	}
	st := tp.CacheStats()
	if st.Misses > 3 || st.Hits < 290 {
		t.Errorf("trace cache: %+v; want the loop to reuse one compiled step", st)
	}
}

func mustT(t *tensor.Tensor, err error) *tensor.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}
