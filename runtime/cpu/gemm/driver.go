package gemm

import (
	"sync"

	"github.com/gml-dev/gml/runtime/cpu/internal/hugepage"
)

// nr is the width of one packed B panel (PackWidth). A micro-kernel's rows (kernel.mr)
// and its number of panels per call depend on its shape (kernel.go).
const nr = 16

// maxTile is the most floats of a micro-kernel's tile (avx512's 12×32).
const maxTile = 12 * 32

// tuning is what a kernel shape sets for the CPUs that run it: the cache blocking (the
// packed mc×kc A block in L2, the kc×nc B panel in L3; mc is a multiple of the shape's
// mr), sweep, the columns of a block that one strip of A multiplies before the next
// strip (macroKernel, a multiple of the kernel's width: with the width, the kc×width B
// micro-panel stays in L1 for all the strips; with more, the mr×kc strip of A stays in
// L1 and the kc×sweep B block in L2), and alias: an operand read in place whose rows lie
// a multiple of alias floats apart is packed anyway, as its rows would compete for a few
// sets of L1.
type tuning struct{ mc, kc, nc, alias, sweep int }

// zen3Tuning suits AMD Zen 3 (32 KiB 8-way L1d, 512 KiB L2 per core, shared L3): the
// blocking measured with `gml bench cpu` for the 6×16 kernels, and rows 1 KiB apart
// packed.
var zen3Tuning = tuning{mc: 144, kc: 256, nc: 3072, alias: 256, sweep: nr}

// xeonTuning suits the Intel Xeons with AVX-512 (48 KiB 12-way L1d, 2 MiB L2 per core).
// Of the blockings swept on the H200 host's Xeon at 2 threads (n = 1024 and 2048,
// 1024×4096×4096 plain and transposed), mc = 384 with kc = 256 (two B panels, 32 KiB,
// in L1; a 384 KiB A block in the larger L2) was 10-15% faster than Zen 3's 144, and
// level at 16; on the training products of bench cpu's train preset the two were within
// the host's noise. Twelve rows of A read in place 2 KiB apart (the 2048×128×512 products of
// a small transformer, k = 512) take six ways of two sets, which the 12-way L1 holds:
// there the avx512 kernel ran within 10% of its speed on packed A, while packing A cost
// about a third of the product. Rows 4 KiB apart (all twelve in one set) are still
// packed. Sweeps there at 2 threads (interleaved with main, the host varying by ±15%
// run to run) found kc = 192 within the noise (0.86-1.04 of kc = 256 on the
// 1024×4096×4096 forms and the squares), mc = 512 slower (0.77-0.89), and a software
// prefetch of A 8 or 16 steps ahead in the kernel within the noise (0.80-1.08). A
// strip of A (12 KiB) stays in L1 while it sweeps 512 columns of B, whose 512 KiB block
// stays in L2 (doc.go, "Sweep").
var xeonTuning = tuning{mc: 384, kc: 256, nc: 3072, alias: 1024, sweep: 512}

// matrix is one operand as BLAS sees it: row-major data with leading dimension ld, read
// transposed when trans is set.
type matrix struct {
	data  []float32
	ld    int
	trans bool
}

// workspace holds one goroutine's packing buffers, edge panels and edge tile.
type workspace struct {
	packedA, packedB []float32
	edgeA, edgeB     []float32
	partial          []float32 // the C of the parts of a split sum but the first
	tile             [maxTile]float32
}

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

// grow returns buf with length n, reallocating only when its capacity is short. A large
// new buffer (the packed B panels of a step, 6 MiB at n = 4096) is advised for huge pages.
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		buf = make([]float32, n)
		hugepage.AdviseFloats(buf)
		return buf
	}
	return buf[:n]
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// Packing copies an operand into the order the micro-kernel reads, which costs about a
// nanosecond per element; a packed element of A then serves n multiply-adds and one of
// B serves m. When the other dimension is small the copy costs as much as the product,
// so the kernels read the operand where it lies instead (the general strides of
// kernel.go): A when n <= inPlaceACols, B
// as stored (not transposed) when m <= inPlaceBRows, unless the rows alias in L1
// (tuning.alias).
const (
	inPlaceACols = 256
	inPlaceBRows = 96
)

