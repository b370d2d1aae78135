package gemm

// Prefetching the next step's packing. On the H200 host's Xeon, packing an operand of
// a 4096-wide product reads it from memory at about a nanosecond an element (a core
// there draws some 10 GB/s), several times what the same copy costs from cache, and
// the workers of a parallel step pack before its barrier, while no kernel runs. So
// during a step, each worker trickles into L2 the source rows of its share of the next
// step's packing (B's panels, and A's strips where A is shared), a few cache lines
// after each kernel call, spread so as to finish with the step: the lines come in while
// the kernel computes, which barely loads the memory system, and the packing then
// reads them from L2 or L3.

// prefetcher walks the regions of the next step's packing, perCall cache lines at a
// time.
type prefetcher struct {
	regions        []region
	r, row, line   int // the next line: region r, its row and the line within the row
	perCall, lines int // lines per call of next, and in all the regions
}

// region is a block of a stored matrix: rows rows of cols floats, row i at data[i·ld].
type region struct {
	data           []float32
	ld, rows, cols int
}

// lineFloats is the number of float32s in a cache line.
const lineFloats = 16

// prefetch is the assembly prefetch of lines cache lines from &p[0] on, nil where there
// is none (the prefetcher is then not used); tests set it to nil.
var prefetch = nativePrefetch()

// reset empties f for a new step.
func (f *prefetcher) reset() {
	f.regions = f.regions[:0]
	f.r, f.row, f.line, f.lines = 0, 0, 0, 0
}

// add queues the rows×cols block of op(x) from row r0 and column c0 on, as stored.
func (f *prefetcher) add(x matrix, r0, rows, c0, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	g := region{ld: x.ld, rows: rows, cols: cols}
	if x.trans {
		g.data, g.rows, g.cols = x.data[c0*x.ld+r0:], cols, rows
	} else {
		g.data = x.data[r0*x.ld+c0:]
	}
	f.regions = append(f.regions, g)
	f.lines += g.rows * ((g.cols + lineFloats - 1) / lineFloats)
}

// spread sets how many lines each of about calls calls of next prefetches, so that the
// last comes with the last call.
func (f *prefetcher) spread(calls int) {
	f.perCall = f.lines/max(calls, 1) + 1
}

// next prefetches the next perCall lines of the queued regions, if any are left.
func (f *prefetcher) next() {
	for budget := f.perCall; budget > 0 && f.r < len(f.regions); {
		g := &f.regions[f.r]
		lines := (g.cols + lineFloats - 1) / lineFloats
		n := min(budget, lines-f.line)
		prefetch(g.data[f.row*g.ld+f.line*lineFloats:], n)
		budget -= n
		if f.line += n; f.line == lines {
			f.line = 0
			if f.row++; f.row == g.rows {
				f.row = 0
				f.r++
			}
		}
	}
}
