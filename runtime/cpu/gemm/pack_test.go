package gemm

import (
	"fmt"
	"math/rand/v2"
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
		b.Run(fmt.Sprintf("A/trans=%v", trans), func(b *testing.B) {
			i, p := 0, 0
			for b.Loop() {
				packA(dst, mr, a, i, mc, p, kc)
				if i += mc; i+mc > size {
					i, p = 0, (p+kc)%size
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*mc*kc), "ns/elem")
		})
		b.Run(fmt.Sprintf("B/trans=%v", trans), func(b *testing.B) {
			nb := nc / 2
			j, p := 0, 0
			for b.Loop() {
				a.PackB(dst, p, kc, j, nb)
				if j += nb; j+nb > size {
					j, p = 0, (p+kc)%size
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nb*kc), "ns/elem")
		})
	}
}
