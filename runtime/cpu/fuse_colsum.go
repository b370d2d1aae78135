package cpu

import (
	"github.com/gml-dev/gml/tensor"
)

// Column sums folded into the pass that produces their data. A bias's gradient is the
// Sum of a layer's output gradient dY over all its rows: run as its own node it reads
// dY again, after dY has left the cache. A fused step that writes (or reads) dY block
// by block can fold each block into the sum while it is in cache. colSum does it with
// the Sum kernel's arithmetic (rowSplitReduce): the rows cut into blocks of
// splitRows rows, each block summed in row order from its first row in runs of 16
// rows (foldRuns), the blocks' partial sums merged in order, so the bits are the Sum
// node's whatever the thread count and however the step cuts the rows.

// isColumnSum reports whether s is an F32 Sum of all but the last row elements of
// its input over the leading axes: one sum per column of rows of row elements, which
// the Sum kernel computes by rowSplitReduce or, for few rows, in one block.
func isColumnSum(s *tensor.Node, row int) bool {
	if s.Op() != tensor.OpSum || s.DType() != tensor.F32 || s.Input(0).DType() != tensor.F32 || row > maxRowSplitOutputs {
		return false
	}
	o, r, i, ok := blockPattern(s.Input(0).Shape(), s.Attr().(tensor.ReduceAttr).Axes)
	return ok && o == 1 && r > 0 && i == row && s.Shape().Size() == row
}

// absorbLater lets fused steps take the work of later nodes: column sums, a norm
// gradient's residual add (tests turn it off to compare).
var absorbLater = true

// colSum is the sum over rows of src (rows of inner elements) into d.
type colSum struct {
	src, d          []float32
	inner, br, rows int
	part            []float64 // one row of partial sums per block of br rows
	runs            []float32 // each block's float32 sums of its current run (foldRuns)
	at              int       // the Sum node's segment index (set by the norm kernel)
}

func newColSum(src, d []float32, inner, rows int) *colSum {
	br := splitRows(inner, rows)
	n := (rows + br - 1) / br * inner
	return &colSum{src: src, d: d, inner: inner, br: br, rows: rows, part: make([]float64, n), runs: make([]float32, n)}
}

// fold adds rows [r0, r1) of src, which lie in one block and follow the rows of the
// block folded before, to the block's partial sums.
func (c *colSum) fold(r0, r1 int) { c.foldRows(c.src[r0*c.inner:], r0, r1) }

// foldRows is fold with rows [r0, r1) of the data read from x instead of src.
func (c *colSum) foldRows(x []float32, r0, r1 int) {
	n, b := c.inner, r0/c.br
	first := b * c.br
	foldRuns(c.part[b*n:][:n], c.runs[b*n:][:n], x, r0-first, r1-first, min(c.br, c.rows-first), n)
}

// merge adds the blocks' partial sums in order into d, block row after block row (in
// memory order, as rowSplitReduce merges).
func (c *colSum) merge() {
	n := c.inner
	addBlocks(c.part, n, n, len(c.part)/n)
	for j, v := range c.part[:n] {
		c.d[j] = float32(v)
	}
}

// colSums are the column sums a fused step folds, all over the same rows of inner
// elements: the step produces its data item by item, an item being one block of the
// sums' row split, and folds the rows of each stretch it has written.
type colSums struct {
	sums        []*colSum
	inner, rows int
	br          int // rows per item
}

// items is the number of items.
func (c *colSums) items() int { return (c.rows + c.br - 1) / c.br }

// item calls produce on the elements of item it, blk at a time from the item's start,
// and folds each stretch's whole rows into the sums.
func (c *colSums) item(it, blk int, produce func(e0, e1 int)) {
	r0, r1 := it*c.br, min((it+1)*c.br, c.rows)
	done, end := r0, r1*c.inner
	for e := r0 * c.inner; e < end; e += blk {
		e1 := min(e+blk, end)
		produce(e, e1)
		if r := e1 / c.inner; r > done {
			for _, s := range c.sums {
				s.fold(done, r)
			}
			done = r
		}
	}
}

// merge writes the sums.
func (c *colSums) merge() {
	for _, s := range c.sums {
		s.merge()
	}
}

// readByColumnSum reports whether a later node that a fused step could fold sums a
// member of group g (of no reductions) over all rows.
func (f *ewFuser) readByColumnSum(g *ewGroup) bool {
	if len(g.shape) < 2 || !absorbLater {
		return false
	}
	last := g.members[len(g.members)-1]
	for _, m := range g.members {
		for _, u := range f.users[m] {
			if u > last && isColumnSum(f.nodes[u], g.shape[len(g.shape)-1]) && f.nodes[u].Input(0).Shape().Equal(g.shape) {
				return true
			}
		}
	}
	return false
}

// takeColumnSums finds the Sums after the fused step at last that fold the full-shape
// values (src: their memory, of shape) over all rows into one value per column, and
// that may be written at last's place (busy: the memory the step reads and writes),
// and takes them from steps. It returns nil when there are none, or when blk (the
// step's stretch of elements) is not whole rows.
func (f *ewFuser) takeColumnSums(last int, srcs []*tensor.Node, shape tensor.Shape, blk int,
	busy [][]byte, steps map[*tensor.Node]func() error) *colSums {
	if len(shape) < 2 || !absorbLater {
		return nil
	}
	inner := shape[len(shape)-1]
	rows := shape.Size() / inner
	c := &colSums{inner: inner, rows: rows, br: splitRows(inner, rows)}
	if blk%inner != 0 {
		return nil
	}
	for _, src := range srcs {
		is := f.index[src]
		for _, u := range f.users[is] {
			s := f.nodes[u]
			if u < last || !isColumnSum(s, inner) || !s.Input(0).Shape().Equal(shape) {
				continue
			}
			if _, taken := steps[s]; taken {
				continue
			}
			data := f.mem[is].out
			if src == s.Input(0) && len(f.mem[u].in) > 0 {
				data = f.mem[u].in[0]
			}
			if !writableEarly(f.mem[u].out, last, u, f.mem, busy...) {
				continue
			}
			c.sums = append(c.sums, newColSum(f32s(data), f32s(f.mem[u].out), inner, rows))
			busy = append(busy, f.mem[u].out)
			steps[s] = nil
			if f.owners != nil {
				f.owners[s] = f.nodes[last]
			}
		}
	}
	if len(c.sums) == 0 {
		return nil
	}
	return c
}
