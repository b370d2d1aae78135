package gemm

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

// sgemm computes C = alpha*op(A)*op(B) + beta*C, plus bias in every row when it is not
// nil, for validated, non-empty arguments, split between workers when parallelOK is set
// and the product is large enough.
func sgemm(kern *kernel, parallelOK bool, m, n, k int, alpha float32, a matrix, b BPacker,
	beta float32, c []float32, ldc int, bias []float32, then func([]float32)) {
	p := newPlan(kern, m, n, k, alpha, a, b)
	p.bias, p.then = bias, then
	workers := 1
	if parallelOK {
		workers = p.workers(m, n, k, parallel.Workers())
	}
	if workers == 1 && p.parts == 1 {
		p.serial(m, n, k, beta, c, ldc)
		return
	}
	p.parallel(workers, m, n, k, beta, c, ldc)
}

// workers is how many of the available goroutines share an m×n×k product: one per
// parallel.MinWork multiply-adds (a product of 1M runs on two cores, one of 8M on
// sixteen), and no more than the product has tiles in all its k parts (a worker with no
// tile would only wait for the others).
func (p plan) workers(m, n, k, available int) int {
	return max(1, min(available, m*n*k/parallel.MinWork, p.tiles(m, n)*p.parts))
}

// tiles is the number of micro-kernel tiles of an m×n C.
func (p plan) tiles(m, n int) int {
	return (m + p.kern.mr - 1) / p.kern.mr * ((n + p.kern.width() - 1) / p.kern.width())
}

// Splitting the sum over k. A product whose C has few tiles and whose k is long (the
// weight gradients of a training step, 128×128 summed over 2048 tokens: 44 tiles for
// sixteen cores) is summed in parts: contiguous ranges of k, each into a C of its own
// (part 0 into C itself), the others added to C in order at the end. The number of parts
// follows from the shape alone, never from the number of workers, so the result is the
// same bits whatever GML_THREADS is. A part costs one more pass over an m×n C, as much
// as one more kc slice of the sum costs anyway.
const (
	// splitTiles is how many tiles, over all parts, a split product aims at: enough for
	// sixteen workers to take several each.
	splitTiles = 512
	// splitMinWork is the least product, in multiply-adds, worth splitting: below it the
	// product runs on fewer than sixteen workers anyway (workers), and a split would
	// only add the packing of a B that such products often read in place.
	splitMinWork = 16 * parallel.MinWork
	// splitMaxFloats bounds the B (k×n) of a product that splits: a step packs a slice
	// of it for every part, in two buffers.
	splitMaxFloats = 4 << 20
)

// kParts is the number of parts the sum over k of an m×n×k product is split into: at
// most splitTiles over the tiles of C, each part at least half a k-slice deep; of the splits
// that take the fewest steps (a step sums one kc slice of every part), the one with
// the fewest parts. So k = 784 splits in four parts of 196 (one step), not three of 261
// (two steps, the second 5 deep).
func (p plan) kParts(m, n, k int) int {
	if m*n*k < splitMinWork || roundUp(n, nr)*k > splitMaxFloats {
		return 1
	}
	kc := p.kern.kc
	most := min((k+kc/2-1)/(kc/2), (splitTiles+p.tiles(m, n)-1)/p.tiles(m, n))
	if most <= 1 {
		return 1
	}
	steps := (k + most*kc - 1) / (most * kc)
	return (k + steps*kc - 1) / (steps * kc)
}

// itemsPerWorker is how many work items a parallel product aims to give each worker:
// with several, a worker slowed by another process leaves its share to the others.
// minItemStrips is the fewest kernel strips an item's rows shrink to before its columns
// are split too (rowChunk).
const (
	itemsPerWorker = 4
	minItemStrips  = 4
)

// rowChunk is the number of rows of C one work item covers: mc, or fewer (a multiple
// of the kernel's rows) when the product has too few row blocks to give every worker
// several items. Rows shrink first, down to minItemStrips strips of the kernel, before
// columnParts splits the columns: every column part of a row block packs that block of
// A again (16 workers on a 1024² product packed A eight times over, 128 columns an
// item). Below that they shrink further where the columns too are few, as in the weight
// gradients of a training step (128×512 summed over 2048 tokens) on sixteen workers.
// Last, balance evens the items out over the workers.
func (p plan) rowChunk(m, n, workers int) int {
	target := itemsPerWorker * ((workers + p.parts - 1) / p.parts)
	mr := p.kern.mr
	cols := (n + p.kern.width() - 1) / p.kern.width()
	rows := p.kern.mc
	for rows > minItemStrips*mr && (m+rows-1)/rows < target {
		rows = max(mr, roundUp(rows/2, mr))
	}
	for rows > mr && (m+rows-1)/rows*cols < target {
		rows = max(mr, roundUp(rows/2, mr))
	}
	return p.balance(rows, m, n, workers, target)
}

