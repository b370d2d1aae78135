package gemm

import (
	"fmt"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

// smallItemFlops is the per-item multiply-add count under which SgemmStrided runs whole
// items on separate goroutines instead of splitting each item.
const smallItemFlops = 1 << 22

// SgemmStrided runs Impl.SgemmStrided with the Default implementation.
func SgemmStrided(transA, transB bool, m, n, k int, alpha float32,
	a []float32, lda, strideA int, b []float32, ldb, strideB int,
	beta float32, c []float32, ldc, strideC int, batch int) error {
	return Default().SgemmStrided(transA, transB, m, n, k, alpha, a, lda, strideA,
		b, ldb, strideB, beta, c, ldc, strideC, batch)
}

// SgemmStrided computes batch independent products C_t = alpha*op(A_t)*op(B_t) + beta*C_t
// for t in [0, batch), where X_t is the matrix starting at element t*strideX of x and each
// item follows Sgemm's conventions. A stride of 0 for A or B uses the same matrix for
// every item (a broadcast batch dimension); the items of C must not overlap. Small items
// run on separate goroutines; large ones are each split as Sgemm splits them.
func (i Impl) SgemmStrided(transA, transB bool, m, n, k int, alpha float32,
	a []float32, lda, strideA int, b []float32, ldb, strideB int,
	beta float32, c []float32, ldc, strideC int, batch int) error {
	if batch < 0 || strideA < 0 || strideB < 0 || strideC < 0 {
		return fmt.Errorf("gemm.SgemmStrided: negative batch or stride (batch=%d, strides %d, %d, %d)",
			batch, strideA, strideB, strideC)
	}
	if batch == 0 {
		return nil
	}
	last := batch - 1
	if err := checkArgs("SgemmStrided", transA, transB, m, n, k, len(a)-last*strideA, lda,
		len(b)-last*strideB, ldb, len(c)-last*strideC, ldc); err != nil {
		return fmt.Errorf("%w (last of %d items)", err, batch)
	}
	if need := needLen(m, n, ldc); batch > 1 && strideC < need {
		return fmt.Errorf("gemm.SgemmStrided: C stride %d is less than the %d elements of one item, so items overlap",
			strideC, need)
	}
	if err := i.Available(); err != nil {
		return err
	}
	item := func(t int, parallelOK bool) {
		// Arguments and availability are checked above, so sgemm cannot fail here.
		_ = i.sgemm(parallelOK, transA, transB, m, n, k, alpha, a[t*strideA:], lda,
			b[t*strideB:], ldb, beta, c[t*strideC:], ldc, nil, nil)
	}
	if i != OpenBLAS && batch > 1 && m*n*k < smallItemFlops {
		// Items to a goroutine: enough that each has parallel.MinWork multiply-adds.
		parallel.For(batch, max(1, parallel.MinWork/max(1, m*n*k)), func(lo, hi int) {
			for t := lo; t < hi; t++ {
				item(t, false)
			}
		})
		return nil
	}
	for t := range batch {
		item(t, true)
	}
	return nil
}
