package cpu

import (
	"fmt"
	"unsafe"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

// Layout kernels move elements without arithmetic, so they work on every dtype by
// element size. Permute, Slice, Expand, Tile and DepthToSpace are one strided copy each
// (a view of the input described by per-axis strides, walked as in broadcast.go);
// Concat and Pad have loops of their own.

func init() {
	register(tensor.OpPermute, allTypes, permuteFactory)
	register(tensor.OpSlice, allTypes, sliceFactory)
	register(tensor.OpExpand, allTypes, expandFactory)
	register(tensor.OpTile, allTypes, tileFactory)
	register(tensor.OpDepthToSpace, allTypes, depthToSpaceFactory)
	register(tensor.OpConcat, allTypes, concatFactory)
	register(tensor.OpPad, allTypes, padFactory)
}

// stridedCopy prepares dst[i] = src[base + Σ index_k·strides_k] over the contiguous
// shape of dst, for elements of esz bytes.
func stridedCopy(esz int, shape tensor.Shape, strides []int, base int, dst, src []byte) (func() error, error) {
	p, err := newWalk(shape, [][]int{strides})
	if err != nil {
		return nil, err
	}
	// Rows of n contiguous elements that start on multiples of n (a head's 16 values in
	// the heads permute, half of each row in attention's ∂k/∂v slice) are copied as
	// single elements of n·esz bytes: one block move each instead of a call of copy,
	// and the walk over the blocks may then be a tiled transpose.
	if n := blockRun(p, esz, base); n > 1 {
		st := make([]int, len(p.outer))
		for k, s := range p.st[0] {
			st[k] = s / n
		}
		return stridedCopy(n*esz, tensor.Shape(p.outer), st, base/n, dst, src)
	}
	c := copierFor(esz)
	if c == nil {
		return nil, fmt.Errorf("no copy for %d-byte elements", esz)
	}
	if p.rows == 0 || p.inner == 0 {
		return func() error { return nil }, nil
	}
	if isTranspose(p, esz) {
		return c.transpose(p, base, dst, src), nil
	}
	// Short contiguous rows that blockRun left (17 values, a slice of 15 of 16) fold
	// with part of the next axis into one row of pieces, which saves a step of the walk
	// per piece and leaves rows to split.
	plen, pst := 0, 0
	if last := len(p.outer) - 1; p.ist[0] == 1 && p.inner < shortRow && last >= 0 {
		if f := foldFactor(p.outer[last], p.inner); f > 1 {
			plen, pst = p.inner, p.st[0][last]
			p.inner *= f
			p.rows /= f
			p.outer[last] /= f
			p.st[0][last] *= f
		}
	}
	p.row = c.row(dst, src, base, p.ist[0], plen, pst)
	return func() error {
		if p.split {
			parallel.For(p.inner, max(1, copyGrain/esz), p.body)
		} else {
			parallel.For(p.rows, max(1, copyGrain/(p.inner*esz)), p.body)
		}
		return nil
	}, nil
}

// copyGrain is the least a copy gives a goroutine of its own, in bytes written, as
// elemGrain is for arithmetic (64 KiB of F32 output). A copy's source was usually just
// written by other cores (the heads permute after a product split over all of them),
// so one core copies it at the rate it can pull lines from their caches: on the
// 16-core host the transformer's 1 MiB heads permutes took 61µs on average in a step,
// split in four (the grain was 256 KiB), and 26-45µs split in sixteen.
const copyGrain = 64 << 10

// maxBlock is the largest element, in bytes, that stridedCopy moves as one value.
const maxBlock = 64

// blockRun returns n > 1 when the rows of the walk are runs of n contiguous elements,
// of n·esz bytes (a power of two up to maxBlock), that all start at multiples of n, so
// that the copy is one of n·esz-byte elements; otherwise 0.
func blockRun(p *bplan, esz, base int) int {
	n := p.inner
	if p.rows == 0 || p.ist[0] != 1 || n < 2 || n*esz > maxBlock || n&(n-1) != 0 || base%n != 0 {
		return 0
	}
	for _, s := range p.st[0] {
		if s%n != 0 {
			return 0
		}
	}
	return n
}

// copier makes the loops of a strided copy for one element size.
type copier interface {
	row(dst, src []byte, base, st, plen, pst int) func(o int, off [3]int, n int)
	transpose(p *bplan, base int, dst, src []byte) func() error
}

// elems is the copier of elements of type T: unsigned integers up to 8 bytes, byte
// arrays beyond, which Go moves in 16-byte registers without a call.
type elems[T any] struct{}

func copierFor(esz int) copier {
	switch esz {
	case 1:
		return elems[uint8]{}
	case 2:
		return elems[uint16]{}
	case 4:
		return elems[uint32]{}
	case 8:
		return elems[uint64]{}
	case 16:
		return elems[[16]byte]{}
	case 32:
		return elems[[32]byte]{}
	case 64:
		return elems[[64]byte]{}
	}
	return nil
}

// transposeTile is the edge of the square tiles a transposing copy moves at a time, so
// that both the rows read and the rows written stay in cache.
const transposeTile = 32

// isTranspose reports whether the walk reads its rows with a stride and the axis just
// outside them contiguously (a transpose of the two innermost axes, possibly batched),
// where copying row by row would touch a new cache line per element. Elements of a
// cache line or more are read once whatever the order; tiles measured slower for them
// than the plain walk (the heads permute: 60 against 100 µs per MiB on one core).
func isTranspose(p *bplan, esz int) bool {
	last := len(p.outer) - 1
	return esz < maxBlock && last >= 0 && p.ist[0] != 1 && p.st[0][last] == 1 && p.inner >= transposeTile/4
}

func (elems[T]) transpose(p *bplan, base int, dst, src []byte) func() error {
	d, s := typed[T](dst), typed[T](src)
	last := len(p.outer) - 1
	a, b, sb := p.outer[last], p.inner, p.ist[0]
	prefix, pst := p.outer[:last], p.st[0][:last]
	tilesA := (a + transposeTile - 1) / transposeTile
	units := p.rows / a * tilesA
	body := func(lo, hi int) {
		for u := lo; u < hi; u++ {
			pre, tile := u/tilesA, u%tilesA
			off, rem := base, pre
			for k := len(prefix) - 1; k >= 0; k-- {
				off += rem % prefix[k] * pst[k]
				rem /= prefix[k]
			}
			a0, a1 := tile*transposeTile, min((tile+1)*transposeTile, a)
			for b0 := 0; b0 < b; b0 += transposeTile {
				b1 := min(b0+transposeTile, b)
				for i := a0; i < a1; i++ {
					row := d[(pre*a+i)*b : (pre*a+i+1)*b]
					for j := b0; j < b1; j++ {
						row[j] = s[off+i+j*sb]
					}
				}
			}
		}
	}
	var z T
	grain := max(1, copyGrain/(min(a, transposeTile)*b*int(unsafe.Sizeof(z))))
	return func() error { parallel.For(units, grain, body); return nil }
}

// shortRow is the row length below which stridedCopy folds rows into pieces, and
// foldedRow the most elements a row of pieces holds.
const (
	shortRow  = 64
	foldedRow = 4096
)

// foldFactor is the largest divisor f of n with f·piece at most foldedRow: how many
// pieces of the next axis a folded row holds.
func foldFactor(n, piece int) int {
	for f := min(n, foldedRow/max(piece, 1)); f > 1; f-- {
		if n%f == 0 {
			return f
		}
	}
	return 1
}

// row returns the row step of a strided copy: n elements from base+off with stride st,
// or, where plen is not 0, n/plen pieces of plen contiguous elements pst apart (0 for a
// repeated piece).
func (elems[T]) row(dst, src []byte, base, st, plen, pst int) func(o int, off [3]int, n int) {
	d, s := typed[T](dst), typed[T](src)
	return func(o int, off [3]int, n int) {
		so := base + off[0]
		if plen != 0 {
			for k := o; k < o+n; k += plen {
				copy(d[k:k+plen], s[so:so+plen])
				so += pst
			}
			return
		}
		if st == 1 {
			copy(d[o:o+n], s[so:so+n])
			return
		}
		dd := d[o : o+n]
		for i := range dd {
			dd[i] = s[so+i*st]
		}
	}
}

func permuteFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	perm := n.Attr().(tensor.PermuteAttr).Perm
	xs := n.Input(0).Shape().Strides()
	st := make([]int, len(perm))
	for i, p := range perm {
		st[i] = xs[p]
	}
	return stridedCopy(n.DType().Size(), n.Shape(), st, 0, out, in[0])
}

func sliceFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.SliceAttr)
	xs := n.Input(0).Shape().Strides()
	st := make([]int, len(xs))
	base := 0
	for i := range xs {
		st[i] = xs[i] * at.Steps[i]
		if n.Shape()[i] > 0 {
			base += at.Starts[i] * xs[i]
		}
	}
	return stridedCopy(n.DType().Size(), n.Shape(), st, base, out, in[0])
}

func expandFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	st := broadcastStrides(n.Shape(), n.Input(0).Shape())
	return stridedCopy(n.DType().Size(), n.Shape(), st, 0, out, in[0])
}

// tileFactory views the output [r0·d0, r1·d1, ...] as [r0, d0, r1, d1, ...] and reads
// the input with stride 0 along each repeat axis.
func tileFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	x := n.Input(0).Shape()
	xs := x.Strides()
	reps := n.Attr().(tensor.TileAttr).Reps
	var shape tensor.Shape
	var st []int
	for i, r := range reps {
		shape = append(shape, r, x[i])
		st = append(st, 0, xs[i])
	}
	return stridedCopy(n.DType().Size(), shape, st, 0, out, in[0])
}

// depthToSpaceFactory writes the output viewed as (N, C, H, b, W, b) from the input
// viewed as (N, b, b, C, H, W) (DCR) or (N, C, b, b, H, W) (CRD).
func depthToSpaceFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.DepthToSpaceAttr)
	b := at.Block
	o := n.Shape()
	nn, c, h, w := o[0], o[1], o[2]/b, o[3]/b
	hw := h * w
	var sC, sB1, sB2 int
	if at.Mode == "CRD" {
		sC, sB1, sB2 = b*b*hw, b*hw, hw
	} else {
		sB1, sB2, sC = b*c*hw, c*hw, hw
	}
	shape := tensor.Shape{nn, c, h, b, w, b}
	st := []int{c * b * b * hw, sC, w, sB1, 1, sB2}
	return stridedCopy(n.DType().Size(), shape, st, 0, out, in[0])
}