// balance returns the row chunk, between half and twice rows (at most mc), whose items
// the workers finish first, of those that still give target items (or as many as rows
// gives) and split the columns no further. Items of equal size end in rounds: nine on
// two workers take as long as ten (the 128×512×2048 weight gradient in three parts of
// three row blocks), and eleven as long as twelve, where eight somewhat larger ones
// would take four rounds; each item also costs one kernel strip of overhead. Chunks are
// spread evenly over the rows (with mc = 144, m = 2048 on two workers in sixteen chunks
// of 132 rows rather than fourteen of 144 and one of 32).
func (p plan) balance(rows, m, n, workers, target int) int {
	if workers <= 1 || rows >= m {
		return rows
	}
	mr := p.kern.mr
	strips := (min(n, p.kern.nc) + nr - 1) / nr
	items := func(blocks int) (count, colParts, stripsPerPart int) {
		colParts, stripsPerPart = p.columnParts(strips, blocks*p.parts, workers)
		return p.parts * blocks * colParts, colParts, stripsPerPart
	}
	least, cols, _ := items((m + rows - 1) / rows)
	least = min(least, target)
	best, bestCost := rows, -1
	widest := min(p.kern.mc, 2*rows)
	for blocks := (m + widest - 1) / widest; blocks <= (m+mr-1)/mr; blocks++ {
		r := roundUp((m+blocks-1)/blocks, mr)
		if r < max(mr, rows/2) {
			break
		}
		count, colParts, stripsPerPart := items(blocks)
		if (m+r-1)/r != blocks || count < least || colParts > cols {
			// Rounding to whole strips gives another block count, too few items, or
			// columns split further (rows shrink first: rowChunk).
			continue
		}
		rounds := (count + workers - 1) / workers
		if cost := rounds * (r + mr) * stripsPerPart; bestCost < 0 || cost < bestCost {
			best, bestCost = r, cost
		}
	}
	return best
}

// serial is the single-goroutine blocked product: for each kc-deep slice of the sum and
// nc-wide panel of C it packs B once, then packs A mc rows at a time and sweeps the
// micro-kernel over the tiles. The slices are the outer loop (BLIS has the panels
// there), so that where C has several panels each A block is packed once, in the first,
// and kept for the others (keepA); every element of C still sums its slices in order, so
// the bits are those of either order.
func (p plan) serial(m, n, k int, beta float32, c []float32, ldc int) {
	if p.prescale(k, beta) {
		scale(m, n, beta, c, ldc)
	}
	if k == 0 || p.alpha == 0 {
		addBiasRows(m, n, p.bias, p.then, c, ldc)
		return
	}
	ws := workspaces.Get().(*workspace)
	defer workspaces.Put(ws)
	mr, mc, kc, nc := p.kern.mr, p.kern.mc, p.kern.kc, p.kern.nc
	if p.packB {
		ws.packedB = grow(ws.packedB, roundUp(min(n, nc), nr)*min(k, kc))
	}
	keepA := p.keepA(m, n, k)
	if keepA {
		ws.packedA = grow(ws.packedA, roundUp(m, mr)*min(k, kc))
	}
	for pc := 0; pc < k; pc += kc {
		kb := min(kc, k-pc)
		for jc := 0; jc < n; jc += nc {
			nb := min(nc, n-jc)
			bb := p.blockB(ws.packedB, ws, pc, kb, jc, nb)
			bias := p.biasOf(pc+kb, k, jc)
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				var ab aBlock
				if keepA {
					if jc == 0 {
						packA(ws.packedA[ic*kb:], mr, p.a, ic, mb, pc, kb)
					}
					ab = aBlock{data: ws.packedA[ic*kb:], strip: mr * kb, rs: 1, cs: mr}
				} else {
					ab = p.blockA(ws, ic, mb, pc, kb)
				}
				macroKernel(p.kern, ab, bb, &ws.tile, mb, nb, kb, c[ic*ldc+jc:], ldc, p.alpha, beta != 0 || pc > 0, bias, p.then)
			}
		}
	}
}

