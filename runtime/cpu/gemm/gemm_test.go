package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
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

// randC returns a random m×n C with leading dimension ldc, its n columns NaN when beta
// is 0: a kernel that read C instead of writing over it would leave NaNs.
func randC(r *rand.Rand, m, n, ldc int, beta float32) []float32 {
	c := randSlice(r, m*ldc)
	if beta == 0 {
		for i := range m {
			for j := range n {
				c[i*ldc+j] = float32(math.NaN())
			}
		}
	}
	return c
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
		{300, 200, 70}, {70, 300, 200}, {1, 33, 17}, {1, 300, 200}, {1, 4100, 300}, {1, 7, 1},
		{7, 33, 257}, {257, 7, 33}, {33, 257, 7}, {257, 257, 33}, {25, 48, 9}, {13, 47, 300},
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
		gemmCase{true, false, 1, 70, 45, -2, 0.5, 3},
		gemmCase{false, false, 1, 3000, 400, 0.5, 1, 1},
		gemmCase{true, true, 1, 40, 30, 1, 0, 2},
		gemmCase{false, true, 1, 50, 20, 0, 2, 0},
		// alpha applied by the kernels (A read in place or packed), over several k-slices
		// and row blocks, beta 0 (C written over: it starts as NaN) and not.
		gemmCase{false, false, 150, 40, 513, 0.5, 0, 1},
		gemmCase{true, true, 257, 33, 300, -2, 0, 0},
		gemmCase{true, false, 20, 300, 257, 0.25, 1, 0},
		gemmCase{false, true, 7, 257, 600, 3, -1, 2},
		gemmCase{false, false, 33, 7, 0, 2, 0, 1},
		gemmCase{false, false, 33, 7, 5, 0, 0, 0},
	)
	return cases
}

func TestSgemmMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, impl := range impls(t) {
		for _, tc := range gemmCases() {
			name := fmt.Sprintf("%v/tA=%v,tB=%v,m=%d,n=%d,k=%d,alpha=%g,beta=%g,pad=%d",
				impl, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, tc.beta, tc.pad)
			a, b, c, _, lda, ldb, ldc := operands(r, tc)
			want := refGemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, float64(tc.alpha), a, lda,
				b, ldb, float64(tc.beta), c, ldc)
			c0 := append([]float32(nil), c...)
			if err := impl.Sgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, a, lda, b, ldb,
				tc.beta, c, ldc); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkGemm(t, name, c, want, tc, ldc)
			// The same product through SgemmPacked, on one goroutine and split.
			for _, par := range []bool{false, true} {
				copy(c, c0)
				if err := impl.SgemmPacked(par, tc.transA, tc.m, tc.n, tc.k, tc.alpha, a, lda,
					Dense(b, ldb, tc.transB), tc.beta, c, ldc); err != nil {
					t.Fatalf("%s: SgemmPacked: %v", name, err)
				}
				checkGemm(t, fmt.Sprintf("%s SgemmPacked(parallel=%v)", name, par), c, want, tc, ldc)
			}
		}
	}
}

// allKernels lists every micro-kernel this machine runs: each shape's Go code (once per
// tile geometry: neon's is avx2's), and its assembly where the CPU has it. With -short
// and some assembly, only the assembly: make test-arm64 runs these tests under qemu,
// where the Go code, which the x86-64 run covers, would take most of the time.
func allKernels() []*kernel {
	var goCode, asm []*kernel
	seen := map[[2]int]bool{}
	for _, s := range shapes {
		if !seen[[2]int{s.mr, s.strips}] {
			goCode = append(goCode, goKernelOf(s.name))
			seen[[2]int{s.mr, s.strips}] = true
		}
		if k := asmKernel(s.name); k != nil {
			asm = append(asm, k)
		}
	}
	if testing.Short() && len(asm) > 0 {
		return asm
	}
	return append(goCode, asm...)
}

