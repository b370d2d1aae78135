package gemm

import "github.com/gml-dev/gml/runtime/cpu/parallel"

// minGemvSplit is the multiply-add count from which a one-row product is split by
// columns between goroutines.
const minGemvSplit = 1 << 20

// gemvColumns is the least number of columns one goroutine of a split one-row product
// takes.
const gemvColumns = 512

// sgemvRow computes the one-row product c = alpha*op(A)*B + beta*c for validated
// arguments with m == 1 and B not transposed: a sum of rows of B, each an AXPY into c.
// Packing would copy all of B to use one row in six of the micro-tile; this reads B once.
// op(A)'s single row is a[0:k] when A is not transposed and a[p*lda] otherwise.
func sgemvRow(axpy func(alpha float32, x, y []float32), parallelOK, transA bool, n, k int,
	alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32) {
	body := func(lo, hi int) {
		row := c[lo:hi]
		scale(1, hi-lo, beta, row, hi-lo)
		if alpha == 0 {
			return
		}
		for p := 0; p < k; p++ {
			ap := a[p]
			if transA {
				ap = a[p*lda]
			}
			axpy(alpha*ap, b[p*ldb+lo:][:hi-lo], row)
		}
	}
	if !parallelOK || n*k < minGemvSplit {
		body(0, n)
		return
	}
	parallel.For(n, gemvColumns, body)
}