// keepA reports whether serial packs each k-slice of A whole, once, for all the panels
// of C: when A is packed, C has more than one panel (n > nc: the 4096-wide products of
// a training step, whose A was packed twice) and the slice is at most sharedAMax floats.
func (p plan) keepA(m, n, k int) bool {
	return p.packA && n > p.kern.nc && roundUp(m, p.kern.mr)*min(k, p.kern.kc) <= sharedAMax
}

// biasOf is the bias that a k-slice ending at row end of the sum adds to C's columns
// from j0 on: none before the last slice, nor in a split sum, which adds it with the
// parts (addParts).
func (p plan) biasOf(end, k, j0 int) []float32 {
	if p.bias == nil || end < k || p.parts > 1 {
		return nil
	}
	return p.bias[j0:]
}

// prescale reports whether C must be scaled by beta before the product is added: the
// kernels' first k-slice writes over C, so beta == 0 needs no pass of its own unless no
// product is written (k or alpha is 0).
func (p plan) prescale(k int, beta float32) bool {
	return beta != 1 && (beta != 0 || k == 0 || p.alpha == 0)
}

// The workers of a parallel product pack A together, each strip once, when they are at
// most sharedAWorkers and A's part of a step (the rows of C times the step's depth) is
// at most sharedAMax floats; otherwise each packs the blocks of A it uses. On the H200
// host's Xeon, sharing A was 10-30% faster on two cores and 10-15% slower on sixteen for
// the 2048-row products of a transformer step (the strips then come from other
// cores' caches); the choice does not change the result.
const (
	sharedAWorkers = 4
	sharedAMax     = 1 << 20
)

// slice is one kc-deep slice of the sum within a parallel step: rows [pc, pc+kb) of
// op(B), packed at offset bOff of the step's B (and A at aOff when A is shared), summed
// into part's C, over it when first (the part's first slice).
type slice struct {
	pc, kb     int
	part       int
	first      bool
	bOff, aOff int
}

// steps returns the slices of the sum as the parallel driver takes them: step j holds
// the j-th slice of every part (so the parts run at the same time, and the packed panels
// of a step stay as small as parts×kc rows), with the offsets of their panels for C
// columns nb wide and m rows. It also returns the largest depth of a step. An unsplit
// sum is cut in kc slices as serial cuts it, so that both give the same bits; the
// parts of a split one in equal slices (four of 196 rather than three of 256 and one of
// 16), since a shallow slice costs a whole step.
func (p plan) steps(m, nb, k int) (steps [][]slice, stepK int) {
	kc := p.kern.kc
	for part := range p.parts {
		lo, hi := share(k, part, p.parts)
		count := (hi - lo + kc - 1) / kc
		for j := range count {
			a, b := share(hi-lo, j, count)
			if j == len(steps) {
				steps = append(steps, nil)
			}
			if p.parts == 1 {
				a, b = j*kc, min((j+1)*kc, k)
			}
			steps[j] = append(steps[j], slice{pc: lo + a, kb: b - a, part: part, first: j == 0})
		}
	}
	for _, st := range steps {
		depth := 0
		for i := range st {
			st[i].bOff, st[i].aOff = roundUp(nb, nr)*depth, roundUp(m, p.kern.mr)*depth
			depth += st[i].kb
		}
		stepK = max(stepK, depth)
	}
	return steps, stepK
}

