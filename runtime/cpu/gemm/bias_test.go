package gemm

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// biasCases are ragged products (sizes 1, 7, 33, 257 and tile edges) in both layouts,
// with beta 0 and not, and long sums that split in parts.
func biasCases() []gemmCase {
	var cases []gemmCase
	for _, s := range [][3]int{{1, 7, 33}, {7, 33, 257}, {33, 257, 7}, {257, 33, 1}, {257, 257, 33}, {13, 47, 300}, {3, 70, 9}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				cases = append(cases, gemmCase{ta, tb, s[0], s[1], s[2], 1, 0, 0})
			}
		}
	}
	return append(cases,
		gemmCase{false, true, 33, 257, 600, 0.5, 1, 2},
		gemmCase{true, false, 7, 33, 1000, -2, 0, 1},
		gemmCase{false, false, 257, 33, 700, 1, 0.5, 0},
		gemmCase{false, false, 33, 7, 0, 1, 2, 1},
		gemmCase{true, true, 33, 7, 5, 0, 0, 0},
	)
}

// operands returns random A, B and C for tc with their leading dimensions, and a bias.
func operands(r *rand.Rand, tc gemmCase) (a, b, c, bias []float32, lda, ldb, ldc int) {
	rowsA, colsA := tc.m, tc.k
	if tc.transA {
		rowsA, colsA = tc.k, tc.m
	}
	rowsB, colsB := tc.k, tc.n
	if tc.transB {
		rowsB, colsB = tc.n, tc.k
	}
	lda, ldb, ldc = max(colsA, 1)+tc.pad, max(colsB, 1)+tc.pad, max(tc.n, 1)+tc.pad
	return randSlice(r, rowsA*lda), randSlice(r, rowsB*ldb), randC(r, tc.m, tc.n, ldc, tc.beta),
		randSlice(r, tc.n), lda, ldb, ldc
}

// thenOf returns an epilogue for SgemmBiasThen on c (ldc apart, m×n) that doubles
// and increments each value it is given, and a check that it was given each element of
// C once and nothing else.
func thenOf(t *testing.T, c []float32, m, n, ldc int) (func([]float32), func(what string)) {
	seen := make([]atomic.Int32, len(c))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
	then := func(row []float32) {
		off := int(uintptr(unsafe.Pointer(unsafe.SliceData(row)))-base) / 4
		for j := range row {
			seen[off+j].Add(1)
			row[j] = row[j]*2 + 1
		}
	}
	check := func(what string) {
		t.Helper()
		for e := range seen {
			want := int32(0)
			if e/ldc < m && e%ldc < n {
				want = 1
			}
			if got := seen[e].Load(); got != want {
				t.Fatalf("%s: then got element %d %d times, want %d", what, e, got, want)
			}
		}
	}
	return then, check
}

// doubledPlusOne is c with then's change, each value doubled and incremented, in its m×n
// elements.
func doubledPlusOne(c []float32, m, n, ldc int) []float32 {
	out := slices.Clone(c)
	for i := range m {
		for j := range n {
			out[i*ldc+j] = out[i*ldc+j]*2 + 1
		}
	}
	return out
}

// plusBias is c with bias added to every row, as a separate add would compute it.
func plusBias(c, bias []float32, m, n, ldc int) []float32 {
	out := slices.Clone(c)
	for i := range m {
		for j := range n {
			out[i*ldc+j] += bias[j]
		}
	}
	return out
}

// TestBiasEpilogue runs products with a bias through the driver, with every
// micro-kernel, on one goroutine and split between 2, 3, 5 and 16 workers, B shared
// and packed by each worker, sums whole and split in parts, the AXPY of the epilogue
// in assembly and in Go. Each must give the same bits as the product without bias,
// serially, followed by the add: the bias comes after the whole sum, and no path
// changes the sum's bits. Each also calls then (SgemmBiasThen's epilogue) once on every
// element, after its bias.
func TestBiasEpilogue(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, kern := range allKernels() {
		for _, tc := range biasCases() {
			if tc.m == 0 || tc.n == 0 {
				continue
			}
			a, b, c0, bias, lda, ldb, ldc := operands(r, tc)
			for _, parts := range []int{1, 3} {
				newP := func() plan {
					p := newPlan(kern, tc.m, tc.n, tc.k, tc.alpha, matrix{a, lda, tc.transA}, matrix{b, ldb, tc.transB})
					p.parts = max(1, min(parts, tc.k)) // as parallel clamps it
					return p
				}
				// The unfused reference: the product serially (parts in parallel, as sgemm
				// runs a split sum), then the add.
				c := slices.Clone(c0)
				if p := newP(); parts == 1 {
					p.serial(tc.m, tc.n, tc.k, tc.beta, c, ldc)
				} else {
					p.parallel(1, tc.m, tc.n, tc.k, tc.beta, c, ldc)
				}
				want := doubledPlusOne(plusBias(c, bias, tc.m, tc.n, ldc), tc.m, tc.n, ldc)
				for _, goAxpy := range []bool{false, true} {
					for _, workers := range []int{1, 2, 3, 5, 16} {
						for _, private := range []bool{false, true} {
							if private && (workers == 1 || tc.k == 0 || tc.alpha == 0) {
								continue
							}
							p := newP()
							c := slices.Clone(c0)
							then, check := thenOf(t, c, tc.m, tc.n, ldc)
							p.bias, p.then = bias, then
							withGoPath(goAxpy, &axpyBias, func() {
								switch {
								case private:
									p.packB = true
									p.parallelPrivate(workers, tc.m, tc.n, tc.k, tc.beta, c, ldc)
								case workers == 1 && parts == 1:
									p.serial(tc.m, tc.n, tc.k, tc.beta, c, ldc)
								default:
									p.parallel(workers, tc.m, tc.n, tc.k, tc.beta, c, ldc)
								}
							})
							if !slices.Equal(c, want) {
								t.Fatalf("%v/parts=%d/workers=%d/private=%v/goAxpy=%v/%+v: C differs from the product followed by the add",
									kern, parts, workers, private, goAxpy, tc)
							}
							check(fmt.Sprintf("%v/parts=%d/workers=%d/private=%v/%+v", kern, parts, workers, private, tc))
						}
					}
				}
			}
		}
	}
}

