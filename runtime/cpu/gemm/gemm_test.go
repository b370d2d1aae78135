package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refGemm is the float64 reference: C = alpha*op(A)*op(B) + beta*C on stored matrices.
func refGemm(transA, transB bool, m, n, k int, alpha float64, a []float32, lda int,
	b []float32, ldb int, beta float64, c []float32, ldc int) []float64 {
	out := make([]float64, len(c))
	for i, v := range c {
		out[i] = float64(v)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var sum float64
			for p := 0; p < k; p++ {
				ai, bi := i*lda+p, p*ldb+j
				if transA {
					ai = p*lda + i
				}
				if transB {
					bi = j*ldb + p
				}
				av, bv := a[ai], b[bi]
				sum += float64(av) * float64(bv)
			}
			cv := 0.0
			if beta != 0 {
				cv = beta * float64(c[i*ldc+j])
			}
			out[i*ldc+j] = alpha*sum + cv
		}
	}
	return out
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.Float64()*2 - 1)
	}
	return s
}

// impls lists the implementations to test: both native paths always, OpenBLAS when
// present.
func impls(t *testing.T) []Impl {
	t.Helper()
	out := []Impl{PureGo}
	if err := Native.Available(); err == nil {
		out = append(out, Native)
	} else {
		t.Logf("native kernel not tested: %v", err)
	}
	if err := OpenBLAS.Available(); err == nil {
		out = append(out, OpenBLAS)
	}
	return out
}

type gemmCase struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	pad            int // extra elements per row beyond the stored column count
}

func gemmCases() []gemmCase {
	var cases []gemmCase
	sizes := [][3]int{
		{1, 1, 1}, {3, 17, 5}, {17, 33, 3}, {33, 17, 129}, {127, 129, 65}, {129, 127, 300},
		{6, 16, 256}, {12, 32, 257}, {150, 40, 513}, {0, 5, 3}, {5, 0, 3}, {5, 7, 0},
		{300, 200, 70}, {70, 300, 200},
	}
	for _, s := range sizes {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				cases = append(cases, gemmCase{ta, tb, s[0], s[1], s[2], 1, 0, 0})
			}
		}
	}
	cases = append(cases,
		gemmCase{false, false, 33, 47, 19, 0.5, 2, 3},
		gemmCase{true, true, 47, 33, 19, -1.5, 1, 5},
		gemmCase{false, true, 129, 20, 31, 2, -0.5, 1},
		gemmCase{true, false, 20, 129, 31, 0, 3, 2},
		gemmCase{false, false, 8, 9, 0, 1, 0.25, 0},
	)
	return cases
}

func TestSgemmMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, impl := range impls(t) {
		for _, tc := range gemmCases() {
			name := fmt.Sprintf("%v/tA=%v,tB=%v,m=%d,n=%d,k=%d,alpha=%g,beta=%g,pad=%d",
				impl, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, tc.beta, tc.pad)
			rowsA, colsA := tc.m, tc.k
			if tc.transA {
				rowsA, colsA = tc.k, tc.m
			}
			rowsB, colsB := tc.k, tc.n
			if tc.transB {
				rowsB, colsB = tc.n, tc.k
			}
			lda, ldb, ldc := max(colsA, 1)+tc.pad, max(colsB, 1)+tc.pad, max(tc.n, 1)+tc.pad
			a := randSlice(r, rowsA*lda)
			b := randSlice(r, rowsB*ldb)
			c := randSlice(r, tc.m*ldc)
			want := refGemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, float64(tc.alpha), a, lda,
				b, ldb, float64(tc.beta), c, ldc)
			if err := impl.Sgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb,
				tc.beta, c, ldc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			tol := 1e-5 * float64(tc.k+1) * math.Max(1, math.Abs(float64(tc.alpha)))
			for i := 0; i < tc.m; i++ {
				for j := 0; j < ldc; j++ {
					got, w := float64(c[i*ldc+j]), want[i*ldc+j]
					if j >= tc.n && got != w {
						t.Fatalf("%s: padding C[%d][%d] changed from %g to %g", name, i, j, w, got)
					}
					if math.Abs(got-w) > tol {
						t.Fatalf("%s: C[%d][%d] = %g, want %g", name, i, j, got, w)
					}
				}
			}
		}
	}
}
