package cpu

import (
	"fmt"
	"sync/atomic"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Indexing kernels: Gather, TakeAlong, Scatter, ScatterAdd and OneHot. Indices may be
// negative (counting from the end of the axis); one outside [-d, d) makes the run fail
// with an error naming the index, never a crash.

func init() {
	register(tensor.OpGather, allTypes, gatherFactory)
	register(tensor.OpTakeAlong, allTypes, takeAlongFactory)
	register(tensor.OpScatter, []tensor.DType{tensor.F32, tensor.I32, tensor.I64, tensor.Bool}, scatterFactory)
	register(tensor.OpScatterAdd, numericTypes, scatterAddFactory)
	register(tensor.OpOneHot, intTypes, oneHotFactory)
}

// indexError reports an index outside an axis.
func indexError(v, d int) error {
	return fmt.Errorf("index %d out of range for an axis of size %d", v, d)
}

// badIndex records the first out-of-range index seen by parallel workers.
type badIndex struct {
	seen atomic.Bool
	v    atomic.Int64
}

func (b *badIndex) set(v int) {
	if b.seen.CompareAndSwap(false, true) {
		b.v.Store(int64(v))
	}
}

// take returns the recorded error, if any, and resets for the next run.
func (b *badIndex) take(d int) error {
	if !b.seen.Load() {
		return nil
	}
	b.seen.Store(false)
	return indexError(int(b.v.Load()), d)
}

// resolveIndex wraps a negative index and checks the range.
func resolveIndex(v, d int) (int, bool) {
	if v < 0 {
		v += d
	}
	return v, v >= 0 && v < d
}

// gatherFactory copies, for every (outer, index) pair, the block x[outer, idx, :].
func gatherFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	axis := n.Attr().(tensor.AxisAttr).Axis
	x := n.Input(0).Shape()
	esz := n.DType().Size()
	pre, d, block := x[:axis].Size(), x[axis], x[axis+1:].Size()*esz
	m := n.Input(1).Shape().Size()
	idx := indexReader(n.Input(1).DType(), in[1])
	src := in[0]
	var bad badIndex
	body := func(lo, hi int) {
		for t := lo; t < hi; t++ {
			p, j := t/m, t%m
			k, ok := resolveIndex(idx(j), d)
			if !ok {
				bad.set(idx(j))
				return
			}
			copy(out[t*block:(t+1)*block], src[(p*d+k)*block:(p*d+k+1)*block])
		}
	}
	grain := max(1, elemGrain*4/max(block, 1))
	return func() error {
		parallel.For(pre*m, grain, body)
		return bad.take(d)
	}, nil
}

// elementIndexWalk calls f(pos, xoff) for every position of the index tensor, with
// xoff the offset in x of the same coordinates except along axis (which the caller
// adds from the index value).
func elementIndexWalk(idxShape, xShape tensor.Shape, axis int, f func(pos, xoff int) bool) {
	xs := xShape.Strides()
	var c [maxRank + 1]int
	xoff := 0
	r := len(idxShape)
	for pos := 0; pos < idxShape.Size(); pos++ {
		if !f(pos, xoff) {
			return
		}
		for a := r - 1; a >= 0; a-- {
			c[a]++
			if a != axis {
				xoff += xs[a]
			}
			if c[a] < idxShape[a] {
				break
			}
			if a != axis {
				xoff -= xs[a] * idxShape[a]
			}
			c[a] = 0
		}
	}
}

func takeAlongFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	switch n.DType().Size() {
	case 1:
		return takeAlongTyped(n, out, in[0], in[1])
	case 2:
		return takeAlongTyped(n, typed[uint16](out), typed[uint16](in[0]), in[1])
	case 4:
		return takeAlongTyped(n, typed[uint32](out), typed[uint32](in[0]), in[1])
	}
	return takeAlongTyped(n, typed[uint64](out), typed[uint64](in[0]), in[1])
}

func takeAlongTyped[T any](n *tensor.Node, d, x []T, idxMem []byte) (func() error, error) {
	axis := n.Attr().(tensor.AxisAttr).Axis
	xShape, iShape := n.Input(0).Shape(), n.Input(1).Shape()
	if len(iShape) > maxRank {
		return nil, fmt.Errorf("rank %d exceeds %d", len(iShape), maxRank)
	}
	dim, st := xShape[axis], xShape.Strides()[axis]
	idx := indexReader(n.Input(1).DType(), idxMem)
	var err error
	visit := func(pos, xoff int) bool {
		k, ok := resolveIndex(idx(pos), dim)
		if !ok {
			err = indexError(idx(pos), dim)
			return false
		}
		d[pos] = x[xoff+k*st]
		return true
	}
	return func() error {
		err = nil
		elementIndexWalk(iShape, xShape, axis, visit)
		return err
	}, nil
}

func scatterFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	add := n.Attr().(tensor.ScatterAttr).Reduce == tensor.ScatterReduceAdd
	switch n.DType() {
	case tensor.F32:
		return scatterTyped[float32](n, out, in, add)
	case tensor.I32:
		return scatterTyped[int32](n, out, in, add)
	case tensor.I64:
		return scatterTyped[int64](n, out, in, add)
	}
	return scatterTyped[uint8](n, out, in, add)
}