// concatFactory copies, for each outer index, each input's contiguous block into its
// place in the output row.
func concatFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	axis := n.Attr().(tensor.AxisAttr).Axis
	s := n.Shape()
	outer := s[:axis].Size()
	esz := n.DType().Size()
	rowOut := s[axis:].Size() * esz
	chunks := make([]int, len(in))
	for k, x := range n.Inputs() {
		chunks[k] = x.Shape()[axis:].Size() * esz
	}
	body := func(lo, hi int) {
		for o := lo; o < hi; o++ {
			at := o * rowOut
			for k, src := range in {
				c := chunks[k]
				copy(out[at:at+c], src[o*c:o*c+c])
				at += c
			}
		}
	}
	grain := max(1, copyGrain/max(rowOut, 1))
	return func() error { parallel.For(outer, grain, body); return nil }, nil
}

// padFactory maps each output coordinate of every axis to its source coordinate (or -1
// for the constant fill) once, then fills output rows: a row whose outer coordinates
// are all inside the input copies through the last axis's map, the others take the fill.
func padFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.PadAttr)
	x := n.Input(0).Shape()
	o := n.Shape()
	if o.Size() == 0 {
		return func() error { return nil }, nil
	}
	if len(o) == 0 {
		return func() error { copy(out, in[0]); return nil }, nil
	}
	maps := make([][]int, len(o))
	for i := range o {
		maps[i] = padMap(x[i], at.Before[i], o[i], at.Mode)
	}
	fill := tensor.Scalar(n.DType(), float64(at.Value)).Bytes()
	switch n.DType().Size() {
	case 1:
		return padTyped(out, in[0], maps, x, o, typed[uint8](fill)[0])
	case 2:
		return padTyped(typed[uint16](out), typed[uint16](in[0]), maps, x, o, typed[uint16](fill)[0])
	case 4:
		return padTyped(typed[uint32](out), typed[uint32](in[0]), maps, x, o, typed[uint32](fill)[0])
	}
	return padTyped(typed[uint64](out), typed[uint64](in[0]), maps, x, o, typed[uint64](fill)[0])
}

// padMap gives, for each output coordinate of an axis of size d padded to size o with
// before elements in front, the source coordinate or -1.
func padMap(d, before, o int, mode tensor.PadMode) []int {
	m := make([]int, o)
	for j := range m {
		s := j - before
		switch {
		case s >= 0 && s < d:
		case mode == tensor.PadConstant:
			s = -1
		case mode == tensor.PadEdge:
			s = min(max(s, 0), d-1)
		default: // reflect without repeating the edge; the rule keeps pads below d
			if s < 0 {
				s = -s
			}
			if s >= d {
				s = 2*(d-1) - s
			}
		}
		m[j] = s
	}
	return m
}

func padTyped[T any](d, s []T, maps [][]int, x, o tensor.Shape, fill T) (func() error, error) {
	r := len(o)
	last := maps[r-1]
	inner := o[r-1]
	rows := o.Size() / inner
	xs := x.Strides()
	body := func(lo, hi int) {
		var idx [maxRank]int
		for row := lo; row < hi; row++ {
			rem, src := row, 0
			for a := r - 2; a >= 0; a-- {
				idx[a] = rem % o[a]
				rem /= o[a]
			}
			inside := true
			for a := 0; a < r-1; a++ {
				m := maps[a][idx[a]]
				if m < 0 {
					inside = false
					break
				}
				src += m * xs[a]
			}
			dd := d[row*inner : (row+1)*inner]
			for j := range dd {
				if m := last[j]; inside && m >= 0 {
					dd[j] = s[src+m]
				} else {
					dd[j] = fill
				}
			}
		}
	}
	if r-1 > maxRank {
		return nil, fmt.Errorf("pad of rank %d exceeds %d", r, maxRank+1)
	}
	var z T
	grain := max(1, copyGrain/(inner*int(unsafe.Sizeof(z))))
	return func() error { parallel.For(rows, grain, body); return nil }, nil
}
