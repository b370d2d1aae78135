package gemm

// PackWidth is the number of columns in one strip of a packed B panel (see BPacker).
const PackWidth = nr

// MicroRows returns the number of rows of C that one micro-kernel call of the Default
// implementation computes; a product with fewer rows than this wastes the rest of the
// tile.
func MicroRows() int {
	if kern, err := Default().microKernel(); err == nil {
		return kern.mr
	}
	return pureGoKernel.mr
}

// BPacker is a B operand that packs itself. It lets a caller build B's panels straight
// from its own data instead of first writing B out as a matrix: convolution packs the
// receptive fields of an image directly (implicit GEMM) and so skips im2col's copy.
type BPacker interface {
	// PackB writes rows [p0, p0+kb) and columns [j0, j0+nb) of the k×n matrix B into dst,
	// which holds ⌈nb/PackWidth⌉ strips of kb·PackWidth floats: strip t holds columns
	// j0+t·PackWidth onwards, row after row, PackWidth values per row. Columns past nb in
	// the last strip must be written as zeros. PackB may be called concurrently for
	// disjoint blocks: other column ranges, or other row ranges of the same columns (a
	// sum split in parts packs the rows of every part at once).
	PackB(dst []float32, p0, kb, j0, nb int)
}

// SgemmPacked computes C = alpha*op(A)*B + beta*C like Sgemm, with B supplied by a
// BPacker. When parallelOK is false the product runs on the calling goroutine (for
// callers that already run several products at once). OpenBLAS cannot take a packer, so
// the OpenBLAS implementation runs Native here (PureGo where Native is unavailable).
func (i Impl) SgemmPacked(parallelOK, transA bool, m, n, k int, alpha float32, a []float32,
	lda int, b BPacker, beta float32, c []float32, ldc int) error {
	if err := checkDims("SgemmPacked", m, n, k); err != nil {
		return err
	}
	if err := checkAC("SgemmPacked", transA, m, n, k, len(a), lda, len(c), ldc); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	kern, err := i.microKernel()
	if err != nil {
		return err
	}
	sgemm(kern, parallelOK, m, n, k, alpha, matrix{a, lda, transA}, b, beta, c, ldc, nil, nil)
	return nil
}

// Dense returns the row-major matrix stored in data with leading dimension ld (read
// transposed when trans is set) as a BPacker, for SgemmPacked. Unlike Sgemm, SgemmPacked
// cannot check its length: a short slice makes PackB panic with an index error.
func Dense(data []float32, ld int, trans bool) BPacker { return matrix{data, ld, trans} }
