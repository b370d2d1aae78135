//go:build amd64

package qdot

import (
	"github.com/gml-dev/gml/tensor/quant"
	"golang.org/x/sys/cpu"
)

// The assembly (dot_amd64.s) reads whole blocks: the row holds blocks·BlockBytes bytes
// and x blocks·BlockSize floats, which the wrappers guarantee.

//go:noescape
func dotQ8_0(row *byte, x *float32, blocks int) float32

//go:noescape
func dotQ4_0(row *byte, x *float32, blocks int) float32

//go:noescape
func dotQ4KBlock(qs *byte, x *float32, scales, mins *[8]float32) float32

// native returns the assembly dot product for f where there is one and the CPU has
// AVX2, FMA and F16C.
func native(f quant.Format) Func {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasF16C {
		return nil
	}
	switch f {
	case quant.Q8_0:
		return func(row []byte, x []float32) float32 {
			nb := len(row) / 34
			if nb == 0 || len(x) < 32*nb {
				return 0
			}
			return dotQ8_0(&row[0], &x[0], nb)
		}
	case quant.Q4_0:
		return func(row []byte, x []float32) float32 {
			nb := len(row) / 18
			if nb == 0 || len(x) < 32*nb {
				return 0
			}
			return dotQ4_0(&row[0], &x[0], nb)
		}
	case quant.Q4_K:
		return dotQ4K
	}
	return nil
}

// dotQ4K unpacks each super-block's eight scales and mins in Go (a few dozen
// operations per 256 weights) and leaves the weights to the assembly.
func dotQ4K(row []byte, x []float32) float32 {
	var sum float32
	var sc, mn [8]float32
	for b := 0; (b+1)*144 <= len(row) && (b+1)*quant.QK <= len(x); b++ {
		blk := row[b*144 : (b+1)*144]
		quant.Q4KScales(blk, &sc, &mn)
		sum += dotQ4KBlock(&blk[16], &x[b*quant.QK], &sc, &mn)
	}
	return sum
}
