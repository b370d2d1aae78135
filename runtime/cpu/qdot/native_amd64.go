//go:build amd64

package qdot

import (
	"github.com/gml-dev/gml/tensor/quant"
	"golang.org/x/sys/cpu"
)

// nativeOK reports whether the CPU runs the assembly: AVX2, FMA and F16C.
var nativeOK = cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C

// The assembly (dot_amd64.s) reads whole blocks: the row holds blocks·BlockBytes bytes,
// x and scales the prepared activations of as many weights; the wrappers check.

//go:noescape
func dotQ8_0(row *byte, x *int16, scales *float32, blocks int) float32

//go:noescape
func dotQ4_0(row *byte, x *int16, scales *float32, blocks int) float32

//go:noescape
func dotQ4K(row *byte, x *int16, scales, sums *float32, blocks int) float32

// native returns the assembly dot product for f where there is one.
func native(f quant.Format) Func {
	switch f {
	case quant.Q8_0:
		return blockDot(34, dotQ8_0)
	case quant.Q4_0:
		return blockDot(18, dotQ4_0)
	case quant.Q4_K:
		return func(row []byte, v *Vec) float32 {
			nb := len(row) / 144
			if nb == 0 || len(v.Q) < quant.QK*nb || len(v.Scale) < 8*nb {
				return 0
			}
			return dotQ4K(&row[0], &v.Q[0], &v.Scale[0], &v.Sum[0], nb)
		}
	}
	return nil
}

// blockDot wraps an assembly product over blocks of 32 weights of size bytes each.
func blockDot(size int, dot func(*byte, *int16, *float32, int) float32) Func {
	return func(row []byte, v *Vec) float32 {
		nb := len(row) / size
		if nb == 0 || len(v.Q) < 32*nb || len(v.Scale) < nb {
			return 0
		}
		return dot(&row[0], &v.Q[0], &v.Scale[0], nb)
	}
}