// TestKernelsMatchReference runs the blocked driver with every micro-kernel, whatever
// Native chose, so each shape's packing, edges and panel pairing are covered on every
// machine (its Go code where the CPU lacks its instructions), and with every way of
// reading the operands (packed, or in place where the plan allows it), on one goroutine
// and split between 2, 3 or 16 workers (more than this machine's cores: the split must be
// right whatever the host), B packed once for all workers and by each for itself. Each
// kernel runs with its shape's tuning and with small blocks: a sweep (macroKernel) of two
// calls' width, so that the test's blocks, narrower than the tunings' sweeps, also cross
// sweeps, and mc, kc and nc of a few strips, slices and calls, so that products of
// several row blocks, k-slices and column panels keep their A across the panels
// (keepA, parallel's shared A).
func TestKernelsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var kernels []*kernel
	for _, kern := range allKernels() {
		swept := *kern
		swept.sweep = 2 * kern.width()
		swept.mc, swept.kc, swept.nc = 2*kern.mr, 64, 3*kern.width()
		kernels = append(kernels, kern, &swept)
	}
	for _, kern := range kernels {
		for ci, tc := range gemmCases() {
			if tc.m == 0 || tc.n == 0 {
				continue
			}
			a, b, c, _, lda, ldb, ldc := operands(r, tc)
			want := refGemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, float64(tc.alpha), a, lda,
				b, ldb, float64(tc.beta), c, ldc)
			c0 := append([]float32(nil), c...)
			// In place or packed (B in place only as stored), packed also with the Go
			// transposes: every mode on one goroutine, and one mode, changing from case to
			// case, on each of two splits.
			modes := []struct{ inPlaceA, inPlaceB, goPack bool }{
				{false, false, false}, {true, false, false}, {false, true, false}, {true, true, false}, {false, false, true},
			}
			for wi, workers := range []int{1, 2, 3 + 13*(ci%2)} {
				for mi, mode := range modes {
					if workers > 1 && mi != (ci+wi)%len(modes) {
						continue
					}
					p := newPlan(kern, tc.m, tc.n, tc.k, tc.alpha, matrix{a, lda, tc.transA}, matrix{b, ldb, tc.transB})
					p.packA = !mode.inPlaceA
					p.packB = !(mode.inPlaceB && !tc.transB)
					copy(c, c0)
					withGoPack(mode.goPack, func() {
						if workers > 1 {
							p.parallel(workers, tc.m, tc.n, tc.k, tc.beta, c, ldc)
						} else {
							p.serial(tc.m, tc.n, tc.k, tc.beta, c, ldc)
						}
					})
					checkGemm(t, fmt.Sprintf("%v/sweep=%d/workers=%d/packA=%v/packB=%v/goPack=%v/%+v", kern, kern.sweep, workers, p.packA, p.packB, mode.goPack, tc),
						c, want, tc, ldc)
					if workers > 1 && p.packB && tc.k > 0 && tc.alpha != 0 { // as parallel sends it
						// B packed by each worker for itself, whatever privateB says.
						copy(c, c0)
						withGoPack(mode.goPack, func() { p.parallelPrivate(workers, tc.m, tc.n, tc.k, tc.beta, c, ldc) })
						checkGemm(t, fmt.Sprintf("%v/sweep=%d/workers=%d/private/packA=%v/goPack=%v/%+v", kern, kern.sweep, workers, p.packA, mode.goPack, tc),
							c, want, tc, ldc)
					}
				}
			}
		}
	}
}

// withGoPath runs f with the assembly routine *asm set to nil, so that its Go loop runs,
// when goPath is set; else as it is (the assembly where the CPU has it).
func withGoPath[F any](goPath bool, asm *F, f func()) {
	if goPath {
		saved := *asm
		var none F
		*asm = none
		defer func() { *asm = saved }()
	}
	f()
}

// withGoPack runs f with the packing's Go loops instead of its assembly (transpose16,
// transpose4, copyPanels, copyStrips) when goPack is set.
func withGoPack(goPack bool, f func()) {
	withGoPath(goPack, &transpose16, func() {
		withGoPath(goPack, &transpose4, func() {
			withGoPath(goPack, &copyPanels, func() { withGoPath(goPack, &copyStrips, f) })
		})
	})
}