// parallel has the loop order of serial, with the work of each step shared out. One
// goroutine per worker lives through the whole product (waking a sleeping goroutine at
// every step would cost tens of microseconds). A step is one k-slice, of every part
// when the sum is split (kParts, steps), over one nc-wide panel of C. Its packing, of
// the B panel (shared by all, so packed once) and, with few workers, of A (in the
// slice's first panel only: it serves all of them), is cut in tasks of some panels
// or strips (packTask; C scaled by beta is tasks of the first step), and its items
// are (part, row block, column range) blocks of C, packing A block by block when it
// is not shared; the workers take both from the step's counters, packing first. There
// is no barrier: a worker waits only for what it reads or overwrites (flowStep). Packed
// B alternates between two buffers from step to step, and a shared A from slice to
// slice, so a step's packing waits for the items of the steps up to two before it (the
// last readers of its buffers); a step's items wait for all of its packing; and an item
// waits for the item over the same block of C in the step before with that panel (the
// slice before it in the sum), so that every element of C sums its slices in the order
// of serial whoever computes them. So a worker that runs out of items packs the next
// step, and starts its items, while the others finish theirs; a worker slowed by
// another process, or on a slower core, takes fewer tasks and items. A split sum ends
// with the parts added to C in order, each worker adding its share of the rows once
// all items are done. A B that the workers need not share (privateB, or read in
// place) goes to parallelPrivate instead, and a k or alpha of 0, which leaves only C
// scaled by beta, to serial.
func (p plan) parallel(workers, m, n, k int, beta float32, c []float32, ldc int) {
	if k == 0 || p.alpha == 0 {
		p.serial(m, n, k, beta, c, ldc) // C scaled by beta, and no product
		return
	}
	p.parts = min(p.parts, k) // every part sums at least one term
	if p.parts > 1 {
		// The parts read B in place where they can (a weight gradient's dY), else share
		// one packing of it.
		bm, ok := p.b.(matrix)
		p.packB = !ok || bm.trans || bm.ld%p.kern.alias == 0
	}
	if !p.packB || p.privateB(m, n, k, workers) {
		p.parallelPrivate(workers, m, n, k, beta, c, ldc)
		return
	}
	mr, nc := p.kern.mr, p.kern.nc
	nb0 := min(n, nc)
	slicesOf, stepK := p.steps(m, nb0, k)
	sharedA := p.packA && workers <= sharedAWorkers && roundUp(m, mr)*stepK <= sharedAMax
	rows, rowBlocks, colParts, stripsPerPart := p.itemGrid(m, n, nb0, workers)
	if !sharedA && colParts > 1 && p.aInPlace(stripsPerPart*nr) {
		p.packA = false // rather than packed again for every column part
	}
	shared := workspaces.Get().(*workspace)
	defer workspaces.Put(shared)
	sizeB, sizeA := roundUp(nb0, nr)*stepK, roundUp(m, mr)*stepK
	shared.packedB = grow(shared.packedB, 2*sizeB)
	var partial []float32
	if sharedA {
		shared.packedA = grow(shared.packedA, 2*sizeA)
	}
	if p.parts > 1 {
		shared.partial = grow(shared.partial, (p.parts-1)*m*n)
		partial = shared.partial
	}
	panels := (n + nc - 1) / nc
	steps := make([]flowStep, len(slicesOf)*panels)
	for t := range steps {
		st := &steps[t]
		st.slices, st.jc = slicesOf[t/panels], t%panels*nc
		st.nb = min(nc, n-st.jc)
		st.colParts, st.stripsPerPart = p.columnParts((st.nb+nr-1)/nr, rowBlocks*p.parts, workers)
		st.items = p.parts * rowBlocks * st.colParts
		st.done = make([]atomic.Bool, st.items)
		st.bStrips, st.bTasks = packTask((st.nb+nr-1)/nr, workers)
		if sharedA && st.jc == 0 {
			st.aStrips, st.aTasks = packTask((m+mr-1)/mr, workers)
		}
		st.tasks = len(st.slices) * (st.bTasks + st.aTasks)
		if t == 0 && p.prescale(k, beta) {
			st.tasks += workers
		}
	}
	var aborted atomic.Bool
	// await returns once ready holds, or false once another worker has panicked. It
	// polls first, as the wait is usually short (the end of a packing task), and then
	// sleeps a little between polls, so as not to hold the core of a descheduled peer.
	await := func(ready func() bool) bool {
		if ready() {
			return true
		}
		stop := func() bool { return ready() || aborted.Load() }
		for !parallel.SpinUntil(stop, flowSpin) {
			time.Sleep(flowSpin / 4)
		}
		return !aborted.Load()
	}
	parallel.Run(workers, func(w int) {
		// A panic (from a caller's BPacker) must not leave the others waiting for it.
		defer func() {
			if r := recover(); r != nil {
				aborted.Store(true)
				panic(r)
			}
		}()
		ws := workspaces.Get().(*workspace)
		defer workspaces.Put(ws)
		finished := 0 // the steps before it have all their items done
		doneBefore := func(t int) bool {
			for ; finished < t; finished++ {
				if steps[finished].finished.Load() < int32(steps[finished].items) {
					return false
				}
			}
			return true
		}
		for t := range steps {
			st := &steps[t]
			pb := shared.packedB[t%2*sizeB:][:sizeB]
			var pa []float32
			if sharedA {
				pa = shared.packedA[t/panels%2*sizeA:][:sizeA]
			}
			perSlice := st.bTasks + st.aTasks
			for task := int(st.took.Add(1)) - 1; task < st.tasks; task = int(st.took.Add(1)) - 1 {
				if !await(func() bool { return doneBefore(t - 1) }) {
					return
				}
				s, i := task/perSlice, task%perSlice
				switch {
				case s >= len(st.slices): // C scaled by beta, before the first step's items
					lo, hi := share(m, task-len(st.slices)*perSlice, workers)
					scale(hi-lo, n, beta, c[lo*ldc:], ldc)
				case i < st.bTasks:
					sl := st.slices[s]
					lo := i * st.bStrips * nr
					hi := min(lo+st.bStrips*nr, st.nb)
					p.b.PackB(pb[sl.bOff+lo*sl.kb:], sl.pc, sl.kb, st.jc+lo, hi-lo)
				default:
					sl := st.slices[s]
					lo := (i - st.bTasks) * st.aStrips * mr
					hi := min(lo+st.aStrips*mr, m)
					packA(pa[sl.aOff+lo*sl.kb:], mr, p.a, lo, hi-lo, sl.pc, sl.kb)
				}
				st.packed.Add(1)
			}
			if !await(func() bool { return st.packed.Load() == int32(st.tasks) }) {
				return
			}
			lastRow := -1
			var ab aBlock
			for item := int(st.next.Add(1)) - 1; item < st.items; item = int(st.next.Add(1)) - 1 {
				if t >= panels && !await(steps[t-panels].done[item].Load) {
					return
				}
				// Consecutive items take consecutive row blocks, so that with as many
				// row blocks as workers each worker keeps its A block.
				row, rest := item%rowBlocks, item/rowBlocks
				col, part := rest%st.colParts, rest/st.colParts
				ic := row * rows
				mb := min(rows, m-ic)
				j0 := col * st.stripsPerPart * nr
				j1 := min(j0+st.stripsPerPart*nr, st.nb)
				out, ldo := c[ic*ldc+st.jc+j0:], ldc
				if part > 0 {
					out, ldo = partial[(part-1)*m*n+ic*n+st.jc+j0:], n
				}
				for _, s := range st.slices {
					if s.part != part {
						continue
					}
					switch {
					case sharedA:
						ab = aBlock{data: pa[s.aOff+ic*s.kb:], strip: mr * s.kb, rs: 1, cs: mr}
					case row != lastRow || len(st.slices) > 1:
						ab = p.blockA(ws, ic, mb, s.pc, s.kb)
						lastRow = row
					}
					bb := bBlock{data: pb[s.bOff+j0*s.kb:], panel: nr * s.kb, rs: nr, inPlace: roundUp(j1-j0, nr)}
					add := !s.first || part == 0 && beta != 0
					macroKernel(p.kern, ab, bb, &ws.tile, mb, j1-j0, s.kb, out, ldo, p.alpha, add, p.biasOf(s.pc+s.kb, k, st.jc+j0), p.then)
				}
				st.done[item].Store(true)
				st.finished.Add(1)
			}
		}
		if p.parts > 1 {
			if !await(func() bool { return doneBefore(len(steps)) }) {
				return
			}
			lo, hi := share(m, w, workers)
			p.addParts(lo, hi, m, n, partial, c, ldc)
		}
	})
}

