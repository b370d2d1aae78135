package gemm

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/gml-dev/gml/internal/openblas"
)

// Dgemm runs Impl.Dgemm with the Default implementation.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int,
	b []float64, ldb int, beta float64, c []float64, ldc int) error {
	return Default().Dgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Dgemm is Sgemm for float64, with the same conventions and errors. Native and PureGo
// both use gonum's blas/gonum Dgemm (so results equal gonum's mat.Dense.Mul exactly);
// OpenBLAS uses cblas_dgemm.
func (i Impl) Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int,
	b []float64, ldb int, beta float64, c []float64, ldc int) error {
	if err := checkArgs("Dgemm", transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		return err
	}
	if err := i.Available(); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	if i == OpenBLAS {
		if err := fitsCBLAS(m, n, k, lda, ldb, ldc); err != nil {
			return err
		}
		openblas.Dgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return nil
	}
	gonum.Implementation{}.Dgemm(blasTrans(transA), blasTrans(transB), m, n, k, alpha,
		a, lda, b, ldb, beta, c, ldc)
	return nil
}

func blasTrans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}