// plan is how one product reads its operands.
type plan struct {
	kern         *kernel
	a            matrix
	b            BPacker
	alpha        float32
	packA, packB bool
	parts        int             // of the sum over k (kParts)
	bias         []float32       // added to every row of C after the whole sum (SgemmBias), or nil
	then         func([]float32) // called on C's rows after the bias (SgemmBiasThen), or nil
}

func newPlan(kern *kernel, m, n, k int, alpha float32, a matrix, b BPacker) plan {
	p := plan{kern: kern, a: a, b: b, alpha: alpha, packA: true, packB: true, parts: 1}
	p.parts = p.kParts(m, n, k)
	if p.aInPlace(n) {
		p.packA = false
	}
	if bm, ok := b.(matrix); ok && !bm.trans && m <= inPlaceBRows && bm.ld%kern.alias != 0 {
		p.packB = false
	}
	return p
}

// aInPlace reports whether A is read in place for products cols columns wide. Parallel
// products ask again for the columns of one item, since A is packed again for each.
func (p plan) aInPlace(cols int) bool {
	return cols <= inPlaceACols && (p.a.trans || p.a.ld%p.kern.alias != 0)
}

// aBlock is how the micro-kernel reads an mb×kb block of op(A): strip s (rows s·mr on)
// starts at data[s·strip], element (i, p) of it at [i·rs + p·cs]; a last strip of fewer
// than mr rows read in place is edge, packed (nil when packed whole).
type aBlock struct {
	data          []float32
	strip, rs, cs int
	edge          []float32
}

// blockA prepares rows [ic, ic+mb) and columns [pc, pc+kb) of op(A).
func (p plan) blockA(ws *workspace, ic, mb, pc, kb int) aBlock {
	mr := p.kern.mr
	if p.packA {
		ws.packedA = grow(ws.packedA, roundUp(mb, mr)*kb)
		packA(ws.packedA, mr, p.a, ic, mb, pc, kb)
		return aBlock{data: ws.packedA, strip: mr * kb, rs: 1, cs: mr}
	}
	var blk aBlock
	if p.a.trans {
		blk = aBlock{data: p.a.data[pc*p.a.ld+ic:], strip: mr, rs: 1, cs: p.a.ld}
	} else {
		blk = aBlock{data: p.a.data[ic*p.a.ld+pc:], strip: mr * p.a.ld, rs: p.a.ld, cs: 1}
	}
	if full := mb / mr * mr; full < mb {
		ws.edgeA = grow(ws.edgeA, mr*kb)
		packA(ws.edgeA, mr, p.a, ic+full, mb-full, pc, kb)
		blk.edge = ws.edgeA
	}
	return blk
}

// bBlock is how the micro-kernel reads a kb×nb block of B: panel t (columns t·nr on) at
// data[t·panel], row p of it at [p·rs]; columns from inPlace on (a last partial panel of
// B read as stored) come from edge, packed.
type bBlock struct {
	data      []float32
	panel, rs int
	inPlace   int
	edge      []float32
}

// blockB prepares rows [pc, pc+kb) and columns [jc, jc+nb) of B, packing into dst when
// the plan packs B.
func (p plan) blockB(dst []float32, ws *workspace, pc, kb, jc, nb int) bBlock {
	if p.packB {
		p.b.PackB(dst, pc, kb, jc, nb)
		return bBlock{data: dst, panel: nr * kb, rs: nr, inPlace: roundUp(nb, nr)}
	}
	bm := p.b.(matrix)
	blk := bBlock{data: bm.data[pc*bm.ld+jc:], panel: nr, rs: bm.ld, inPlace: nb / nr * nr}
	if blk.inPlace < nb {
		ws.edgeB = grow(ws.edgeB, nr*kb)
		bm.PackB(ws.edgeB, pc, kb, jc+blk.inPlace, nb-blk.inPlace)
		blk.edge = ws.edgeB
	}
	return blk
}