// flowStep is one step of parallel and what its workers have done of it: its slices,
// its panel of C (columns jc to jc+nb) cut in items, and its packing cut in tasks (for
// each slice bTasks of bStrips B panels, then aTasks of aStrips strips of a shared A;
// then C's share of each worker scaled by beta, in the first step only when C is
// scaled first). took and next count the tasks and items taken, packed and finished
// those done, and done[i] says that item i is.
type flowStep struct {
	slices                         []slice
	jc, nb                         int
	colParts, stripsPerPart, items int
	bStrips, bTasks                int
	aStrips, aTasks                int
	tasks                          int
	took, packed, next, finished   atomic.Int32
	done                           []atomic.Bool
}

// packTask cuts the packing of strips B panels (or A strips) of a parallel step in
// tasks: of packTaskStrips each, or fewer so that every worker has one where the
// strips are few (every worker waits for the first step's packing; the next ones are
// mostly done while others finish their items). It returns the strips of a task and
// the number of tasks.
func packTask(strips, workers int) (per, tasks int) {
	per = max(1, min(packTaskStrips, strips/workers))
	return per, (strips + per - 1) / per
}

// packTaskStrips is the most B panels or A strips that one packing task of a parallel
// step packs: 128 columns of B (packBChunk), 96 rows of A for avx512. On two workers a
// step of the 4096-wide products of a training step has 24 tasks of B and 11 of A, some
// tens of microseconds each, so the workers finish their packing within one task of
// each other.
const packTaskStrips = 8

