package cpu

import (
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// BenchmarkReluPoolGrad times the fused ReLU + 2×2 max pool backward on cnn28_b64's two
// layers.
func BenchmarkReluPoolGrad(b *testing.B) {
	for _, c := range []struct {
		name string
		x    tensor.Shape
	}{{"L1_64x32x26x26", tensor.Shape{64, 32, 26, 26}}, {"L2_64x64x11x11", tensor.Shape{64, 64, 11, 11}}} {
		b.Run(c.name, func(b *testing.B) {
			y := tensor.Shape{c.x[0], c.x[1], c.x[2] / 2, c.x[3] / 2}
			p := newPooler(c.x, y, tensor.PoolAttr{Kernel: []int{2, 2}, Stride: []int{2, 2}, PadBegin: []int{0, 0}, PadEnd: []int{0, 0}})
			r := rand.New(rand.NewPCG(1, 2))
			z, dy := make([]float32, c.x.Size()), make([]float32, y.Size())
			for i := range dy {
				dy[i] = r.Float32()
			}
			for i := range z {
				z[i] = r.Float32() - 0.5
			}
			step := maxPoolReluGradStep(p, z, dy, make([]float32, len(z)), nil)
			b.SetBytes(int64(8 * c.x.Size()))
			for b.Loop() {
				step()
			}
		})
	}
}