// TestTransposeRows checks the packing transpose, each assembly (transpose16 where the
// CPU has it, transpose4) and Go, on ragged row counts (fewer than four rows, a last
// group overlapping the one before, up to sixteen) and column counts (the columns past a
// multiple of eight or sixteen).
func TestTransposeRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, path := range []string{"transpose16", "transpose4", "go"} {
		for _, rows := range []int{1, 3, 4, 5, 6, 7, 12, 13, 14, 15, 16} {
			for _, kb := range []int{1, 7, 8, 9, 15, 16, 17, 33, 48, 257} {
				ld, ldd := kb+3, rows+2
				src := randSlice(r, (rows-1)*ld+kb)
				dst := make([]float32, (kb-1)*ldd+rows+2)
				want := make([]float32, len(dst))
				for i := range rows {
					for p := range kb {
						want[p*ldd+i] = src[i*ld+p]
					}
				}
				withGoPath(path != "transpose16", &transpose16, func() {
					withGoPath(path == "go", &transpose4, func() { transposeRows(dst, ldd, src, ld, rows, kb) })
				})
				for e := range dst {
					if dst[e] != want[e] {
						t.Fatalf("%s rows=%d kb=%d: dst[%d] = %g, want %g", path, rows, kb, e, dst[e], want[e])
					}
				}
			}
		}
	}
}

// TestPackB checks B's packing against its definition (panel t, row p, column j at
// dst[t·16·kb + p·16 + j], zeros past nb), as stored and transposed, on widths around
// the chunks of packBChunk columns and with a partial last panel, on depths below and
// above copyPanels' prefetch distance, with the assembly and with the Go loops.
func TestPackB(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, goPack := range []bool{false, true} {
		for _, trans := range []bool{false, true} {
			for _, kb := range []int{7, 45} {
				for _, nb := range []int{1, 16, 17, packBChunk - 1, packBChunk, packBChunk + 16, 2*packBChunk + 5} {
					const p0, j0, ld = 3, 5, 300
					b := matrix{data: randSlice(r, ld*ld), ld: ld, trans: trans}
					dst := randSlice(r, roundUp(nb, nr)*kb)
					withGoPack(goPack, func() { b.PackB(dst, p0, kb, j0, nb) })
					what := fmt.Sprintf("goPack=%v trans=%v kb=%d nb=%d", goPack, trans, kb, nb)
					checkStrips(t, what, dst, nr, nb, kb, func(col, p int) float32 {
						if trans {
							return b.data[(j0+col)*ld+p0+p]
						}
						return b.data[(p0+p)*ld+j0+col]
					})
				}
			}
		}
	}
}

// TestShapeTuning checks what the driver assumes of every shape's blocking: row
// blocks of whole strips (mc a multiple of mr, which rowChunk halves from), k-slices
// that halve (kParts' least part is kc/2 deep), and a positive panel width and alias.
func TestShapeTuning(t *testing.T) {
	for _, s := range shapes {
		if b := s.tuning; b.mc <= 0 || b.mc%s.mr != 0 || b.kc < 2 || b.nc <= 0 || b.alias <= 0 ||
			b.sweep <= 0 || b.sweep%(s.strips*nr) != 0 {
			t.Errorf("%s (mr %d): tuning %+v", s.name, s.mr, b)
		}
	}
}