// scatterTyped copies x and then writes (or adds) the updates in index order, so with
// repeated indices the last update wins (or all accumulate).
func scatterTyped[T number](n *tensor.Node, out []byte, in [][]byte, add bool) (func() error, error) {
	axis := n.Attr().(tensor.ScatterAttr).Axis
	xShape, iShape := n.Input(0).Shape(), n.Input(1).Shape()
	if len(iShape) > maxRank {
		return nil, fmt.Errorf("rank %d exceeds %d", len(iShape), maxRank)
	}
	d, upd := typed[T](out), typed[T](in[2])
	dim, st := xShape[axis], xShape.Strides()[axis]
	idx := indexReader(n.Input(1).DType(), in[1])
	var err error
	visit := func(pos, xoff int) bool {
		k, ok := resolveIndex(idx(pos), dim)
		if !ok {
			err = indexError(idx(pos), dim)
			return false
		}
		if add {
			d[xoff+k*st] += upd[pos]
		} else {
			d[xoff+k*st] = upd[pos]
		}
		return true
	}
	return func() error {
		if !sameMemory(out, in[0]) {
			copy(out, in[0])
		}
		err = nil
		elementIndexWalk(iShape, xShape, axis, visit)
		return err
	}, nil
}

func scatterAddFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	switch n.DType() {
	case tensor.F32:
		return scatterAddTyped[float32](n, out, in)
	case tensor.I32:
		return scatterAddTyped[int32](n, out, in)
	}
	return scatterAddTyped[int64](n, out, in)
}

// scatterAddTyped adds update block (p, j) to out[p, idx[j], :]. Work is split over
// outer indices p, over ranges of the indexed axis and over column ranges of the
// blocks: every unit owns a disjoint part of the output, copies its part of the input
// there, then scans all the indices in order and adds the updates that land in it, so
// repeated indices accumulate in the same order whatever the split (an embedding
// gradient, one outer index and narrow rows, still uses every worker).
func scatterAddTyped[T number](n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	axis := n.Attr().(tensor.AxisAttr).Axis
	x := n.Input(0).Shape()
	pre, dim, block := x[:axis].Size(), x[axis], x[axis+1:].Size()
	m := n.Input(1).Shape().Size()
	d, upd, src := typed[T](out), typed[T](in[2]), typed[T](in[0])
	copyIn := !sameMemory(out, in[0])
	idx := indexReader(n.Input(1).DType(), in[1])
	// Column chunks of at least 64 elements, then ranges of the indexed axis, enough
	// of them to occupy the workers; each range scans every index, which is cheap
	// next to adding a block.
	workers := max(1, min(parallel.Workers(), (pre*m*block+pre*dim*block)/elemGrain))
	chunks := max(1, min(workers, block/64))
	width := (block + chunks - 1) / chunks
	parts := max(1, min(dim, workers/chunks))
	add := addLoop[T]()
	var bad badIndex
	body := func(lo, hi int) {
		for u := lo; u < hi; u++ {
			p, r, c := u/(parts*chunks), u/chunks%parts, u%chunks
			c0, c1 := c*width, min((c+1)*width, block)
			k0, k1 := r*dim/parts, (r+1)*dim/parts
			if copyIn {
				for k := k0; k < k1; k++ {
					o := (p*dim + k) * block
					copy(d[o+c0:o+c1], src[o+c0:o+c1])
				}
			}
			for j := 0; j < m; j++ {
				k, ok := resolveIndex(idx(j), dim)
				if !ok {
					bad.set(idx(j))
					return
				}
				if k < k0 || k >= k1 {
					continue
				}
				o, uo := (p*dim+k)*block, (p*m+j)*block
				add(d[o+c0:o+c1], upd[uo+c0:uo+c1])
			}
		}
	}
	return func() error {
		units := pre * parts * chunks
		parallel.For(units, (units+workers-1)/workers, body) // one worker: runs inline
		return bad.take(dim)
	}, nil
}

// addLoop returns the loop d[i] += s[i]: package vec's for float32.
func addLoop[T number]() func(d, s []T) {
	if f, ok := any(func(d, s []float32) { vec.Arith(vec.Add, d, d, 1, s, 1) }).(func(d, s []T)); ok {
		return f
	}
	return func(d, s []T) {
		for i, v := range s {
			d[i] += v
		}
	}
}

// oneHotFactory writes the byte pattern of 1 in the output dtype at each label's class;
// labels outside [0, depth) leave their row zero.
func oneHotFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	depth := n.Attr().(tensor.OneHotAttr).Depth
	one := tensor.Scalar(n.DType(), 1).Bytes()
	esz := len(one)
	idx := indexReader(n.Input(0).DType(), in[0])
	count := n.Input(0).Shape().Size()
	return func() error {
		clear(out)
		for i := 0; i < count; i++ {
			if k := idx(i); k >= 0 && k < depth {
				copy(out[(i*depth+k)*esz:], one)
			}
		}
		return nil
	}, nil
}
