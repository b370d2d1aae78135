package gpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// ltReference computes what cuBLASLt computes for a layout: column-major D = op(A)·op(B)
// per batch, element (r, c) of a matrix at r + c·ld, over the flat slices given.
func ltReference(l ltLayout, batch int, a, b []float32, c []float32) {
	at := func(x []float32, op, ld, stride, z, r, col int) float32 {
		if op == cublasOpT {
			r, col = col, r
		}
		return x[z*stride+r+col*ld]
	}
	m, n := l.rowsA, l.colsB // rows and columns of op(A)·op(B)
	k := l.colsA
	if l.opA == cublasOpT {
		m, k = l.colsA, l.rowsA
	}
	if l.opB == cublasOpT {
		n = l.rowsB
	}
	for z := range batch {
		for i := range m {
			for j := range n {
				var s float64
				for q := range k {
					s += float64(at(a, l.opA, l.lda, l.strideA, z, i, q)) * float64(at(b, l.opB, l.ldb, l.strideB, z, q, j))
				}
				c[z*l.strideC+i+j*l.ldc] = float32(s)
			}
		}
	}
}

// TestLtLayout checks the row-major to column-major mapping of every transpose layout,
// padded leading dimensions and batches (broadcast operands too) by running cuBLASLt's
// semantics on the host against the row-major product.
func TestLtLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const m, n, k, pad = 5, 7, 3, 2
	for _, batch := range []int{1, 3} {
		for _, broadcast := range []string{"", "a", "b"} {
			for _, tA := range []bool{false, true} {
				for _, tB := range []bool{false, true} {
					p := &extProduct{M: m, N: n, K: k, Batch: batch, TransA: tA, TransB: tB, LDA: k + pad, LDB: n + pad, LDC: n + pad}
					rowsA, rowsB := m, k
					if tA {
						p.LDA, rowsA = m+pad, k
					}
					if tB {
						p.LDB, rowsB = k+pad, n
					}
					p.SA, p.SB, p.SC = rowsA*p.LDA, rowsB*p.LDB, m*p.LDC
					switch broadcast {
					case "a":
						p.SA = 0
					case "b":
						p.SB = 0
					}
					a := make([]float32, batch*rowsA*p.LDA)
					b := make([]float32, batch*rowsB*p.LDB)
					for i := range a {
						a[i] = float32(rng.NormFloat64())
					}
					for i := range b {
						b[i] = float32(rng.NormFloat64())
					}
					got := make([]float32, batch*m*p.LDC)
					// cuBLASLt's A is our B.
					ltReference(ltLayoutOf(p), batch, b, a, got)
					name := fmt.Sprintf("batch%d_bcast%s_t%v%v", batch, broadcast, tA, tB)
					for z := range batch {
						for i := range m {
							for j := range n {
								var want float64
								for q := range k {
									ai, bi := z*p.SA+i*p.LDA+q, z*p.SB+q*p.LDB+j
									if tA {
										ai = z*p.SA + q*p.LDA + i
									}
									if tB {
										bi = z*p.SB + j*p.LDB + q
									}
									want += float64(a[ai]) * float64(b[bi])
								}
								if g := got[z*p.SC+i*p.LDC+j]; math.Abs(float64(g)-want) > 1e-5 {
									t.Fatalf("%s: C[%d][%d][%d] = %g, want %g", name, z, i, j, g, want)
								}
							}
						}
					}
				}
			}
		}
	}
}
