package gemm

import (
	"sync"
	"sync/atomic"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

// nr is the width of one packed B panel (PackWidth). A micro-kernel's rows (kernel.mr)
// and its number of panels per call depend on its shape (kernel.go).
const nr = 16

// maxTile is the most floats of a micro-kernel's tile (avx512's 12×32).
const maxTile = 12 * 32

// Cache blocking for AMD Zen 3 (32 KiB L1d, 512 KiB L2 per core, shared L3): a packed
// k×nr B micro-panel (blockK*nr*4 bytes) stays in L1, the packed blockM×blockK A block in
// L2, and the blockK×blockN B panel in L3. Measured with `gml bench cpu`. blockM is a
// multiple of every kernel's mr.
const (
	blockM = 144
	blockK = 256
	blockN = 3072
)

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
	tile             [maxTile]float32
}

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

// grow returns buf with length n, reallocating only when its capacity is short.
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// Packing copies an operand into the order the micro-kernel reads, which costs about a
// nanosecond per element; a packed element of A then serves n multiply-adds and one of
// B serves m. When the other dimension is small the copy costs as much as the product,
// so the kernels read the operand where it lies instead (the general strides of
// kernel.go): A when n <= inPlaceACols, B
// as stored (not transposed) when m <= inPlaceBRows. Rows of A or B whose leading
// dimension is a multiple of inPlaceAlias floats would share L1 cache sets, so those
// are packed anyway.
const (
	inPlaceACols = 256
	inPlaceBRows = 96
	inPlaceAlias = 256
)

// plan is how one product reads its operands.
type plan struct {
	kern         *kernel
	a            matrix
	b            BPacker
	alpha        float32
	packA, packB bool
}