// flowSpin is how long a waiting worker of parallel polls before it sleeps: longer than
// a packing task or the end of an item takes on a quiet machine, short enough that on a
// busy one a poller soon hands its core to the worker it waits for.
const flowSpin = 100 * time.Microsecond

// addParts adds the m×n sums of parts 1 and on (partial, one after the other) to rows
// [lo, hi) of C, in the order of the parts, so that the bits do not depend on who adds,
// and then the bias and then.
func (p plan) addParts(lo, hi, m, n int, partial, c []float32, ldc int) {
	for i := lo; i < hi; i++ {
		row := c[i*ldc : i*ldc+n]
		for q := range p.parts - 1 {
			for j, v := range partial[q*m*n+i*n:][:n] {
				row[j] += v
			}
		}
		if p.bias != nil {
			addBias(row, p.bias)
			if p.then != nil {
				p.then(row)
			}
		}
	}
}

// itemGrid is how a parallel product of an m×n C cuts a panel cols wide into items:
// rowBlocks blocks of rows rows (rowChunk), times colParts parts of stripsPerPart B
// panels (columnParts).
func (p plan) itemGrid(m, n, cols, workers int) (rows, rowBlocks, colParts, stripsPerPart int) {
	rows = p.rowChunk(m, n, workers)
	rowBlocks = (m + rows - 1) / rows
	colParts, stripsPerPart = p.columnParts((cols+nr-1)/nr, rowBlocks*p.parts, workers)
	return rows, rowBlocks, colParts, stripsPerPart
}

// columnParts splits strips B panels into parts of whole kernel calls, more parts when
// there are few row blocks, so that every worker has several items to take.
func (p plan) columnParts(strips, rowBlocks, workers int) (parts, stripsPerPart int) {
	parts = min(strips, max(1, (itemsPerWorker*workers+rowBlocks-1)/rowBlocks))
	stripsPerPart = roundUp((strips+parts-1)/parts, p.kern.strips)
	return (strips + stripsPerPart - 1) / stripsPerPart, stripsPerPart
}