// TestWorkers checks how a product is split: one goroutine for small products, one
// worker per parallel.MinWork multiply-adds up to the available ones and the product's tiles, and row
// chunks small enough to give sixteen workers several items each.
func TestWorkers(t *testing.T) {
	kern := goKernelOf(shapeAVX512) // 12×32 tiles
	kern.tuning = zen3Tuning        // the row chunks below start from its mc of 144
	for _, c := range []struct{ m, n, k, available, want int }{
		{32, 32, 32, 16, 1},           // 32K multiply-adds
		{128, 128, 64, 16, 2},         // 1M
		{2048, 128, 128, 16, 16},      // 32M
		{2048, 128, 128, 2, 2},        // capped by the cores
		{12, 32, 1 << 20, 16, 1},      // one tile
		{128, 128, 2048, 16, 16},      // 11×4 tiles
		{2048, 128, 0, 16, 1},         // nothing to multiply
		{4096, 4096, 4096, 64, 64},    // a large product on a large host
		{1, 1 << 20, 1 << 10, 16, 16}, // one row of 32768 tiles: the cores are the limit
	} {
		p := plan{kern: kern, parts: 1}
		got := p.workers(c.m, c.n, c.k, c.available)
		if got != c.want {
			t.Errorf("workers(%d, %d, %d, %d) = %d, want %d", c.m, c.n, c.k, c.available, got, c.want)
		}
	}
	for _, c := range []struct{ m, n, workers, want int }{
		{2048, 128, 2, 132},  // 16 row blocks (not 15 of mc): 8 for each worker
		{128, 128, 16, 12},   // the weight gradient: 11 chunks of 12 rows × 4
		{128, 512, 16, 36},   // 4 chunks × 16
		{20, 32, 16, 12},     // never below the kernel's rows
		{1024, 1024, 16, 36}, // rows shrink before columns split: 29 row blocks × 3 column parts
		{1024, 1024, 2, 132}, // 8 row blocks, not 7 and a sliver
		{2048, 128, 3, 144},  // 15 row blocks: 5 for each worker
	} {
		if got := (plan{kern: kern, parts: 1}).rowChunk(c.m, c.n, c.workers); got != c.want {
			t.Errorf("rowChunk(%d, %d, %d) = %d, want %d", c.m, c.n, c.workers, got, c.want)
		}
	}
}

func TestChooseKernel(t *testing.T) {
	for _, s := range shapes {
		k, note, err := chooseKernel(s.name)
		if err != nil || k.name != s.name || (note != "") == k.asm {
			t.Errorf("GML_GEMM_KERNEL=%s: kernel %v, note %q, error %v", s.name, k, note, err)
		}
	}
	k, note, err := chooseKernel("sse")
	if !strings.Contains(note, `unknown kernel "sse"`) {
		t.Errorf("GML_GEMM_KERNEL=sse: note %q, want one naming the unknown kernel", note)
	}
	if def, _, defErr := chooseKernel(""); k != nil && def != nil && k.name != def.name || (err == nil) != (defErr == nil) {
		t.Errorf("GML_GEMM_KERNEL=sse: chose %v (%v), want the default %v (%v)", k, err, def, defErr)
	}
}

// checkGemm compares C with the reference, within a tolerance that grows with k, and
// requires the padding beyond n columns to be untouched.
func checkGemm(t *testing.T, name string, c []float32, want []float64, tc gemmCase, ldc int) {
	t.Helper()
	tol := 1e-5 * float64(tc.k+1) * math.Max(1, math.Abs(float64(tc.alpha)))
	for i := 0; i < tc.m; i++ {
		for j := 0; j < ldc; j++ {
			got, w := float64(c[i*ldc+j]), want[i*ldc+j]
			if j >= tc.n && got != w {
				t.Fatalf("%s: padding C[%d][%d] changed from %g to %g", name, i, j, w, got)
			}
			if !(math.Abs(got-w) <= tol) {
				t.Fatalf("%s: C[%d][%d] = %g, want %g", name, i, j, got, w)
			}
		}
	}
}

