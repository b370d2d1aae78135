package gemm

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"

	"github.com/gml-dev/gml/internal/openblas"
)

// Impl names a GEMM implementation.
type Impl uint8

const (
	// Native is gml's own blocked GEMM with an assembly micro-kernel (AVX-512 or AVX2+FMA
	// on x86-64, NEON on arm64), parallel over all CPUs. It is unavailable on x86-64 CPUs
	// without AVX2 and FMA and on other architectures.
	Native Impl = iota
	// PureGo is the same blocked GEMM with a portable Go micro-kernel; it always works.
	PureGo
	// OpenBLAS is cblas_sgemm/cblas_dgemm of an OpenBLAS found at run time.
	OpenBLAS
)

var implNames = [...]string{Native: "native", PureGo: "go", OpenBLAS: "openblas"}

// String returns the name GML_BLAS uses for the implementation.
func (i Impl) String() string {
	if int(i) < len(implNames) {
		return implNames[i]
	}
	return fmt.Sprintf("Impl(%d)", uint8(i))
}

// ParseImpl maps a GML_BLAS value ("native", "go" or "openblas") to its Impl.
func ParseImpl(name string) (Impl, error) {
	for i, n := range implNames {
		if n == name {
			return Impl(i), nil
		}
	}
	return 0, fmt.Errorf("gemm: unknown implementation %q (want one of %s)", name,
		strings.Join(implNames[:], ", "))
}

// Available returns nil when the implementation can run on this machine, or the reason
// it cannot.
func (i Impl) Available() error {
	switch i {
	case Native:
		_, err := nativeKernel()
		return err
	case PureGo:
		return nil
	case OpenBLAS:
		return openblas.Load()
	}
	return fmt.Errorf("gemm: unknown implementation %v", i)
}

var (
	defaultOnce sync.Once
	defaultImpl Impl
	defaultNote string
)

// Default returns the implementation Sgemm and Dgemm use: the one GML_BLAS names when it
// is available, otherwise Native, otherwise PureGo. GML_BLAS is read once, at the first
// call.
func Default() Impl {
	defaultOnce.Do(func() {
		defaultImpl, defaultNote = chooseDefault(os.Getenv("GML_BLAS"))
	})
	return defaultImpl
}

// DefaultNote explains the choice Default made when it differs from what GML_BLAS asked
// for (for example "GML_BLAS=openblas: openblas: not available ..."), and is "" otherwise.
func DefaultNote() string {
	Default()
	return defaultNote
}

// chooseDefault resolves a GML_BLAS value to an available implementation and a note on
// any fallback.
func chooseDefault(env string) (Impl, string) {
	want := Native
	var note string
	if env != "" {
		w, err := ParseImpl(env)
		if err != nil {
			note = "GML_BLAS: " + err.Error()
		} else {
			want = w
		}
	}
	for _, impl := range []Impl{want, Native, PureGo} {
		err := impl.Available()
		if err == nil {
			return impl, note
		}
		if impl == want && env != "" {
			note = fmt.Sprintf("GML_BLAS=%s: %v", env, err)
		}
	}
	return PureGo, note
}

// Sgemm computes C = alpha*op(A)*op(B) + beta*C with the Default implementation. See
// Impl.Sgemm.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return Default().Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Sgemm computes C = alpha*op(A)*op(B) + beta*C in row-major order with the usual BLAS
// meaning: op(A) is m×k (A is stored k×m when transA), op(B) is k×n (stored n×k when
// transB), C is m×n, and lda, ldb, ldc are the distances between rows of the stored
// matrices. beta == 0 overwrites C without reading it. It returns an error, and leaves C
// untouched, when a dimension is negative, a leading dimension is shorter than its row,
// a slice is too short, or the implementation is unavailable.
func (i Impl) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if err := checkArgs("Sgemm", transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		return err
	}
	return i.sgemm(true, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil, nil)
}

// SgemmBias computes C = alpha*op(A)*op(B) + beta*C + bias with the Default
// implementation. See Impl.SgemmBias.
func SgemmBias(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) error {
	return Default().SgemmBias(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias)
}

// SgemmBias is Sgemm followed by the addition of bias[j] to every element of column j
// of C (a dense layer's bias), done by the native kernels on each tile of C as the sum
// over k completes, while the tile is in cache, rather than in a pass of its own. The
// result is the same bits as Sgemm followed by that addition. bias needs at least n
// elements; with the arguments, it is checked as Sgemm checks its own.
func (i Impl) SgemmBias(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) error {
	return i.SgemmBiasThen(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias, nil)
}

// SgemmBiasThen is SgemmBias followed by then (nil for none), called on stretches of
// rows of C once their bias is added: each element of C passes through then once, in a
// stretch of one row, while the native kernels still hold the block of C in cache (an
// activation that follows a dense layer, say, costs no pass over memory of its own).
// The calls may run concurrently, on disjoint stretches; then may change the stretch's
// values, and may tell where it lies from its address in c.
func (i Impl) SgemmBiasThen(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32, then func(row []float32)) error {
	if err := checkArgs("SgemmBias", transA, transB, m, n, k, len(a), lda, len(b), ldb, len(c), ldc); err != nil {
		return err
	}
	if len(bias) < n {
		return fmt.Errorf("gemm.SgemmBias: bias has %d elements, C has %d columns", len(bias), n)
	}
	return i.sgemm(true, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bias[:n:n], then)
}

