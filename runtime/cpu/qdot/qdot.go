// Package qdot holds the dot products of one row of quantised weights with a row of
// float32s, decoding the blocks as it goes: the inner loop of a product whose weights
// stay quantised (a matrix-vector product during inference reads each weight once, so
// its speed is the speed of this loop).
//
// Decisions:
//   - One function per block format, selected once with For; the portable versions
//     decode a block into registers-sized pieces and accumulate in float32, block by
//     block, and the amd64 versions (AVX2 and FMA, where the CPU has them) do the same
//     eight weights at a time.
//   - Accumulation is in float32 per block and across blocks, as ggml does; a row of
//     4096 weights differs from a float64 sum by about 1e-6 relative.
package qdot

import "github.com/gml-dev/gml/tensor/quant"

// Func returns the dot product of a row of quantised blocks with x, which holds as
// many floats as the row has weights. The caller guarantees the lengths.
type Func func(row []byte, x []float32) float32

// For returns the dot product for format f (nil for formats without one).
func For(f quant.Format) Func {
	if fn := native(f); fn != nil {
		return fn
	}
	return portable(f)
}

// portable decodes each block with the format's decoder and multiplies.
func portable(f quant.Format) Func {
	if !f.Valid() {
		return nil
	}
	bs, bb := f.BlockSize(), f.BlockBytes()
	return func(row []byte, x []float32) float32 {
		var buf [quant.QK]float32
		var sum float32
		for b := 0; b*bb < len(row); b++ {
			w := buf[:bs]
			f.Dequantize(w, row[b*bb:(b+1)*bb]) // lengths are the caller's guarantee
			xs := x[b*bs : (b+1)*bs]
			var s0, s1, s2, s3 float32
			for i := 0; i < bs; i += 4 {
				s0 += w[i] * xs[i]
				s1 += w[i+1] * xs[i+1]
				s2 += w[i+2] * xs[i+2]
				s3 += w[i+3] * xs[i+3]
			}
			sum += (s0 + s1) + (s2 + s3)
		}
		return sum
	}
}
