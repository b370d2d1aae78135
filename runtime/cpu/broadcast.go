package cpu

import (
	"fmt"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

// maxRank bounds the number of dimensions a strided loop handles after coalescing.
const maxRank = 16

// elemGrain is the number of elements below which an elementwise loop runs on the
// calling goroutine: splitting costs about a microsecond per goroutine, which is more
// than a few thousand additions.
const elemGrain = 1 << 14

// bplan walks the output of an elementwise op with up to three broadcast inputs in
// rows: the output is contiguous, and each input is read with its own strides (0 along
// broadcast axes). Adjacent axes that are contiguous for every operand are merged, so
// same-shape operands become one row of the whole tensor and a scalar operand one
// stride-0 row.
type bplan struct {
	nin   int
	outer []int    // sizes of the outer (row) axes
	st    [3][]int // per input, strides of the outer axes
	inner int      // row length
	ist   [3]int   // per input, stride within a row
	rows  int      // product of outer
	row   func(o int, off [3]int, n int)
	body  func(lo, hi int)
	split bool // one row: split it between goroutines instead of rows
}

// broadcastStrides returns, for each axis of target, the element stride of src (a shape
// that broadcasts to target) along it: 0 where src is broadcast.
func broadcastStrides(target, src tensor.Shape) []int {
	st := make([]int, len(target))
	srcStrides := src.Strides()
	off := len(target) - len(src)
	for i := range target {
		if j := i - off; j >= 0 && src[j] != 1 {
			st[i] = srcStrides[j]
		}
	}
	return st
}

// newPlan prepares a walk of out reading ins broadcast to it. The caller then sets
// p.row, which run calls as row(outOffset, inputOffsets, n) for each stretch of n
// contiguous output elements, with the inputs' strides within the stretch in p.ist.
func newPlan(out tensor.Shape, ins []tensor.Shape) (*bplan, error) {
	strides := make([][]int, len(ins))
	for k, s := range ins {
		strides[k] = broadcastStrides(out, s)
	}
	return newWalk(out, strides)
}

// newWalk prepares a walk of the contiguous output shape out, reading up to three inputs
// with arbitrary element strides per output axis (negative for reversed reads, 0 for
// repeated ones). Offsets start at 0: callers add their own base.
func newWalk(out tensor.Shape, strides [][]int) (*bplan, error) {
	p := &bplan{nin: len(strides)}
	if out.Size() == 0 {
		return p, nil
	}
	// Drop size-1 axes, then merge axes that are contiguous for every operand.
	var dims, ostc []int
	var st [3][]int
	ost := out.Strides()
	for i, d := range out {
		if d == 1 {
			continue
		}
		last := len(dims) - 1
		merge := last >= 0 && ostc[last] == ost[i]*d
		for k := range strides {
			merge = merge && st[k][last] == strides[k][i]*d
		}
		if merge {
			dims[last] *= d
			ostc[last] = ost[i]
			for k := range strides {
				st[k][last] = strides[k][i]
			}
			continue
		}
		dims = append(dims, d)
		ostc = append(ostc, ost[i])
		for k := range strides {
			st[k] = append(st[k], strides[k][i])
		}
	}
	if len(dims) == 0 {
		dims = []int{1}
		for k := range strides {
			st[k] = []int{0}
		}
	}
	if len(dims) > maxRank {
		return nil, fmt.Errorf("%d non-mergeable axes exceed the %d this kernel handles", len(dims), maxRank)
	}
	last := len(dims) - 1
	p.inner = dims[last]
	p.outer = dims[:last]
	p.rows = 1
	for _, d := range p.outer {
		p.rows *= d
	}
	for k := range strides {
		p.ist[k] = st[k][last]
		p.st[k] = st[k][:last]
	}
	p.split = p.rows == 1
	if p.split {
		p.body = func(lo, hi int) {
			var off [3]int
			for k := 0; k < p.nin; k++ {
				off[k] = lo * p.ist[k]
			}
			p.row(lo, off, hi-lo)
		}
	} else {
		p.body = p.walkRows
	}
	return p, nil
}

// walkRows visits rows [lo, hi) with an odometer over the outer axes.
func (p *bplan) walkRows(lo, hi int) {
	var idx [maxRank]int
	var off [3]int
	r := lo
	for d := len(p.outer) - 1; d >= 0; d-- {
		idx[d] = r % p.outer[d]
		r /= p.outer[d]
		for k := 0; k < p.nin; k++ {
			off[k] += idx[d] * p.st[k][d]
		}
	}
	for o := lo; o < hi; o++ {
		p.row(o*p.inner, off, p.inner)
		for d := len(p.outer) - 1; d >= 0; d-- {
			idx[d]++
			for k := 0; k < p.nin; k++ {
				off[k] += p.st[k][d]
			}
			if idx[d] < p.outer[d] {
				break
			}
			for k := 0; k < p.nin; k++ {
				off[k] -= p.st[k][d] * p.outer[d]
			}
			idx[d] = 0
		}
	}
}

// run executes the walk, in parallel when the tensor is large.
func (p *bplan) run() {
	if p.rows == 0 || p.row == nil || p.inner == 0 {
		return
	}
	if p.split {
		parallel.For(p.inner, elemGrain, p.body)
		return
	}
	parallel.For(p.rows, max(1, elemGrain/p.inner), p.body)
}

// offsets lists, in row-major order of shape, the offset Σ index[i]*strides[i] of every
// multi-index.
func offsets(shape tensor.Shape, strides []int) []int {
	out := make([]int, shape.Size())
	idx := make([]int, len(shape))
	off := 0
	for k := range out {
		out[k] = off
		for i := len(shape) - 1; i >= 0; i-- {
			idx[i]++
			off += strides[i]
			if idx[i] < shape[i] {
				break
			}
			off -= idx[i] * strides[i]
			idx[i] = 0
		}
	}
	return out
}
