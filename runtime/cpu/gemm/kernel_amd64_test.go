package gemm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAVX512FastPathsSameBits checks that the avx512 kernel's four-step paths (B packed
// with A packed, or with A row-major as stored) give the bits of its general loop (the
// same A with a column stride of 13, which no fast path takes), over k with and without
// a remainder of steps, adding to C and writing over it.
func TestAVX512FastPathsSameBits(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("the CPU cannot run the avx512 kernel")
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, k := range []int{1, 3, 4, 5, 8, 31, 257} {
		for _, add := range []bool{false, true} {
			vals := randSlice(r, 12*k) // A's element (i, p) at i·k + p
			lda := k + 3
			packed, rowMajor, spread := make([]float32, 12*k), make([]float32, 12*lda), make([]float32, 13*k)
			for i := range 12 {
				for p := range k {
					v := vals[i*k+p]
					packed[p*12+i], rowMajor[i*lda+p], spread[p*13+i] = v, v, v
				}
			}
			b := randSlice(r, 2*16*k)
			c0 := randSlice(r, 12*40)
			want := slices.Clone(c0)
			kernelAVX512(k, spread, 1, 13, b, 16, 16*k, want, 40, 0.75, add)
			for _, a := range []struct {
				name     string
				data     []float32
				rsA, csA int
			}{{"packed", packed, 1, 12}, {"row-major", rowMajor, lda, 1}} {
				c := slices.Clone(c0)
				kernelAVX512(k, a.data, a.rsA, a.csA, b, 16, 16*k, c, 40, 0.75, add)
				if !slices.Equal(c, want) {
					t.Errorf("%s: A %s differs from the general loop", fmt.Sprintf("k=%d/add=%v", k, add), a.name)
				}
			}
		}
	}
}
