package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSlices times the vector kernels on lengths of whole vectors and with tails,
// long (where the tail is noise) and short (a row of a small dense layer).
func BenchmarkSlices(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	c := &GeluGradConsts{0.70710677, 0.5, 0.5, -0.5, 0.3989423}
	for _, k := range []struct {
		name string
		f    func(d, x, gy []float32)
	}{
		{"exp", func(d, x, _ []float32) { Exp(d, x) }},
		{"expshiftsum", func(d, x, _ []float32) { ExpShiftSum(d, x, 3) }},
		{"erf", func(d, x, _ []float32) { Erf(d, x) }},
		{"gelu", func(d, x, _ []float32) { Gelu(d, x) }},
		{"gelugrad", func(d, x, gy []float32) { GeluGrad(c, d, x, gy) }},
	} {
		for _, n := range []int{10, 16, 992, 1000, 4096, 4099} {
			x, gy, d := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], gy[i] = float32(r.Float64()*8-4), float32(r.Float64()*2-1)
			}
			b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
				for b.Loop() {
					k.f(d, x, gy)
				}
			})
		}
	}
}
