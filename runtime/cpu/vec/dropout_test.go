package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestDropoutVectorsMatchesKeep checks, at every level, that the vector kernels draw
// tensor.DropoutDraw.Keep's mask bit for bit (scaled input and mask alone), on ragged
// lengths, at offsets that wrap the 32-bit index, and at the edge rates.
func TestDropoutVectorsMatchesKeep(t *testing.T) {
	defer func(a impl) { active = a }(active)
	r := rand.New(rand.NewPCG(11, 12))
	for _, im := range levels() {
		active = im
		for _, rate := range []float32{0, 1e-7, 0.3, 0.5, 0.999, 1} {
			scale := float32(1 / (1 - float64(rate)))
			for _, base := range []uint32{0, 5, 0xfffffff3} {
				for _, n := range []int{0, 1, 7, 33, 257, 4096} {
					seed := r.Uint32()
					draw := tensor.NewDropoutDraw(seed, rate)
					h, th := draw.Params()
					x := make([]float32, n)
					for i := range x {
						x[i] = float32(r.NormFloat64())
					}
					for _, in := range [][]float32{x, nil} {
						d := make([]float32, n)
						for i := range d {
							d[i] = -7 // every element the kernel says it did must be written
						}
						done := DropoutVectors(d, in, base, h, th, scale)
						if done < 0 || done > n || im.level == Go && done != 0 || im.level != Go && n-done >= im.width {
							t.Fatalf("%v n=%d: did %d elements", im.level, n, done)
						}
						for j := range done {
							want := float32(0)
							if draw.Keep(base + uint32(j)) {
								want = scale
								if in != nil {
									want = in[j] * scale
								}
							}
							if math.Float32bits(d[j]) != math.Float32bits(want) {
								t.Fatalf("%v rate %v base %d n=%d mask=%v: element %d = %v, want %v", im.level, rate, base, n, in == nil, j, d[j], want)
							}
						}
					}
				}
			}
		}
	}
}