// macroKernel multiplies the mb×kb A block by the kb×nb B block and writes alpha times
// the product into the mb×nb block of c, added to it when add is set, and then adds
// bias (the block's columns; nil for none) to each of its rows, tile by tile while the
// tile is in L1; with then (nil for none) it adds the bias to each of the block's rows
// and calls then on the row once the block is done, while it is in L2. The block's
// columns are taken sweep (tuning) at a time; within them, each strip of A goes over all
// their B panels before the next strip: with sweep the kernel's width, one pair of B
// panels stays in L1 for all the strips (the BLIS order), with a wider sweep one strip
// of A does, and the panels stream from L2. Pairs of B panels go through the kernel's
// full form, a single one (the last of an odd count, or one before B's packed edge)
// through its narrow form; edge tiles go through tile so the micro-kernel always writes
// a whole tile.
func macroKernel(kern *kernel, ab aBlock, bb bBlock, tile *[maxTile]float32,
	mb, nb, kb int, c []float32, ldc int, alpha float32, add bool, bias []float32, then func([]float32)) {
	mr := kern.mr
	for j0 := 0; j0 < nb; j0 += kern.sweep {
		j1 := min(j0+kern.sweep, nb)
		for ir := 0; ir < mb; ir += mr {
			rows := min(mr, mb-ir)
			a, rsA, csA := ab.data[ir/mr*ab.strip:], ab.rs, ab.cs
			if rows < mr && ab.edge != nil {
				a, rsA, csA = ab.edge, 1, mr
			}
			// A full-width call starts at a multiple of the width (sweep is one), and
			// once a call is narrow all the following are, so none crosses j1.
			for jr := j0; jr < j1; {
				fn, width := kern.full, kern.width()
				b, rsB, offB := bb.data[jr/nr*bb.panel:], bb.rs, bb.panel
				switch {
				case jr+width <= bb.inPlace:
				case jr+nr <= bb.inPlace:
					fn, width = kern.narrowest(), nr
				default:
					fn, width = kern.narrowest(), nr
					b, rsB, offB = bb.edge, nr, nr*kb
				}
				cols := min(width, nb-jr)
				off := ir*ldc + jr
				if rows == mr && cols == width {
					fn(kb, a, rsA, csA, b, rsB, offB, c[off:], ldc, alpha, add)
				} else {
					t := tile[:mr*width]
					fn(kb, a, rsA, csA, b, rsB, offB, t, width, alpha, false)
					for i := 0; i < rows; i++ {
						dst := c[off+i*ldc : off+i*ldc+cols]
						if !add {
							copy(dst, t[i*width:])
							continue
						}
						for j := range dst {
							dst[j] += t[i*width+j]
						}
					}
				}
				if bias != nil && then == nil {
					for i := 0; i < rows; i++ {
						addBias(c[off+i*ldc:][:cols], bias[jr:])
					}
				}
				jr += width
			}
		}
	}
	if bias != nil && then != nil {
		// With then, the bias too goes row by row over the block: one call each per
		// row instead of one per row of each tile, which cost as much as a pass.
		for i := range mb {
			row := c[i*ldc:][:nb]
			addBias(row, bias)
			then(row)
		}
	}
}

// axpyBias is the assembly AXPY that addBias uses where the CPU has one, else nil; tests
// set it to nil to cover the Go loop.
var axpyBias, _ = nativeVector()

// addBias adds bias[j] to row[j] for every j < len(row): the epilogue of SgemmBias, on
// a value of C whose sum is complete, so that it rounds as a separate add would. The
// AXPY computes 1·bias[j] + row[j], which is that add exactly, fused or not.
func addBias(row, bias []float32) {
	if axpyBias != nil {
		axpyBias(1, bias, row)
		return
	}
	for j := range row {
		row[j] += bias[j]
	}
}

// addBiasRows adds bias to each of the m rows (n wide) of c and calls then (nil for
// none) on it: the epilogue of a product computed without the driver (one-row products,
// OpenBLAS, a k or alpha of 0).
func addBiasRows(m, n int, bias []float32, then func([]float32), c []float32, ldc int) {
	if bias == nil {
		return
	}
	for i := range m {
		addBias(c[i*ldc:][:n], bias)
		if then != nil {
			then(c[i*ldc:][:n])
		}
	}
}

