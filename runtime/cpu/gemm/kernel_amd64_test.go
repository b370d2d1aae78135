package gemm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAVX512FastPathsSameBits checks that the avx512 kernel's four-step paths (A packed,
// row-major or transposed as stored, B packed or as stored) give the bits of its
// general loop (A with rows 2 and columns 24 floats apart, which no fast path takes),
// over k with and without a remainder of steps, adding to C and writing over it.
func TestAVX512FastPathsSameBits(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("the CPU cannot run the avx512 kernel")
	}
	r := rand.New(rand.NewPCG(21, 22))
	type layout struct {
		name     string
		rs, cs   int // A: element (i, p) at i·rs + p·cs; B: row p of panel t at p·rs + t·cs
		elements int
	}
	for _, k := range []int{1, 3, 4, 5, 8, 31, 257} {
		as := []layout{{"general", 2, 24, 24 * k}, {"packed", 1, 12, 12 * k}, {"row-major", k + 3, 1, 12 * (k + 3)}, {"transposed", 1, 17, 17 * k}}
		bs := []layout{{"packed", 16, 16 * k, 32 * k}, {"as stored", 40, 16, 40 * k}}
		vals, bvals := randSlice(r, 12*k), randSlice(r, 32*k)
		for _, bl := range bs {
			b := make([]float32, bl.elements)
			for p := range k {
				for j := range 32 {
					b[p*bl.rs+j/16*bl.cs+j%16] = bvals[p*32+j]
				}
			}
			for _, add := range []bool{false, true} {
				c0 := randSlice(r, 12*40)
				var want []float32
				for _, al := range as {
					a := make([]float32, al.elements)
					for i := range 12 {
						for p := range k {
							a[i*al.rs+p*al.cs] = vals[i*k+p]
						}
					}
					c := slices.Clone(c0)
					kernelAVX512(k, a, al.rs, al.cs, b, bl.rs, bl.cs, c, 40, 0.75, add)
					if want == nil {
						want = c
					} else if !slices.Equal(c, want) {
						t.Errorf("%s: A %s, B %s differs from the general loop", fmt.Sprintf("k=%d/add=%v", k, add), al.name, bl.name)
					}
				}
			}
		}
	}
}
