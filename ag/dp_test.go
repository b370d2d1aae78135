package ag_test

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

type dpNet struct {
	A, B *ag.Linear
}

func (n *dpNet) Forward(x *ag.Tensor) *ag.Tensor { return n.B.Forward(ag.Tanh(n.A.Forward(x))) }

func dpData() (*tensor.Tensor, *tensor.Tensor) {
	x := tensor.New(tensor.F32, 48, 3)
	y := tensor.New(tensor.F32, 48, 1)
	for i := 0; i < 48; i++ {
		for j := 0; j < 3; j++ {
			x.Float32s()[3*i+j] = float32(math.Sin(float64(i*3 + j)))
		}
		y.Float32s()[i] = float32(math.Cos(float64(i)))
	}
	return x, y
}

// TestDPTrainMatchesOneModel trains three replicas on one tape and one model on whole
// batches: the replicas stay identical and equal the single model, step after step.
func TestDPTrainMatchesOneModel(t *testing.T) {
	cpuTape(t)
	x, y := dpData()
	ag.SetSeed(4)
	single := &dpNet{ag.NewLinear(3, 8), ag.NewLinear(8, 1)}
	ag.SetSeed(4)
	make := func() ag.Module { return &dpNet{ag.NewLinear(3, 8), ag.NewLinear(8, 1)} }
	dp := ag.DPTrain(make, ag.NewDataLoader(x, y, 16), ag.MSE, ag.Replicas(3), ag.Epochs(4),
		ag.OptimizerFunc(func(p []*ag.Tensor) *ag.Optimizer { return ag.SGD(p, 0.1, ag.Momentum(0.9)) }))
	opt := ag.SGD(ag.Parameters(single), 0.1, ag.Momentum(0.9))
	dl := ag.NewDataLoader(x, y, 16)
	var losses []float64
	for e := 0; e < 4; e++ {
		sum := 0.0
		for dl.Next() {
			bx, by := dl.Batch()
			opt.ZeroGrad()
			loss := ag.MSE(single.Forward(bx), by)
			loss.Backward()
			opt.Step()
			sum += loss.Item()
		}
		losses = append(losses, sum/3)
	}
	want := ag.Parameters(single)
	for r, m := range dp.Replicas {
		for i, p := range ag.Parameters(m) {
			got := p.Float64s()
			if r > 0 {
				if d := maxDiff(got, ag.Parameters(dp.Replicas[0])[i].Float64s()); d != 0 {
					t.Errorf("replica %d parameter %d differs from replica 0 by %v", r, i, d)
				}
			}
			if d := maxDiff(got, want[i].Float64s()); d > 1e-5 {
				t.Errorf("replica %d parameter %d differs from the single model by %v", r, i, d)
			}
		}
	}
	if d := maxDiff(dp.Losses, losses); d > 1e-5 {
		t.Errorf("losses %v, single model %v", dp.Losses, losses)
	}
}

// TestDPTrainAcrossTapes puts replicas on the CPU and on the GPU (lavapipe here): the
// gradients average through the host and the weights stay identical.
func TestDPTrainAcrossTapes(t *testing.T) {
	cpu := cpuTape(t)
	gpu, err := ag.NewTape(ag.Device("gpu"))
	if err != nil {
		t.Skipf("no GPU: %v", err)
	}
	defer gpu.Free()
	x, y := dpData()
	make := func() ag.Module { return &dpNet{ag.NewLinear(3, 8), ag.NewLinear(8, 1)} }
	dp := ag.DPTrain(make, ag.NewDataLoader(x, y, 16), ag.MSE, ag.Replicas(2), ag.Epochs(2), ag.ReplicaTapes(cpu, gpu))
	a, b := ag.Parameters(dp.Replicas[0]), ag.Parameters(dp.Replicas[1])
	if a[0].Tape() == b[0].Tape() {
		t.Fatal("both replicas on one tape")
	}
	for i := range a {
		if d := maxDiff(a[i].Float64s(), b[i].Float64s()); d != 0 {
			t.Errorf("parameter %d differs across devices by %v", i, d)
		}
	}
	if len(dp.Losses) != 2 || !(dp.Losses[1] < dp.Losses[0]) {
		t.Errorf("losses %v", dp.Losses)
	}
}