func newPlan(kern *kernel, m, n int, alpha float32, a matrix, b BPacker) plan {
	p := plan{kern: kern, a: a, b: b, alpha: alpha, packA: true, packB: true}
	if n <= inPlaceACols && (a.trans || a.ld%inPlaceAlias != 0) {
		p.packA = false
	}
	if bm, ok := b.(matrix); ok && !bm.trans && m <= inPlaceBRows && bm.ld%inPlaceAlias != 0 {
		p.packB = false
	}
	return p
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

// sgemm computes C = alpha*op(A)*op(B) + beta*C for validated, non-empty arguments,
// split between workers when parallelOK is set and the product is large enough.
func sgemm(kern *kernel, parallelOK bool, m, n, k int, alpha float32, a matrix, b BPacker,
	beta float32, c []float32, ldc int) {
	p := newPlan(kern, m, n, alpha, a, b)
	workers := 1
	if parallelOK {
		workers = p.workers(m, n, k, parallel.Workers())
	}
	if workers == 1 {
		p.serial(m, n, k, beta, c, ldc)
		return
	}
	p.parallel(workers, m, n, k, beta, c, ldc)
}

// workers is how many of the available goroutines share an m×n×k product: one per
// parallel.MinWork multiply-adds (a product of 1M runs on two cores, one of 8M on
// sixteen), and no more than the product has tiles (a worker with no tile would only
// wait at the barriers).
func (p plan) workers(m, n, k, available int) int {
	tiles := (m + p.kern.mr - 1) / p.kern.mr * ((n + p.kern.width() - 1) / p.kern.width())
	return max(1, min(available, m*n*k/parallel.MinWork, tiles))
}

// rowChunk is the number of rows of C one work item covers: blockM, or fewer (a multiple
// of the kernel's rows) when the product has too few row blocks to give every worker
// several items, as the weight gradients of a training step (128×512 summed over 2048
// tokens) have on sixteen workers.
func (p plan) rowChunk(m, n, workers int) int {
	rows := blockM
	cols := (n + p.kern.width() - 1) / p.kern.width()
	for rows > p.kern.mr && (m+rows-1)/rows*cols < 4*workers {
		rows = max(p.kern.mr, roundUp(rows/2, p.kern.mr))
	}
	return rows
}

// serial is the single-goroutine blocked product (the BLIS loop order): for each
// blockN-wide panel of C and blockK-deep slice of the sum it packs B once, then packs A
// blockM rows at a time and sweeps the micro-kernel over the tiles.
func (p plan) serial(m, n, k int, beta float32, c []float32, ldc int) {
	if p.prescale(k, beta) {
		scale(m, n, beta, c, ldc)
	}
	if k == 0 || p.alpha == 0 {
		return
	}
	ws := workspaces.Get().(*workspace)
	defer workspaces.Put(ws)
	if p.packB {
		ws.packedB = grow(ws.packedB, roundUp(min(n, blockN), nr)*min(k, blockK))
	}
	for jc := 0; jc < n; jc += blockN {
		nb := min(blockN, n-jc)
		for pc := 0; pc < k; pc += blockK {
			kb := min(blockK, k-pc)
			bb := p.blockB(ws.packedB, ws, pc, kb, jc, nb)
			for ic := 0; ic < m; ic += blockM {
				mb := min(blockM, m-ic)
				ab := p.blockA(ws, ic, mb, pc, kb)
				macroKernel(p.kern, ab, bb, &ws.tile, mb, nb, kb, c[ic*ldc+jc:], ldc, p.alpha, beta != 0 || pc > 0)
			}
		}
	}
}

// prescale reports whether C must be scaled by beta before the product is added: the
// kernels' first k-slice writes over C, so beta == 0 needs no pass of its own unless no
// product is written (k or alpha is 0).
func (p plan) prescale(k int, beta float32) bool {
	return beta != 1 && (beta != 0 || k == 0 || p.alpha == 0)
}

// parallel has the loop order of serial, with the work of each step shared out. One
// goroutine per worker lives through the whole product (waking a sleeping goroutine at
// every step would cost tens of microseconds): per k-slice the workers pack their share
// of the B panel, meet at a barrier, take (row block, column range) items from that
// step's counter, each packing its own A block, and meet again before the panel is
// overwritten. Taking items dynamically keeps both cores busy when another process
// slows one of them down.
func (p plan) parallel(workers, m, n, k int, beta float32, c []float32, ldc int) {
	if !p.packB {
		p.parallelInPlace(workers, m, n, k, beta, c, ldc)
		return
	}
	shared := workspaces.Get().(*workspace)
	defer workspaces.Put(shared)
	shared.packedB = grow(shared.packedB, roundUp(min(n, blockN), nr)*min(k, blockK))
	pb := shared.packedB
	rows := p.rowChunk(m, n, workers)
	rowBlocks := (m + rows - 1) / rows
	counters := make([]atomic.Int64, max(1, ((n+blockN-1)/blockN)*((k+blockK-1)/blockK)))
	bar := newBarrier(workers)
	parallel.Run(workers, func(w int) {
		// A panic (from a caller's BPacker) must not leave the others at a barrier.
		defer func() {
			if r := recover(); r != nil {
				bar.abort(r)
				panic(r)
			}
		}()
		if p.prescale(k, beta) {
			lo, hi := share(m, w, workers)
			scale(hi-lo, n, beta, c[lo*ldc:], ldc)
		}
		if k == 0 || p.alpha == 0 {
			return
		}
		ws := workspaces.Get().(*workspace)
		defer workspaces.Put(ws)
		step := 0
		for jc := 0; jc < n; jc += blockN {
			nb := min(blockN, n-jc)
			strips := (nb + nr - 1) / nr
			colParts, stripsPerPart := p.columnParts(strips, rowBlocks, workers)
			items := rowBlocks * colParts
			for pc := 0; pc < k; pc += blockK {
				kb := min(blockK, k-pc)
				if lo, hi := share(strips, w, workers); lo < hi {
					p.b.PackB(pb[lo*nr*kb:], pc, kb, jc+lo*nr, min(hi*nr, nb)-lo*nr)
				}
				bar.wait()
				lastRow := -1
				var ab aBlock
				for {
					item := int(counters[step].Add(1)) - 1
					if item >= items {
						break
					}
					// Consecutive items take consecutive row blocks, so that with as
					// many row blocks as workers each worker keeps its packed A block.
					row, part := item%rowBlocks, item/rowBlocks
					ic := row * rows
					mb := min(rows, m-ic)
					if row != lastRow {
						ab = p.blockA(ws, ic, mb, pc, kb)
						lastRow = row
					}
					j0 := part * stripsPerPart * nr
					j1 := min(j0+stripsPerPart*nr, nb)
					bb := bBlock{data: pb[j0*kb:], panel: nr * kb, rs: nr, inPlace: roundUp(j1-j0, nr)}
					macroKernel(p.kern, ab, bb, &ws.tile, mb, j1-j0, kb, c[ic*ldc+jc+j0:], ldc, p.alpha, beta != 0 || pc > 0)
				}
				bar.wait()
				step++
			}
		}
	})
}

// columnParts splits strips B panels into parts of whole kernel calls, more parts when
// there are few row blocks, so that every worker has several items to take.
func (p plan) columnParts(strips, rowBlocks, workers int) (parts, stripsPerPart int) {
	parts = min(strips, max(1, (4*workers+rowBlocks-1)/rowBlocks))
	stripsPerPart = roundUp((strips+parts-1)/parts, p.kern.strips)
	return (strips + stripsPerPart - 1) / stripsPerPart, stripsPerPart
}

// parallelInPlace is parallel for a B read in place: nothing is shared, so each item (a
// row block and a column range of C) is scaled and then summed over all of k by the
// worker that takes it, with no barrier.
func (p plan) parallelInPlace(workers, m, n, k int, beta float32, c []float32, ldc int) {
	rows := p.rowChunk(m, n, workers)
	rowBlocks := (m + rows - 1) / rows
	colParts, stripsPerPart := p.columnParts((n+nr-1)/nr, rowBlocks, workers)
	items := rowBlocks * colParts
	var next atomic.Int64
	parallel.Run(min(workers, items), func(int) {
		ws := workspaces.Get().(*workspace)
		defer workspaces.Put(ws)
		for item := int(next.Add(1)) - 1; item < items; item = int(next.Add(1)) - 1 {
			row, part := item%rowBlocks, item/rowBlocks
			ic, j0 := row*rows, part*stripsPerPart*nr
			mb, nb := min(rows, m-ic), min(stripsPerPart*nr, n-j0)
			cb := c[ic*ldc+j0:]
			if p.prescale(k, beta) {
				scale(mb, nb, beta, cb, ldc)
			}
			for pc := 0; pc < k; pc += blockK {
				kb := min(blockK, k-pc)
				ab := p.blockA(ws, ic, mb, pc, kb)
				bb := p.blockB(nil, ws, pc, kb, j0, nb)
				macroKernel(p.kern, ab, bb, &ws.tile, mb, nb, kb, cb, ldc, p.alpha, beta != 0 || pc > 0)
			}
		}
	})
}

// share returns worker w's contiguous part [lo, hi) of n items split between workers.
func share(n, w, workers int) (lo, hi int) {
	return n * w / workers, n * (w + 1) / workers
}

// barrier is a reusable meeting point for a fixed number of goroutines. A waiter first
// spins, since on a quiet machine the wait is microseconds long, far shorter than putting
// a goroutine to sleep and waking it; if the wait goes on (another process holds the
// core the last party needs), it sleeps so as not to hold its own core.
type barrier struct {
	parties int32
	arrived atomic.Int32
	_       [60]byte // phase, which every waiter polls, on a cache line of its own
	phase   atomic.Int32
	_       [60]byte
	cause   atomic.Pointer[any]
	mu      sync.Mutex
	cond    sync.Cond
}

// barrierSpins is how many times a waiter checks the barrier before it sleeps (some
// tens of microseconds).
const barrierSpins = 4000

func newBarrier(parties int) *barrier {
	b := &barrier{parties: int32(parties)}
	b.cond.L = &b.mu
	return b
}

// abort makes every waiter, now and later, panic with the value of the first abort.
func (b *barrier) abort(cause any) {
	b.cause.CompareAndSwap(nil, &cause)
	b.mu.Lock()
	b.cond.Broadcast()
	b.mu.Unlock()
}

// wait returns once all parties have called it for the current phase.
func (b *barrier) wait() {
	phase := b.phase.Load()
	if b.arrived.Add(1) == b.parties {
		b.arrived.Store(0)
		b.mu.Lock()
		b.phase.Add(1)
		b.cond.Broadcast()
		b.mu.Unlock()
		return
	}
	for spins := 0; spins < barrierSpins; spins++ {
		if b.phase.Load() != phase {
			return
		}
		b.checkAbort()
	}
	b.mu.Lock()
	for b.phase.Load() == phase && b.cause.Load() == nil {
		b.cond.Wait()
	}
	b.mu.Unlock()
	b.checkAbort()
}

func (b *barrier) checkAbort() {
	if cause := b.cause.Load(); cause != nil {
		panic(*cause)
	}
}

// macroKernel multiplies the mb×kb A block by the kb×nb B block and writes alpha times
// the product into the mb×nb block of c, added to it when add is set. Pairs of B panels go through the kernel's full form, a single one (the last of an
// odd count, or one before B's packed edge) through its narrow form; edge tiles go
// through tile so the micro-kernel always writes a whole tile.
func macroKernel(kern *kernel, ab aBlock, bb bBlock, tile *[maxTile]float32,
	mb, nb, kb int, c []float32, ldc int, alpha float32, add bool) {
	mr := kern.mr
	for jr := 0; jr < nb; {
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
		for ir := 0; ir < mb; ir += mr {
			rows := min(mr, mb-ir)
			a, rsA, csA := ab.data[ir/mr*ab.strip:], ab.rs, ab.cs
			if rows < mr && ab.edge != nil {
				a, rsA, csA = ab.edge, 1, mr
			}
			off := ir*ldc + jr
			if rows == mr && cols == width {
				fn(kb, a, rsA, csA, b, rsB, offB, c[off:], ldc, alpha, add)
				continue
			}
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
		jr += width
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
// past mb in the last strip are zero.
func packA(dst []float32, mr int, a matrix, i0, mb, p0, kb int) {
	for s := 0; s < mb; s += mr {
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

// transposeRows writes dst[p·ldd + i] = src[i·ld + p] for i < rows and p < kb: the
// packing of a row-major A strip or of a transposed B panel. Copying element by element
// costs about a nanosecond each, as much as the product when the other dimension is
// small (32×784×128 with B transposed), so groups of four rows go through transpose4
// eight columns at a time (a last group of fewer than four overlaps the one before it,
// writing some values twice); what remains is copied one element at a time.
func transposeRows(dst []float32, ldd int, src []float32, ld, rows, kb int) {
	k8 := 0
	if transpose4 != nil && rows >= 4 && kb >= 8 {
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

// PackB packs rows [p0, p0+kb) and columns [j0, j0+nb) of op(b) as BPacker describes.
func (b matrix) PackB(dst []float32, p0, kb, j0, nb int) {
	if !b.trans {
		// Row by row, so the source streams through the cache in order.
		full := nb / nr * nr
		for p := 0; p < kb; p++ {
			src := b.data[(p0+p)*b.ld+j0:][:nb]
			for s := 0; s < full; s += nr {
				// Through a local copy, which the compiler moves in registers; a direct
				// array assignment calls memmove, as the two might overlap.
				v := *(*[nr]float32)(src[s:])
				*(*[nr]float32)(dst[s*kb+p*nr:]) = v
			}
			if full < nb {
				dp := dst[full*kb+p*nr:][:nr]
				copy(dp, src[full:])
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