func TestSgemmStridedMatchesPerItem(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, impl := range impls(t) {
		for _, tc := range []struct {
			m, n, k, batch int
			broadcastA, tB bool
			alpha, beta    float32
		}{
			{5, 7, 3, 4, false, false, 1, 0},
			{33, 17, 20, 3, true, true, 0.5, 1},
			{200, 150, 180, 2, false, true, 1, 0.5}, // large items: sequential, each parallel
			{1, 1, 1, 1, false, false, 2, 0},
			{4, 4, 4, 0, false, false, 1, 0},
		} {
			name := fmt.Sprintf("%v/%+v", impl, tc)
			strideA := tc.m * tc.k
			if tc.broadcastA {
				strideA = 0
			}
			a := randSlice(r, max(strideA*tc.batch, tc.m*tc.k))
			b := randSlice(r, tc.k*tc.n*tc.batch)
			c := randSlice(r, tc.m*tc.n*tc.batch)
			want := make([]float64, len(c))
			ldb := tc.n
			if tc.tB {
				ldb = tc.k
			}
			for i := 0; i < tc.batch; i++ {
				one := refGemm(false, tc.tB, tc.m, tc.n, tc.k, float64(tc.alpha), a[i*strideA:], tc.k,
					b[i*tc.k*tc.n:], ldb, float64(tc.beta), c[i*tc.m*tc.n:][:tc.m*tc.n], tc.n)
				copy(want[i*tc.m*tc.n:], one)
			}
			if err := impl.SgemmStrided(false, tc.tB, tc.m, tc.n, tc.k, tc.alpha, a, tc.k, strideA,
				b, ldb, tc.k*tc.n, tc.beta, c, tc.n, tc.m*tc.n, tc.batch); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i, w := range want[:tc.batch*tc.m*tc.n] {
				if !(math.Abs(float64(c[i])-w) <= 1e-4*float64(tc.k)) {
					t.Fatalf("%s: element %d = %g, want %g", name, i, c[i], w)
				}
			}
		}
	}
}

func TestDgemmMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, impl := range impls(t) {
		for _, tc := range []struct {
			tA, tB  bool
			m, n, k int
		}{{false, false, 37, 29, 41}, {true, false, 64, 3, 100}, {false, true, 1, 70, 5}, {true, true, 130, 131, 129}} {
			rowsA, colsA := tc.m, tc.k
			if tc.tA {
				rowsA, colsA = tc.k, tc.m
			}
			rowsB, colsB := tc.k, tc.n
			if tc.tB {
				rowsB, colsB = tc.n, tc.k
			}
			a, b := make([]float64, rowsA*colsA), make([]float64, rowsB*colsB)
			for i := range a {
				a[i] = r.NormFloat64()
			}
			for i := range b {
				b[i] = r.NormFloat64()
			}
			c := make([]float64, tc.m*tc.n)
			if err := impl.Dgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, a, colsA, b, colsB, 0, c, tc.n); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.m; i++ {
				for j := 0; j < tc.n; j++ {
					var want float64
					for p := 0; p < tc.k; p++ {
						ai, bi := i*colsA+p, p*colsB+j
						if tc.tA {
							ai = p*colsA + i
						}
						if tc.tB {
							bi = j*colsB + p
						}
						want += a[ai] * b[bi]
					}
					if got := c[i*tc.n+j]; !(math.Abs(got-want) <= 1e-12*(1+math.Abs(want))*float64(tc.k)) {
						t.Fatalf("%v %+v: C[%d][%d] = %.17g, want %.17g", impl, tc, i, j, got, want)
					}
				}
			}
		}
	}
}