// parallelPrivate is parallel for a B that the workers need not share: read in place,
// or small enough for each worker to pack the columns it uses itself (privateB). Nothing
// is shared before the products, so there is no barrier: each item (a part of the sum, a
// row block and a column range of C) is summed over its part of k by the worker that
// takes it, which starts as soon as its goroutine does. A worker packing B packs its
// item's columns over the part's k at once and keeps them for its next item of the same
// columns and part; items run row block after row block, so it usually packs them once.
// A split sum ends as in parallel, the parts added to C in order, a row block (in as
// many pieces as there are workers to a block) once all its items are done, by whichever
// workers have no item left. k and alpha are not 0 (parallel).
func (p plan) parallelPrivate(workers, m, n, k int, beta float32, c []float32, ldc int) {
	rows, rowBlocks, colParts, stripsPerPart := p.itemGrid(m, n, n, workers)
	if colParts > 1 && p.aInPlace(stripsPerPart*nr) {
		p.packA = false // rather than packed again for every column part
	}
	items := p.parts * rowBlocks * colParts
	steps, _ := p.steps(m, n, k)
	slices := make([][]slice, p.parts)
	for _, st := range steps {
		for _, s := range st {
			slices[s.part] = append(slices[s.part], s)
		}
	}
	var (
		partial   []float32
		done      []atomic.Int32 // items finished, per row block
		aborted   atomic.Bool
		next, sum atomic.Int64
	)
	if p.parts > 1 {
		shared := workspaces.Get().(*workspace)
		defer workspaces.Put(shared)
		shared.partial = grow(shared.partial, (p.parts-1)*m*n)
		partial = shared.partial
		done = make([]atomic.Int32, rowBlocks)
	}
	parallel.Run(min(workers, items), func(int) {
		// A panic (from a caller's BPacker) must not leave the others waiting for its
		// row block.
		defer func() {
			if r := recover(); r != nil {
				aborted.Store(true)
				panic(r)
			}
		}()
		ws := workspaces.Get().(*workspace)
		defer workspaces.Put(ws)
		packed, lo, depth := -1, 0, 0 // the (part, column part) whose B ws.packedB holds
		for item := int(next.Add(1)) - 1; item < items; item = int(next.Add(1)) - 1 {
			row, rest := item%rowBlocks, item/rowBlocks
			col, part := rest%colParts, rest/colParts
			ic, j0 := row*rows, col*stripsPerPart*nr
			mb, nb := min(rows, m-ic), min(stripsPerPart*nr, n-j0)
			out, ldo := c[ic*ldc+j0:], ldc
			if part > 0 {
				out, ldo = partial[(part-1)*m*n+ic*n+j0:], n
			} else if p.prescale(k, beta) {
				scale(mb, nb, beta, out, ldc)
			}
			sl := slices[part]
			if p.packB && rest != packed {
				lo, depth = sl[0].pc, sl[len(sl)-1].pc+sl[len(sl)-1].kb-sl[0].pc
				ws.packedB = grow(ws.packedB, roundUp(nb, nr)*depth)
				p.b.PackB(ws.packedB, lo, depth, j0, nb)
				packed = rest
			}
			for _, s := range sl {
				ab := p.blockA(ws, ic, mb, s.pc, s.kb)
				var bb bBlock
				if p.packB {
					// Panels of the part's depth: slice s of panel t starts s.pc-lo rows in.
					bb = bBlock{data: ws.packedB[(s.pc-lo)*nr:], panel: nr * depth, rs: nr, inPlace: roundUp(nb, nr)}
				} else {
					bb = p.blockB(nil, ws, s.pc, s.kb, j0, nb)
				}
				add := !s.first || part == 0 && beta != 0
				macroKernel(p.kern, ab, bb, &ws.tile, mb, nb, s.kb, out, ldo, p.alpha, add, p.biasOf(s.pc+s.kb, k, j0), p.then)
			}
			if done != nil {
				done[row].Add(1)
			}
		}
		// Each row block's sum is cut in pieces, so that all workers share it even when
		// the row blocks are few (two of 72 rows for 128×512 on sixteen workers).
		pieces := (workers + rowBlocks - 1) / rowBlocks
		for t := int(sum.Add(1)) - 1; done != nil && t < rowBlocks*pieces; t = int(sum.Add(1)) - 1 {
			r := t / pieces
			// The last items of the row block are being computed by other workers.
			for done[r].Load() < int32(p.parts*colParts) {
				if aborted.Load() {
					return
				}
				runtime.Gosched()
			}
			ic := r * rows
			lo, hi := share(min(rows, m-ic), t%pieces, pieces)
			p.addParts(ic+lo, ic+hi, m, n, partial, c, ldc)
		}
	})
}

// A matrix B that must be packed is packed by each worker for itself (parallelPrivate)
// rather than once for all (parallel) when the columns of one item, over all of k,
// are at most privateMaxFloats (they stay in the worker's L2), and the packing done
// again by several workers is small beside the product: at most one worker per
// privateRows rows of C packs the same columns. The 2048-token products of a small
// transformer qualify (a 128×512 weight is 256 KiB); the barrier that parallel then
// had there made every worker wait for the last one to start, some microseconds on a
// sixteen-core host for products of 100-300 µs. On the H200 host at 16 threads,
// packing B once behind a barrier instead made those products 20-30% slower, and
// cnn28's 64×1600×128 input gradient (two row blocks packing the same columns) 1.4
// times as slow. A BPacker other than a matrix (convolution's receptive fields) costs
// more to pack and is always packed once.
const (
	privateMaxFloats = 64 << 10
	privateRows      = 32
)

// privateB reports whether the workers pack B each for itself.
func (p plan) privateB(m, n, k, workers int) bool {
	if _, ok := p.b.(matrix); !ok {
		return false
	}
	_, rowBlocks, _, stripsPerPart := p.itemGrid(m, n, n, workers)
	packers := min(workers, rowBlocks) // of the same columns and part
	depth := (k + p.parts - 1) / p.parts
	return depth*stripsPerPart*nr <= privateMaxFloats && (packers == 1 || packers*privateRows <= m)
}

// share returns worker w's contiguous part [lo, hi) of n items split between workers.
func share(n, w, workers int) (lo, hi int) {
	return n * w / workers, n * (w + 1) / workers
}
