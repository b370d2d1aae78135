package gemm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/internal/hugepage"
)

// BenchmarkPack times the packing of the blocks of a training step's 4096-wide
// products, as the driver packs them at two workers: an A block (mc×kc of the avx512
// tuning) of a 1024×4096 A row-major (the plain and B-transposed forms) and transposed
// (dW = Xᵀ·dY, its Xᵀ stored 1024×4096), and half a kc×nc B block as stored and
// transposed. Successive iterations take successive blocks of 64 MiB operands, so the
// source comes from memory as in a step. It reports nanoseconds per packed element.
func BenchmarkPack(b *testing.B) {
	const size = 4096
	kern := goKernelOf(shapeAVX512)
	mr, mc, kc, nc := kern.mr, kern.mc, kern.kc, kern.nc
	src := make([]float32, size*size)
	hugepage.AdviseFloats(src)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range src {
		src[i] = r.Float32()
	}
	dst := make([]float32, roundUp(max(mc, nc), nr)*kc)
	hugepage.AdviseFloats(dst)
	for _, trans := range []bool{false, true} {
		a := matrix{data: src, ld: size, trans: trans}
		// Each with every packing code the CPU has: the assembly, transpose4 instead of
		// transpose16, and the Go loops.
		for _, path := range []string{"asm", "transpose4", "go"} {
			run := func(f func()) {
				withGoPath(path != "asm", &transpose16, func() {
					withGoPath(path == "go", &transpose4, func() {
						withGoPath(path == "go", &copyPanels, func() { withGoPath(path == "go", &copyStrips, f) })
					})
				})
			}
			b.Run(fmt.Sprintf("A/trans=%v/%s", trans, path), func(b *testing.B) {
				i, p := 0, 0
				run(func() {
					for b.Loop() {
						packA(dst, mr, a, i, mc, p, kc)
						if i += mc; i+mc > size {
							i, p = 0, (p+kc)%size
						}
					}
				})
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*mc*kc), "ns/elem")
			})
			b.Run(fmt.Sprintf("B/trans=%v/%s", trans, path), func(b *testing.B) {
				nb := nc / 2
				j, p := 0, 0
				run(func() {
					for b.Loop() {
						a.PackB(dst, p, kc, j, nb)
						if j += nb; j+nb > size {
							j, p = 0, (p+kc)%size
						}
					}
				})
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nb*kc), "ns/elem")
			})
		}
	}
}

// TestCopyStrips checks the assembly strip copy against its definition on every width
// it takes (4 to 16: the kernels' mr of 6, 12 and 14 among them, and B's panels of 16),
// ragged row and strip counts, and rows that start anywhere (not aligned).
func TestCopyStrips(t *testing.T) {
	if copyStrips == nil {
		t.Skip("no assembly strip copy on this CPU")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for width := 4; width <= 16; width++ {
		for _, rows := range []int{1, 7, 33, 40} {
			for _, strips := range []int{1, 3, 4, 9} {
				const off = 3
				ld := off + width*strips + 5
				src := randSlice(r, off+(rows-1)*ld+width*strips)
				dst := randSlice(r, width*rows*strips+7)
				want := append([]float32(nil), dst...)
				for tt := range strips {
					for p := range rows {
						copy(want[tt*width*rows+p*width:][:width], src[off+p*ld+tt*width:])
					}
				}
				copyStrips(dst, rows, src[off:], ld, rows, width, strips)
				if !slices.Equal(dst, want) {
					t.Fatalf("width=%d rows=%d strips=%d: got %v, want %v", width, rows, strips, dst, want)
				}
			}
		}
	}
}

// TestPackA checks A's packing against its definition (strip s, column p, row i at
// dst[s·mr·kb + p·mr + i], zeros past mb), row-major and transposed, for the kernels'
// strip heights and 14, on ragged block sizes at an offset within A, with the assembly
// and with the Go loops.
func TestPackA(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, goPack := range []bool{false, true} {
		for _, trans := range []bool{false, true} {
			for _, mr := range []int{6, 12, 14} {
				for _, mb := range []int{1, 7, 33, 257} {
					for _, kb := range []int{1, 7, 33, 257} {
						const i0, p0, ld = 5, 3, 270
						a := matrix{data: randSlice(r, ld*ld), ld: ld, trans: trans}
						dst := randSlice(r, roundUp(mb, mr)*kb)
						withGoPack(goPack, func() { packA(dst, mr, a, i0, mb, p0, kb) })
						what := fmt.Sprintf("goPack=%v trans=%v mr=%d mb=%d kb=%d", goPack, trans, mr, mb, kb)
						checkStrips(t, what, dst, mr, mb, kb, func(row, p int) float32 {
							if trans {
								return a.data[(p0+p)*ld+i0+row]
							}
							return a.data[(i0+row)*ld+p0+p]
						})
					}
				}
			}
		}
	}
}

// checkStrips checks a packing of n rows of A (or columns of B) over kb steps of the sum
// into strips of width: lane i of strip s at step p is dst[s·width·kb + p·width + i],
// want(s·width+i, p) below n and zero past it.
func checkStrips(t *testing.T, what string, dst []float32, width, n, kb int, want func(idx, p int) float32) {
	t.Helper()
	for s := range roundUp(n, width) / width {
		for p := range kb {
			for i := range width {
				w := float32(0)
				if idx := s*width + i; idx < n {
					w = want(idx, p)
				}
				if got := dst[s*width*kb+p*width+i]; got != w {
					t.Fatalf("%s: strip %d, step %d, lane %d = %v, want %v", what, s, p, i, got, w)
				}
			}
		}
	}
}