// sgemm runs validated arguments through the implementation, bias (nil for none) added
// to every row of C at the end; parallelOK lets the native kernels split the product
// between goroutines.
func (i Impl) sgemm(parallelOK, transA, transB bool, m, n, k int, alpha float32,
	a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32, then func([]float32)) error {
	if m == 0 || n == 0 {
		return nil
	}
	if i == OpenBLAS {
		if err := openblas.Load(); err != nil {
			return err
		}
		if err := fitsCBLAS(m, n, k, lda, ldb, ldc); err != nil {
			return err
		}
		openblas.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		addBiasRows(m, n, bias, then, c, ldc)
		return nil
	}
	if i == Native && m == 1 && sgemvRow(parallelOK, transA, transB, n, k, alpha, a, lda, b, ldb, beta, c) {
		addBiasRows(1, n, bias, then, c, ldc)
		return nil
	}
	// A few rows (a small inference batch through a layer's weights) are as many
	// one-row products: packing B would cost more than the product.
	if i == Native && m <= maxGemvRows && !transA {
		done := true
		for r := 0; r < m && done; r++ {
			done = sgemvRow(parallelOK, false, transB, n, k, alpha, a[r*lda:], lda, b, ldb, beta, c[r*ldc:])
		}
		if done {
			addBiasRows(m, n, bias, then, c, ldc)
			return nil
		}
	}
	kern, err := i.microKernel()
	if err != nil {
		return err
	}
	sgemm(kern, parallelOK, m, n, k, alpha, matrix{a, lda, transA}, matrix{b, ldb, transB},
		beta, c, ldc, bias, then)
	return nil
}

// fitsCBLAS reports an error when a size does not fit CBLAS's 32-bit int.
func fitsCBLAS(sizes ...int) error {
	for _, v := range sizes {
		if v > math.MaxInt32 {
			return fmt.Errorf("gemm: size %d is too large for OpenBLAS's 32-bit interface; use GML_BLAS=native", v)
		}
	}
	return nil
}

// microKernel returns the micro-kernel gml's blocked driver uses for i: Native's
// (nativeKernel), the Go code of the avx2 shape for PureGo, and for OpenBLAS (which only
// SgemmPacked sends to the driver) Native's where the CPU has it.
func (i Impl) microKernel() (*kernel, error) {
	switch i {
	case Native:
		return nativeKernel()
	case PureGo:
		return pureGoKernel, nil
	case OpenBLAS:
		if kern, err := nativeKernel(); err == nil {
			return kern, nil
		}
		return pureGoKernel, nil
	}
	return nil, fmt.Errorf("gemm: unknown implementation %v", i)
}

// checkArgs validates GEMM dimensions, leading dimensions and slice lengths, naming the
// function and the offending value.
func checkArgs(fn string, transA, transB bool, m, n, k, lenA, lda, lenB, ldb, lenC, ldc int) error {
	if err := checkDims(fn, m, n, k); err != nil {
		return err
	}
	rowsB, colsB := k, n
	if transB {
		rowsB, colsB = n, k
	}
	if err := checkOperand(fn, "B", rowsB, colsB, ldb, lenB); err != nil {
		return err
	}
	return checkAC(fn, transA, m, n, k, lenA, lda, lenC, ldc)
}

func checkDims(fn string, m, n, k int) error {
	if m < 0 || n < 0 || k < 0 {
		return fmt.Errorf("gemm.%s: negative dimension (m=%d, n=%d, k=%d)", fn, m, n, k)
	}
	return nil
}

// checkAC validates the A and C operands.
func checkAC(fn string, transA bool, m, n, k, lenA, lda, lenC, ldc int) error {
	rowsA, colsA := m, k
	if transA {
		rowsA, colsA = k, m
	}
	if err := checkOperand(fn, "A", rowsA, colsA, lda, lenA); err != nil {
		return err
	}
	return checkOperand(fn, "C", m, n, ldc, lenC)
}

// checkOperand validates one stored rows×cols matrix with leading dimension ld.
func checkOperand(fn, name string, rows, cols, ld, length int) error {
	if ld < max(cols, 1) {
		return fmt.Errorf("gemm.%s: leading dimension of %s is %d, less than its %d columns",
			fn, name, ld, max(cols, 1))
	}
	if need := needLen(rows, cols, ld); length < need {
		return fmt.Errorf("gemm.%s: %s is %d×%d with leading dimension %d and needs %d elements, has %d",
			fn, name, rows, cols, ld, need, length)
	}
	return nil
}

// needLen is the number of elements a rows×cols matrix with leading dimension ld spans.
func needLen(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}