func TestGemmErrors(t *testing.T) {
	buf := make([]float32, 100)
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"negative", func() error { return PureGo.Sgemm(false, false, -1, 2, 2, 1, buf, 2, buf, 2, 0, buf, 2) },
			"negative dimension"},
		{"short lda", func() error { return PureGo.Sgemm(false, false, 3, 4, 5, 1, buf, 4, buf, 4, 0, buf, 4) },
			"leading dimension of A is 4, less than its 5 columns"},
		{"short B", func() error { return PureGo.Sgemm(false, true, 3, 30, 5, 1, buf, 5, buf, 5, 0, buf[:90], 30) },
			"B is 30×5 with leading dimension 5 and needs 150 elements, has 100"},
		{"short C", func() error { return PureGo.Sgemm(false, false, 3, 4, 5, 1, buf, 5, buf, 4, 0, buf[:10], 4) },
			"C is 3×4 with leading dimension 4 and needs 12 elements, has 10"},
		{"overlapping batch", func() error {
			return PureGo.SgemmStrided(false, false, 2, 2, 2, 1, buf, 2, 0, buf, 2, 0, 0, buf, 2, 3, 2)
		}, "items overlap"},
		{"batch too long", func() error {
			return PureGo.SgemmStrided(false, false, 2, 2, 2, 1, buf, 2, 98, buf, 2, 0, 0, buf, 2, 4, 2)
		}, "last of 2 items"},
		{"dgemm", func() error {
			return PureGo.Dgemm(true, false, 2, 2, 3, 1, make([]float64, 5), 2, make([]float64, 6), 2, 0, make([]float64, 4), 2)
		}, "gemm.Dgemm: A is 3×2"},
	} {
		if err := tc.call(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestChooseDefault(t *testing.T) {
	native := Native
	if Native.Available() != nil {
		native = PureGo
	}
	blas, blasNote := OpenBLAS, ""
	if err := OpenBLAS.Available(); err != nil {
		blas, blasNote = native, "GML_BLAS=openblas: "
	}
	for _, tc := range []struct {
		env      string
		want     Impl
		wantNote string
	}{
		{"", native, ""},
		{"native", native, ""},
		{"go", PureGo, ""},
		{"openblas", blas, blasNote},
		{"mkl", native, `GML_BLAS: gemm: unknown implementation "mkl"`},
	} {
		got, note := chooseDefault(tc.env)
		if got != tc.want || !strings.HasPrefix(note, tc.wantNote) || (tc.wantNote == "") != (note == "") {
			t.Errorf("GML_BLAS=%q: chose %v (note %q), want %v (note starting %q)", tc.env, got, note, tc.want, tc.wantNote)
		}
	}
}

// panickyPacker fails on its second panel, as a buggy BPacker might.
type panickyPacker struct{ calls *atomic.Int32 }

func (p panickyPacker) PackB(dst []float32, p0, kb, j0, nb int) {
	if p.calls.Add(1) > 1 {
		panic("packer failed")
	}
	clear(dst)
}

// onceFailingPacker panics once, packing the first columns of a part of the sum after
// the first (p0 > 0): the other items of a split sum complete, and their workers wait
// for the failed item's row block until they learn of the panic.
type onceFailingPacker struct{ failed *atomic.Bool }

func (p onceFailingPacker) PackB(dst []float32, p0, kb, j0, nb int) {
	if p0 > 0 && j0 == 0 && p.failed.CompareAndSwap(false, true) {
		panic("packer failed")
	}
	clear(dst)
}

// TestSgemmPackedPanicReturns checks that a panic in one worker reaches the caller
// instead of leaving the other workers waiting: for the packing of a shared B, or for a
// row block of a split sum when each worker packs its own B.
func TestSgemmPackedPanicReturns(t *testing.T) {
	const m, n, k = 300, 300, 600
	a, c := make([]float32, m*k), make([]float32, m*n)
	for _, private := range []bool{false, true} {
		func() {
			defer func() {
				if r := recover(); r != "packer failed" {
					t.Fatalf("private=%v: recovered %v, want the packer's panic", private, r)
				}
			}()
			if !private {
				_ = PureGo.SgemmPacked(true, false, m, n, k, 1, a, k, panickyPacker{new(atomic.Int32)}, 0, c, n)
			} else {
				p := newPlan(pureGoKernel, m, n, k, 1, matrix{a, m, true}, onceFailingPacker{new(atomic.Bool)})
				p.parts = 3
				p.parallelPrivate(4, m, n, k, 0, c, n)
			}
			t.Fatalf("private=%v: returned normally", private)
		}()
	}
}

// TestSplitSum runs products whose sum over k is split in parts (kParts), and unsplit,
// with every micro-kernel, A packed and in place, on 1 (serially when unsplit), 2 and 16
// workers (B shared, in place and packed by each worker), against the float64 reference,
// and requires the same bits whatever the number of workers: the parts follow from the
// shape alone.
func TestSplitSum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cases := []gemmCase{
		{true, false, 7, 33, 1000, 1, 0, 0}, {true, false, 33, 7, 777, 0.5, 1, 2},
		{false, true, 1, 257, 600, 1, 0, 0}, {false, false, 257, 33, 700, -1, 0.5, 1},
		{true, true, 33, 257, 513, 2, 0, 3}, {false, false, 12, 32, 2049, 1, 0, 0},
	}
	for _, kern := range allKernels() {
		for _, tc := range cases {
			rowsA, colsA := tc.m, tc.k
			if tc.transA {
				rowsA, colsA = tc.k, tc.m
			}
			rowsB, colsB := tc.k, tc.n
			if tc.transB {
				rowsB, colsB = tc.n, tc.k
			}
			lda, ldb, ldc := colsA+tc.pad, colsB+tc.pad, tc.n+tc.pad
			a, b, c := randSlice(r, rowsA*lda), randSlice(r, rowsB*ldb), randC(r, tc.m, tc.n, ldc, tc.beta)
			want := refGemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, float64(tc.alpha), a, lda,
				b, ldb, float64(tc.beta), c, ldc)
			c0 := append([]float32(nil), c...)
			for _, parts := range []int{1, 2, 3, 7} {
				for _, packA := range []bool{true, false} {
					var first []float32
					for _, workers := range []int{1, 2, 16} {
						p := newPlan(kern, tc.m, tc.n, tc.k, tc.alpha, matrix{a, lda, tc.transA}, matrix{b, ldb, tc.transB})
						p.parts, p.packA = parts, packA
						copy(c, c0)
						if workers == 1 && parts == 1 {
							p.serial(tc.m, tc.n, tc.k, tc.beta, c, ldc) // as sgemm runs it
						} else {
							p.parallel(workers, tc.m, tc.n, tc.k, tc.beta, c, ldc)
						}
						name := fmt.Sprintf("%v/parts=%d/packA=%v/workers=%d/%+v", kern, parts, packA, workers, tc)
						checkGemm(t, name, c, want, tc, ldc)
						if first == nil {
							first = append([]float32(nil), c...)
						} else if !slices.Equal(first, c) {
							t.Fatalf("%s: result differs from the one on one worker", name)
						}
						if workers > 1 {
							// B packed by each worker for itself, whatever privateB says.
							p.packB = true
							copy(c, c0)
							p.parallelPrivate(workers, tc.m, tc.n, tc.k, tc.beta, c, ldc)
							if !slices.Equal(first, c) {
								t.Fatalf("%s: B packed by each worker: result differs from the one on one worker", name)
							}
						}
					}
				}
			}
		}
	}
}

// TestKParts checks which shapes split their sum: the weight gradients of a small
// transformer do, square and tall products do not.
func TestKParts(t *testing.T) {
	kern := goKernelOf(shapeAVX512) // 12×32 tiles
	for _, c := range []struct{ m, n, k, want int }{
		{128, 128, 2048, 8},   // 44 tiles
		{128, 512, 2048, 3},   // 176 tiles
		{512, 128, 2048, 3},   // 172 tiles
		{256, 128, 784, 4},    // 88 tiles: four parts of 196, one step
		{1024, 1024, 1024, 1}, // 2752 tiles
		{2048, 128, 128, 1},   // 684 tiles
		{32, 32, 256, 1},      // too small to be worth a worker
		{12, 32, 1 << 20, 1},  // B of the whole sum too large to pack at once
	} {
		if got := (plan{kern: kern}).kParts(c.m, c.n, c.k); got != c.want {
			t.Errorf("kParts(%d, %d, %d) = %d, want %d", c.m, c.n, c.k, got, c.want)
		}
	}
}
