// Package qdot holds the dot products of one row of quantised weights with a row of
// activations, decoding the blocks as it goes: the inner loop of a product whose
// weights stay quantised (a matrix-vector product during inference reads each weight
// once, so its speed is the speed of this loop).
//
// Decisions:
//   - The activations are prepared once per product (Prepare) and then multiplied with
//     every row of weights. On amd64 with AVX2 they are rounded to 16-bit integers with
//     a float scale per block of 32, so that a block's products are integer
//     multiply-adds (VPMADDWD: 16 weights × 16 activations in one instruction) followed
//     by one conversion and one scaling: about half the instructions of widening every
//     weight to float32, which makes a matrix-vector product bound by memory rather than
//     by decoding. The rounding costs a relative error of about 1.5e-5 per activation
//     (ggml rounds activations to 8 bits for the same purpose, at 4e-3).
//   - The portable version (other CPUs) decodes each block with package quant's decoder
//     and multiplies in float32 with the activations as they are.
//   - Accumulation is in int32 within a block and float32 across blocks, as ggml does; a
//     row of 4096 weights differs from a float64 sum by about 2e-5 relative.
package qdot

import (
	"math"

	"github.com/gml-dev/gml/tensor/quant"
)

// Vec is a row of activations prepared for the dot products: the floats, and (where
// the native products use them) their 16-bit rounding per block of 32.
type Vec struct {
	X     []float32 // the activations
	Q     []int16   // X rounded: X[i] ≈ Q[i]·Scale[i/32]
	Scale []float32 // per block of 32
	Sum   []float32 // per block of 32: Σ Q·Scale, for formats with offsets
}

// Prepare makes v the prepared form of x (a multiple of 32 long), reusing v's memory.
func Prepare(x []float32, v *Vec) {
	v.X = x
	if !nativeOK {
		return
	}
	nb := len(x) / 32
	v.Q = grow(v.Q, len(x))
	v.Scale = grow(v.Scale, nb)
	v.Sum = grow(v.Sum, nb)
	for b := range nb {
		xs := x[32*b : 32*b+32]
		var amax float32
		for _, f := range xs {
			amax = max(amax, float32(math.Abs(float64(f))))
		}
		var d, id float32
		if amax > 0 {
			d, id = amax/32767, 32767/amax
		}
		var s int32
		for i, f := range xs {
			q := int16(math.Round(float64(f * id)))
			v.Q[32*b+i] = q
			s += int32(q)
		}
		v.Scale[b], v.Sum[b] = d, float32(s)*d
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Func returns the dot product of a row of quantised blocks with a prepared row of as
// many activations as the row has weights. The caller guarantees the lengths.
type Func func(row []byte, x *Vec) float32

// For returns the dot product for format f (nil for an invalid format).
func For(f quant.Format) Func {
	if nativeOK {
		if fn := native(f); fn != nil {
			return fn
		}
	}
	return portable(f)
}

// portable decodes each block with the format's decoder and multiplies.
func portable(f quant.Format) Func {
	if !f.Valid() {
		return nil
	}
	bs, bb := f.BlockSize(), f.BlockBytes()
	return func(row []byte, v *Vec) float32 {
		var buf [quant.QK]float32
		var sum float32
		for b := 0; b*bb < len(row); b++ {
			w := buf[:bs]
			f.Dequantize(w, row[b*bb:(b+1)*bb]) // lengths are the caller's guarantee
			xs := v.X[b*bs : (b+1)*bs]
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