// scale multiplies the m×n block of c by beta; beta == 0 writes zeros, so NaNs already in
// C do not survive (the BLAS convention).
func scale(m, n int, beta float32, c []float32, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packA copies rows [i0, i0+mb) and columns [p0, p0+kb) of op(A) into dst
// as strips of mr rows; within a strip the mr values of one column are adjacent. Rows
// past mb in the last strip are zero. A transposed A (each stored row holds one column
// of the block) is copied by copyStrips where the CPU has it, its full strips
// packAChunk at a time; the rest (a last partial strip, other CPUs) piece by piece.
func packA(dst []float32, mr int, a matrix, i0, mb, p0, kb int) {
	done := 0
	if a.trans && copyStrips != nil && mr >= 4 && mr <= 16 && kb > 0 {
		for full := mb / mr * mr; done < full; {
			end := min(done+packAChunk*mr, full)
			// The assembly trusts its bounds: check the last element it reads and writes.
			_, _ = a.data[(p0+kb-1)*a.ld+i0+end-1], dst[end*kb-1]
			copyStrips(dst[done*kb:], kb, a.data[p0*a.ld+i0+done:], a.ld, kb, mr, (end-done)/mr)
			done = end
		}
	}
	for s := done; s < mb; s += mr {
		rows := min(mr, mb-s)
		d := dst[s*kb : (s+mr)*kb]
		if a.trans {
			for p := 0; p < kb; p++ {
				src := a.data[(p0+p)*a.ld+i0+s:][:rows]
				dp := d[p*mr : p*mr+mr]
				copy(dp, src)
				clear(dp[rows:])
			}
			continue
		}
		if rows < mr {
			clear(d)
		}
		transposeRows(d, mr, a.data[(i0+s)*a.ld+p0:], a.ld, rows, kb)
	}
}

// transpose4 is the assembly transpose of four rows (dst[p·ldd + i] = src[i·ld + p] for
// i < 4 and p < k, k a multiple of 8), nil where the CPU has none. Tests set it to nil to
// cover the Go code.
var transpose4 = nativeTranspose4()

// transpose16 is the AVX-512 transpose of up to sixteen rows (dst[p·ldd + i] = src[i·ld
// + p] for i < rows and p < k, k a multiple of 16), nil where the CPU has none; where it
// is, transposeRows takes it rather than transpose4. Tests set it to nil to cover the
// others.
var transpose16 = nativeTranspose16()

// transposeRows writes dst[p·ldd + i] = src[i·ld + p] for i < rows and p < kb: the
// packing of a row-major A strip or of a transposed B panel. Copying element by element
// costs about a nanosecond each, as much as the product when the other dimension is
// small (32×784×128 with B transposed), so all the rows go through transpose16 sixteen
// columns at a time where the CPU has AVX-512, else groups of four rows through
// transpose4 eight columns at a time (a last group of fewer than four overlaps the one
// before it, writing some values twice); what remains is copied one element at a time.
func transposeRows(dst []float32, ldd int, src []float32, ld, rows, kb int) {
	k8 := 0
	switch {
	case transpose16 != nil && rows <= 16 && kb >= 16:
		k8 = kb &^ 15
		// The assembly trusts its bounds: check the last element it reads and writes.
		_, _ = src[(rows-1)*ld+k8-1], dst[(k8-1)*ldd+rows-1]
		transpose16(dst, ldd, src, ld, rows, k8)
	case transpose4 != nil && rows >= 4 && kb >= 8:
		k8 = kb &^ 7
		for g := 0; g < rows; g += 4 {
			g = min(g, rows-4)
			// The assembly trusts its bounds: check the last element it reads and writes.
			_, _ = src[(g+3)*ld+k8-1], dst[g+(k8-1)*ldd+3]
			transpose4(dst[g:], ldd, src[g*ld:], ld, k8)
		}
	}
	if k8 == kb {
		return
	}
	// Row by row: each source row streams in order, and the destination (ldd·kb floats)
	// stays in L1 while its columns fill.
	for i := 0; i < rows; i++ {
		for p, v := range src[i*ld+k8 : i*ld+kb] {
			dst[(k8+p)*ldd+i] = v
		}
	}
}

// packBChunk is how many columns of a B as stored PackB copies at a time, each chunk row
// after row of the slice: eight panels. Consecutive panels lie 16·kb floats apart (16
// KiB at kc = 256), so copying whole rows stored each row into every panel of the block
// (96 to 192 of them on a step's share), each store on another page and all in one set
// of L1; eight at a time, the stores stream into eight places. This was why the plain
// 1024×4096×4096 product ran 10-20% below its B-transposed form at 2 threads on the
// H200 host: a step there packs 3072 columns of B for 1024 rows of A, so the packing,
// at several nanoseconds an element, took a fifth of a step. Measured together with a
// column grid for the workers that was then dropped (alone it ran at 0.84-0.99 of main
// on this product), packing in chunks took it to 1.06-1.21 of main in three interleaved
// rounds at 2 threads (1.03-1.12 in two rounds of an earlier sweep), and the other forms
// and squares, whose B is transposed or whose steps are longer, within the noise; at 16
// threads the products ran at 0.97-1.00 of main (one round). On the development
// machine (Zen 4), packing 256 rows of a B 4096 floats wide took 2.0-2.4 ns an element
// row by row and 0.55-0.65 in chunks of 4 to 32 panels; 1024 floats wide, 0.64-0.84
// either way. Where the CPU has AVX2 a chunk is copied by copyPanels.
const packBChunk = 8 * nr

// copyPanels is the assembly copy of a chunk's rows into its panels (dst[t·nr·kb + p·nr +
// j] = src[p·ld + t·nr + j] for p < rows, t < panels, j < nr), which also prefetches the
// rows it will copy next: each lies on a page of its own, where the hardware prefetchers
// do not reach. nil where the CPU has none; tests set it to nil to cover the Go loop.
var copyPanels = nativeCopyPanels()

// copyStrips is the assembly copy of rows of a transposed A into its strips, which
// prefetches as copyPanels does (copyPanels is its width of 16): dst[t·width·kb +
// p·width + i] = src[p·ld + t·width + i] for p < rows, t < strips, i < width, 4 <= width
// <= 16. nil where the CPU has none; tests set it to nil to cover the Go loop.
var copyStrips = nativeCopyStrips()

// packAChunk is how many strips of a transposed A packA copies at a time, row after row
// of the block (copyStrips). Each stored row gives mr floats to every strip, and the
// strips lie mr·kb floats apart (12 KiB for avx512 at kc = 256, all in one L1 set), so a
// whole block of 32 strips at a time packed at 0.9 ns an element on the development
// machine (Zen 4), as slowly as the memmove call per piece before, one strip at a time
// at 0.41, and two to eight at 0.35-0.45.
const packAChunk = 4

// PackB packs rows [p0, p0+kb) and columns [j0, j0+nb) of op(b) as BPacker describes.
func (b matrix) PackB(dst []float32, p0, kb, j0, nb int) {
	if !b.trans {
		full := nb / nr * nr
		for c0 := 0; c0 < full; c0 += packBChunk {
			c1 := min(c0+packBChunk, full)
			if copyPanels != nil && kb > 0 {
				// The assembly trusts its bounds: check the last element it reads and writes.
				_, _ = b.data[(p0+kb-1)*b.ld+j0+c1-1], dst[(c1-nr)*kb+kb*nr-1]
				copyPanels(dst[c0*kb:], kb, b.data[p0*b.ld+j0+c0:], b.ld, kb, (c1-c0)/nr)
				continue
			}
			for p := 0; p < kb; p++ {
				src := b.data[(p0+p)*b.ld+j0:][:nb]
				for s := c0; s < c1; s += nr {
					// Through a local copy, which the compiler moves in registers; a direct
					// array assignment calls memmove, as the two might overlap.
					v := *(*[nr]float32)(src[s:])
					*(*[nr]float32)(dst[s*kb+p*nr:]) = v
				}
			}
		}
		if full < nb {
			for p := 0; p < kb; p++ {
				dp := dst[full*kb+p*nr:][:nr]
				copy(dp, b.data[(p0+p)*b.ld+j0+full:][:nb-full])
				clear(dp[nb-full:])
			}
		}
		return
	}
	for s := 0; s < nb; s += nr {
		cols := min(nr, nb-s)
		d := dst[s*kb : (s+nr)*kb]
		if cols < nr {
			clear(d)
		}
		transposeRows(d, nr, b.data[(j0+s)*b.ld+p0:], b.ld, cols, kb)
	}
}
