package conv

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkCNN28 times the passes of cnn28_b64's two convolutions (batch 64: 1 to
// 32 channels on 28×28, 32 to 64 on 13×13, 3×3 without padding; the first without its
// input gradient), the weight gradient of the second also without cutting its taps for
// the workers (itemsPerWorker 0).
func BenchmarkCNN28(b *testing.B) {
	layers := []struct {
		name string
		p    Params
	}{
		{"L1", Params{Batch: 64, InChannels: 1, InH: 28, InW: 28, OutChannels: 32, KernelH: 3, KernelW: 3}},
		{"L2", Params{Batch: 64, InChannels: 32, InH: 13, InW: 13, OutChannels: 64, KernelH: 3, KernelW: 3}},
	}
	for _, l := range layers {
		c, err := New(l.p)
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		x, w, dy := random(r, l.p.InputLen()), random(r, l.p.WeightLen()), random(r, l.p.OutputLen())
		y, dx, dw := make([]float32, l.p.OutputLen()), make([]float32, l.p.InputLen()), make([]float32, l.p.WeightLen())
		type pass struct {
			name string
			run  func() error
			per  int // itemsPerWorker
		}
		passes := []pass{
			{"Forward", func() error { return c.Forward(x, w, nil, y) }, itemsPerWorker},
			{"Filter", func() error { return c.BackwardFilter(x, dy, dw) }, itemsPerWorker},
		}
		if l.p.InChannels > 1 { // cnn28 takes no gradient of its images
			passes = append(passes, pass{"Data", func() error { return c.BackwardData(dy, w, dx) }, itemsPerWorker},
				pass{"FilterUncut", func() error { return c.BackwardFilter(x, dy, dw) }, 0})
		}
		for _, pass := range passes {
			b.Run(l.name+pass.name, func(b *testing.B) {
				defer func(n int) { itemsPerWorker = n }(itemsPerWorker)
				itemsPerWorker = pass.per
				for b.Loop() {
					if err := pass.run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