// TestSgemmBias checks the exported forms with every implementation, through every
// path Sgemm takes (one-row and few-row products, the driver, OpenBLAS when present):
// the same bits as Sgemm followed by the add (and then, each element once), and errors
// for a short bias.
func TestSgemmBias(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	cases := append(biasCases(), gemmCase{false, false, 1, 300, 200, 1, 0, 0}, gemmCase{false, true, 4, 257, 33, 1, 1, 1},
		gemmCase{true, false, 1, 70, 45, -2, 0.5, 3}, gemmCase{false, false, 1, 3000, 400, 0.5, 1, 1})
	for _, impl := range impls(t) {
		for _, tc := range cases {
			a, b, c0, bias, lda, ldb, ldc := operands(r, tc)
			c := slices.Clone(c0)
			if err := impl.Sgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc); err != nil {
				t.Fatal(err)
			}
			want := plusBias(c, bias, tc.m, tc.n, ldc)
			c = slices.Clone(c0)
			if err := impl.SgemmBias(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc, bias); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c, want) {
				t.Fatalf("%v/%+v: SgemmBias differs from Sgemm followed by the add", impl, tc)
			}
			c = slices.Clone(c0)
			then, check := thenOf(t, c, tc.m, tc.n, ldc)
			if err := impl.SgemmBiasThen(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb, tc.beta, c, ldc, bias, then); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c, doubledPlusOne(want, tc.m, tc.n, ldc)) {
				t.Fatalf("%v/%+v: SgemmBiasThen differs from SgemmBias followed by then", impl, tc)
			}
			check(fmt.Sprintf("%v/%+v", impl, tc))
		}
	}
	err := Native.SgemmBias(false, false, 2, 3, 4, 1, make([]float32, 8), 4, make([]float32, 12), 3, 0, make([]float32, 6), 3, make([]float32, 2))
	if err == nil || !strings.Contains(err.Error(), "bias has 2 elements, C has 3 columns") {
		t.Errorf("short bias: err = %v", err)
	}
}

// TestSameBitsAnyWorkers requires the product of every kernel to be the same bits on
// one goroutine and split between any number of workers (A shared by the workers up to
// sharedAWorkers, packed per item beyond), as its items take whole tiles, and whatever
// the timing: with small blocks (many steps and panels of C, so that workers run ahead
// into the next step) and with a B that sleeps at random as it packs (jitterPacker),
// which reorders the workers' tasks and items from run to run.
func TestSameBitsAnyWorkers(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	cases := []gemmCase{
		{false, false, 257, 257, 300, 1, 0, 0}, {true, true, 300, 257, 513, 0.5, 1, 1},
		{false, true, 1024, 96, 64, 1, 0, 0}, {true, false, 33, 1000, 257, 1, 0, 0},
		{false, false, 100, 300, 700, 1, 0.5, 0},
	}
	var kernels []*kernel
	for _, kern := range allKernels() {
		small := *kern
		small.mc, small.kc, small.nc = 2*kern.mr, 64, 3*kern.width()
		kernels = append(kernels, kern, &small)
	}
	for _, kern := range kernels {
		for _, tc := range cases {
			a, b, c0, _, lda, ldb, ldc := operands(r, tc)
			var first []float32
			for _, workers := range []int{1, 2, 3, 5, 16} {
				for _, jitter := range []bool{false, true} {
					var bp BPacker = matrix{b, ldb, tc.transB}
					if jitter {
						if workers == 1 {
							continue
						}
						bp = jitterPacker{bp.(matrix), rand.New(rand.NewPCG(uint64(workers), 1)), new(sync.Mutex)}
					}
					p := newPlan(kern, tc.m, tc.n, tc.k, tc.alpha, matrix{a, lda, tc.transA}, bp)
					c := slices.Clone(c0)
					if workers == 1 && p.parts == 1 {
						p.serial(tc.m, tc.n, tc.k, tc.beta, c, ldc)
					} else {
						p.parallel(workers, tc.m, tc.n, tc.k, tc.beta, c, ldc)
					}
					if first == nil {
						first = c
					} else if !slices.Equal(first, c) {
						t.Fatalf("%v/mc=%d/workers=%d/jitter=%v/%+v: result differs from the one on one worker", kern, kern.mc, workers, jitter, tc)
					}
				}
			}
		}
	}
}

// jitterPacker packs as its matrix does, after sleeping for up to 100µs at random.
type jitterPacker struct {
	matrix
	r  *rand.Rand
	mu *sync.Mutex
}

func (j jitterPacker) PackB(dst []float32, p0, kb, j0, nb int) {
	j.mu.Lock()
	d := time.Duration(j.r.IntN(100)) * time.Microsecond
	j.mu.Unlock()
	time.Sleep(d)
	j.matrix.PackB(dst, p0, kb, j0, nb)
}
