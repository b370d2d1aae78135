package ag_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

func TestSchedulersFollowPyTorch(t *testing.T) {
	cpuTape(t)
	p := ag.Param(tensor.New(tensor.F32, 1))
	cases := []struct {
		name string
		make func(o *ag.Optimizer) *ag.Scheduler
		want []float64 // rates at steps 0, 1, ...
	}{
		{"step", func(o *ag.Optimizer) *ag.Scheduler { return ag.StepLR(o, 2, 0.5) }, []float64{1, 1, 0.5, 0.5, 0.25}},
		{"exponential", func(o *ag.Optimizer) *ag.Scheduler { return ag.ExponentialLR(o, 0.5) }, []float64{1, 0.5, 0.25}},
		{"cosine", func(o *ag.Optimizer) *ag.Scheduler { return ag.CosineAnnealingLR(o, 4, 0) },
			[]float64{1, (1 + math.Cos(math.Pi/4)) / 2, 0.5, (1 + math.Cos(3*math.Pi/4)) / 2, 0}},
		{"warm restarts", func(o *ag.Optimizer) *ag.Scheduler { return ag.CosineAnnealingWarmRestarts(o, 2, 2, 0) },
			[]float64{1, 0.5, 1, (1 + math.Cos(math.Pi/4)) / 2, 0.5, (1 + math.Cos(3*math.Pi/4)) / 2, 1}},
		{"one cycle", func(o *ag.Optimizer) *ag.Scheduler { return ag.OneCycleLR(o, 1, 10) },
			[]float64{0.04, 0.52, 1, 4e-6 + (1-4e-6)*(1+math.Cos(math.Pi/7))/2}},
		{"cyclic", func(o *ag.Optimizer) *ag.Scheduler { return ag.CyclicLR(o, 0.1, 1, 2) }, []float64{0.1, 0.55, 1, 0.55, 0.1, 0.55}},
		{"warmup cosine", func(o *ag.Optimizer) *ag.Scheduler { return ag.WarmupCosine(o, 1, 3, 0) }, []float64{0.5, 1, 0.5, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := ag.SGD([]*ag.Tensor{p}, 1)
			s := c.make(o)
			for i, want := range c.want {
				if i > 0 {
					s.Step()
				}
				if got := o.LR(); math.Abs(got-want) > 1e-4 {
					t.Errorf("step %d: lr %v, want %v", i, got, want)
				}
			}
			if pl := s.Plot(20); len(pl.Series[0].Y) != 20 {
				t.Errorf("plot has %d points", len(pl.Series[0].Y))
			}
		})
	}
	o := ag.SGD([]*ag.Tensor{p}, 1)
	s := ag.ReduceLROnPlateau(o, 0.5, 1, 0.1)
	for _, m := range []float64{3, 2, 2, 2, 2, 2, 2, 2, 2} {
		s.StepWith(m)
	}
	if got := o.LR(); got != 0.125 {
		t.Errorf("plateau lr %v, want 0.125 (halved after each 2 steps without improvement)", got)
	}
	if err := ag.Catch(func() { s.Step() }); err == nil || !strings.Contains(err.Error(), "StepWith") {
		t.Errorf("Step on a plateau scheduler: %v", err)
	}
}

func TestDataLoaderEpochs(t *testing.T) {
	x, _ := tensor.FromFloat32s(tensor.Shape{5, 2}, []float32{0, 0, 1, 1, 2, 2, 3, 3, 4, 4})
	y, _ := tensor.FromInts(tensor.Shape{5}, []int{0, 1, 2, 3, 4})
	for _, c := range []struct {
		name    string
		opts    []ag.Option
		batches []int
	}{
		{"plain", nil, []int{2, 2, 1}},
		{"drop last", []ag.Option{ag.DropLast()}, []int{2, 2}},
		{"shuffled", []ag.Option{ag.Shuffle(3)}, []int{2, 2, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dl := ag.NewDataLoader(x, y, 2, c.opts...)
			if dl.Len() != len(c.batches) {
				t.Errorf("Len = %d, want %d", dl.Len(), len(c.batches))
			}
			var firstOrder []int
			for epoch := 0; epoch < 2; epoch++ {
				var sizes, order []int
				for dl.Next() {
					bx, by := dl.Batch()
					sizes = append(sizes, bx.Shape()[0])
					ids := by.Ints()
					for i, v := range bx.Float32s() {
						if i%2 == 0 && int(v) != ids[i/2] {
							t.Fatalf("x row %v does not go with label %d", v, ids[i/2])
						}
					}
					order = append(order, ids...)
				}
				if len(sizes) != len(c.batches) {
					t.Fatalf("epoch %d: batch sizes %v, want %v", epoch, sizes, c.batches)
				}
				if dl.Epoch() != epoch {
					t.Errorf("Epoch() = %d, want %d", dl.Epoch(), epoch)
				}
				if epoch == 0 {
					firstOrder = order
				} else if c.name == "shuffled" && equalInts(order, firstOrder) {
					t.Errorf("the second epoch repeats the first's order %v", order)
				}
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
