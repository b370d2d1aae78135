package gemm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAVX512PackedPathSameBits checks that the avx512 kernel's four-step path for packed
// operands gives the bits of its general-stride loop (the same operands with a strip
// stride of 13 instead of 12, which the fast path does not take), over k with and
// without a remainder of steps, adding to C and writing over it.
func TestAVX512PackedPathSameBits(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("the CPU cannot run the avx512 kernel")
	}
	r := rand.New(rand.NewPCG(21, 22))
	for _, k := range []int{1, 3, 4, 5, 8, 31, 257} {
		for _, add := range []bool{false, true} {
			packed := randSlice(r, 12*k)
			spread := make([]float32, 13*k)
			for p := range k {
				copy(spread[p*13:], packed[p*12:][:12])
			}
			b := randSlice(r, 2*16*k)
			c0 := randSlice(r, 12*40)
			fast, general := slices.Clone(c0), slices.Clone(c0)
			kernelAVX512(k, packed, 1, 12, b, 16, 16*k, fast, 40, 0.75, add)
			kernelAVX512(k, spread, 1, 13, b, 16, 16*k, general, 40, 0.75, add)
			if !slices.Equal(fast, general) {
				t.Errorf("%s: the packed path differs from the general loop", fmt.Sprintf("k=%d/add=%v", k, add))
			}
		}
	}
}
