package gemm

import "github.com/gml-dev/gml/runtime/cpu/parallel"

// minGemvSplit is the multiply-add count from which a one-row product is split by
// columns between goroutines.
const minGemvSplit = 1 << 20

// maxGemvRows is the most rows of A a product runs as one-row products.
const maxGemvRows = 4

// gemvGrain is the least number of multiply-adds one goroutine of a split one-row
// product takes.
const gemvGrain = 1 << 16

// sgemvRow computes the one-row product c = alpha*op(A)*op(B) + beta*c (m == 1) for
// validated arguments with the assembly vector routines, without packing: packing would
// copy all of B to use one row in six of the micro-tile, where these read B once. With B
// as stored it is a sum of AXPYs of B's rows into c; with B transposed, one dot product
// of A's row with each row of the stored B. It returns false, having done nothing, when
// the routines are unavailable or when B is transposed and A's row is not contiguous
// (transA with lda > 1).
func sgemvRow(parallelOK, transA, transB bool, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32) bool {
	axpy, dot := nativeVector()
	if axpy == nil || (transB && transA && lda != 1 && k > 1) {
		return false
	}
	if alpha == 0 {
		scale(1, n, beta, c, n)
		return true
	}
	var body func(lo, hi int)
	if transB {
		row := a[:k]
		body = func(lo, hi int) {
			for j := lo; j < hi; j++ {
				s := alpha * dot(row, b[j*ldb:][:k])
				if beta != 0 {
					s += beta * c[j]
				}
				c[j] = s
			}
		}
	} else {
		body = func(lo, hi int) {
			out := c[lo:hi]
			scale(1, hi-lo, beta, out, hi-lo)
			for p := 0; p < k; p++ {
				ap := a[p]
				if transA {
					ap = a[p*lda]
				}
				axpy(alpha*ap, b[p*ldb+lo:][:hi-lo], out)
			}
		}
	}
	if !parallelOK || n*k < minGemvSplit {
		body(0, n)
		return true
	}
	parallel.For(n, max(1, gemvGrain/max(k, 1)), body)
	return true
}
