package qdot

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor/quant"
)

// TestDotMatchesDecodedProduct compares each dot product (the assembly where the CPU
// runs it, and the portable one) with the float64 product of the decoded weights, for
// rows of 1 to 9 blocks (odd counts exercise the assembly's paired loop).
func TestDotMatchesDecodedProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range []quant.Format{quant.Q4_0, quant.Q8_0, quant.Q4_K} {
		impls := map[string]Func{"portable": portable(f)}
		if n := native(f); n != nil && nativeOK {
			impls["native"] = n
		} else {
			t.Logf("%s: no native dot product on this CPU", f)
		}
		for blocks := 1; blocks <= 9; blocks++ {
			k := blocks * f.BlockSize()
			w := make([]float32, k)
			x := make([]float32, k)
			for i := range w {
				w[i] = float32(rng.NormFloat64())
				x[i] = float32(rng.NormFloat64())
			}
			nb, _ := f.Bytes(k)
			row := make([]byte, nb)
			if err := f.Quantize(row, w); err != nil {
				t.Fatal(err)
			}
			dec := make([]float32, k)
			f.Dequantize(dec, row)
			var want, mag float64
			for i := range dec {
				want += float64(dec[i]) * float64(x[i])
				mag += math.Abs(float64(dec[i]) * float64(x[i]))
			}
			var v Vec
			Prepare(x, &v)
			for name, dot := range impls {
				// The native products round x to 16 bits per block (a relative error of
				// 1.5e-5 of the block's largest value at most).
				tol := 1e-6 * mag
				if name == "native" {
					tol = 4e-5 * mag
				}
				if got := float64(dot(row, &v)); math.Abs(got-want) > tol {
					t.Errorf("%s %s, %d blocks: %g, want %g", f, name, blocks, got, want)
				}
			}
		}
	}
}

// BenchmarkDot reports each dot product's speed in weight bytes per second, the native
// one and the portable one that decodes to float32 first (go test -bench; the figures
// of record come from `gml bench gguf`).
func BenchmarkDot(b *testing.B) {
	for _, f := range []quant.Format{quant.Q4_0, quant.Q8_0, quant.Q4_K} {
		k := 4096
		nb, _ := f.Bytes(k)
		row := make([]byte, nb)
		w := make([]float32, k)
		x := make([]float32, k)
		for i := range w {
			w[i], x[i] = float32(i%7)-3, 1
		}
		f.Quantize(row, w)
		var v Vec
		Prepare(x, &v)
		for _, impl := range []struct {
			name string
			dot  Func
		}{{"native", For(f)}, {"portable", portable(f)}} {
			b.Run(f.String()+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(nb))
				for b.Loop() {
					impl.dot(row, &v)
				}
			})
		}
	}
}
