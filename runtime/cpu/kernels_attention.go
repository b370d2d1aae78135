package cpu

import (
	"math"
	"sync/atomic"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Attention forward (FlashAttention style), rotary embedding, and what the forward and
// backward kernels (kernels_attention_grad.go) share.
//
// The forward computes, per (batch entry, block of attnTile queries), the scores of one
// key tile at a time and keeps a running maximum m and sum l per query: a new maximum
// rescales the sum and the partial output by e^(m_old - m_new), and the output is
// divided by l at the end. No Tq×Tk matrix exists beyond one attnTile×attnTile tile per
// worker, which stays in cache, and a short sequence (Tk <= attnTile) is one tile:
// scores, softmax and the product with v in one pass over L1-resident data. Tasks are
// taken from an atomic counter; each writes its own rows of the output, so the result
// does not depend on the schedule.

func init() {
	register(tensor.OpAttention, floatTypes, attentionKernel)
	register(tensor.OpAttentionGrad, floatTypes, attentionGradKernel)
	register(tensor.OpRoPE, floatTypes, ropeKernel)
}

// attnTile is the number of queries and of keys in one tile.
const attnTile = 128

// attnOperands is the geometry and the q, k, v and mask operands of an attention node,
// forward or backward. A batch entry is one (batch, head) pair; in the AttentionBTHD
// layout the rows of an entry are heads rows apart (see row).
type attnOperands struct {
	scale                float32
	causal               bool
	batch, tq, tk, d, dv int
	heads                int // heads per row: H for AttentionBTHD, 1 for AttentionBHTD
	q, k, v              []float32
	mask                 []float32 // nil for none
	maskBatch            []int     // mask offset of each batch entry
	maskRow, maskCol     int
}

// newAttnOperands reads the geometry from q's, k's and v's shapes in the layout and
// binds the mask (input mi of n, if present).
func newAttnOperands(n *tensor.Node, scale float32, causal bool, layout tensor.AttentionLayout, q, k, v []byte, vShape tensor.Shape, in [][]byte, mi int) attnOperands {
	lead, heads, tq, d := layout.Split(n.Input(0).Shape())
	_, _, tk, _ := layout.Split(n.Input(1).Shape())
	_, _, _, dv := layout.Split(vShape)
	a := attnOperands{scale: scale, causal: causal, batch: lead.Size(), tq: tq, tk: tk, d: d, dv: dv, heads: heads,
		q: f32s(q), k: f32s(k)}
	if v != nil {
		a.v = f32s(v)
	}
	if len(in) > mi {
		a.mask = f32s(in[mi])
		r := len(lead)
		st := broadcastStrides(append(lead.Clone(), a.tq, a.tk), n.Input(mi).Shape())
		a.maskBatch = offsets(lead, st[:r])
		a.maskRow, a.maskCol = st[r], st[r+1]
	}
	return a
}

// row is the offset of row i of batch entry b in an operand of n rows of w features
// per head: (b·n + i)·w in the AttentionBHTD layout; in AttentionBTHD entry b is head
// b%heads of batch b/heads, and its rows are ld(w) apart.
func (a *attnOperands) row(b, n, i, w int) int {
	return ((b/a.heads*n+i)*a.heads + b%a.heads) * w
}

// ld is the distance between consecutive rows of one batch entry in an operand of w
// features per head.
func (a *attnOperands) ld(w int) int { return a.heads * w }

// clearRows zeroes rows [i0, i0+ni) of batch entry b in x, an operand of n rows of w
// features per head.
func (a *attnOperands) clearRows(x []float32, b, n, i0, ni, w int) {
	for i := i0; i < i0+ni; i++ {
		at := a.row(b, n, i, w)
		clear(x[at : at+w])
	}
}

// scoreTile writes into s (ni×nj) the scores of queries [i0, i0+ni) and keys [j0, j0+nj)
// of batch entry b: q kᵀ·scale plus the mask, -Inf where causal attention hides a key.
func (a *attnOperands) scoreTile(s []float32, b, i0, ni, j0, nj int) error {
	s = s[:ni*nj]
	if a.d == 0 {
		clear(s)
	} else if err := gemm.Default().SgemmPacked(false, false, ni, nj, a.d, a.scale, a.q[a.row(b, a.tq, i0, a.d):], a.ld(a.d),
		gemm.Dense(a.k[a.row(b, a.tk, j0, a.d):], a.ld(a.d), true), 0, s, nj); err != nil {
		return err
	}
	for i := range ni {
		row := s[i*nj : (i+1)*nj]
		if a.mask != nil {
			m := a.mask[a.maskBatch[b]+(i0+i)*a.maskRow+j0*a.maskCol:]
			for j := range row {
				row[j] += m[j*a.maskCol]
			}
		}
		if a.causal {
			for j := max(0, i0+i+1-j0); j < nj; j++ {
				row[j] = float32(math.Inf(-1))
			}
		}
	}
	return nil
}

// keys is how many of the nj keys from j0 the softmax passes of query q take: those
// causal attention leaves visible, rounded up to a multiple of keysStep. The hidden
// scores are -Inf, whose exponentials are zeros that leave the sums as they are, so a
// causal tile costs half the exponentials; the rounding keeps the rows out of package
// vec's scalar tail loops, which cost more than the vector code saves.
func (a *attnOperands) keys(q, j0, nj int) int {
	if !a.causal {
		return nj
	}
	return min(nj, (max(0, q+1-j0)+keysStep-1)/keysStep*keysStep)
}

// keysStep is the widest vector of package vec's code, in floats (AVX-512's).
const keysStep = 16

// tileWork is the multiply-adds of the products of a block of up to attnTile of rows
// against all of other (queries against keys, or keys against queries): the score
// product and the one with v.
func (a *attnOperands) tileWork(rows, other int) int {
	return min(attnTile, rows) * other * (a.d + a.dv)
}

// visibleKeys is the end of the keys any of queries [i0, i0+ni) sees.
func (a *attnOperands) visibleKeys(i0, ni int) int {
	if a.causal {
		return min(a.tk, i0+ni)
	}
	return a.tk
}

// runTasks runs body(scratch, t) for every task t < tasks on the workers, each task
// taken from a counter, and returns the first error. scratch[w] is worker w's. Each
// task is about taskWork multiply-adds, which bounds the workers (parallel.WorkersFor):
// a few short sequences stay on one goroutine.
func runTasks(scratch [][]float32, tasks, taskWork int, next *atomic.Int64, body func(scratch []float32, t int) error) error {
	var failed atomic.Pointer[error]
	next.Store(0)
	parallel.Run(min(len(scratch), tasks, parallel.WorkersFor(tasks*taskWork)), func(w int) {
		for {
			t := int(next.Add(1) - 1)
			if t >= tasks || failed.Load() != nil {
				return
			}
			if err := body(scratch[w], t); err != nil {
				failed.Store(&err)
			}
		}
	})
	if err := failed.Load(); err != nil {
		return *err
	}
	return nil
}

// workerScratch returns one slice of n floats per worker, plus one float at the end
// that scaleRow uses.
func workerScratch(n int) [][]float32 {
	s := make([][]float32, parallel.Workers())
	for w := range s {
		s[w] = make([]float32, n+1)
	}
	return s
}

// scaleRow multiplies row by c with package vec's loop, its operand c held in the last
// float of the worker's scratch (a local would escape to the heap: one allocation per
// row).
func scaleRow(row, scratch []float32, c float32) {
	k := scratch[len(scratch)-1:]
	k[0] = c
	vec.Arith(vec.Mul, row, row, 1, k, 0)
}

// normalizeRows divides row i of the ni rows of o (n floats apiece, ld apart) by l[i].
// Rows as short as a head's features (16 in a typical transformer) cost less in one Go
// loop than in a call of package vec's each.
func normalizeRows(o []float32, n, ld, ni int, l *[attnTile]float64, scratch []float32) {
	for i := range ni {
		// 1/l is +Inf for a query that saw nothing: 0·Inf is NaN.
		c, row := float32(1/l[i]), o[i*ld:i*ld+n]
		if n > 32 {
			scaleRow(row, scratch, c)
			continue
		}
		for e := range row {
			row[e] *= c
		}
	}
}

// attnForward is one OpAttention node.
type attnForward struct {
	attnOperands
	o []float32
}

// attentionKernel computes softmax(q kᵀ * scale + mask) v by query blocks over key
// tiles with a running softmax (see the file comment).
func attentionKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.AttentionAttr)
	a := &attnForward{attnOperands: newAttnOperands(n, at.Scale, at.Causal, at.Layout, in[0], in[1], in[2], n.Input(2).Shape(), in, 3),
		o: f32s(out)}
	blocks := (a.tq + attnTile - 1) / attnTile
	tasks := a.batch * blocks
	scratch := workerScratch(attnTile * attnTile)
	var next atomic.Int64
	return func() error {
		if a.tk == 0 {
			clear(a.o) // softmax over no keys times no values
			return nil
		}
		if a.small16() {
			// One task per batch entry; one that meets a non-finite score redoes its
			// blocks by tiles.
			return runTasks(scratch, a.batch, blocks*a.tileWork(a.tq, a.tk), &next, func(s []float32, b int) error {
				if a.entry16(s, b) {
					return nil
				}
				for i0 := 0; i0 < a.tq; i0 += attnTile {
					if err := a.block(s, b, i0); err != nil {
						return err
					}
				}
				return nil
			})
		}
		return runTasks(scratch, tasks, a.tileWork(a.tq, a.tk), &next, func(s []float32, t int) error {
			return a.block(s, t/blocks, t%blocks*attnTile)
		})
	}, nil
}

// block computes the output rows of queries [i0, i0+attnTile) of batch entry b. A query
// that sees no key gets NaN, as the softmax of nothing but -Inf does.
func (a *attnForward) block(s []float32, b, i0 int) error {
	ni := min(attnTile, a.tq-i0)
	o, ldo := a.o[a.row(b, a.tq, i0, a.dv):], a.ld(a.dv)
	var m [attnTile]float32
	var l [attnTile]float64
	for i := range ni {
		m[i] = float32(math.Inf(-1))
	}
	for j0 := 0; j0 < a.visibleKeys(i0, ni); j0 += attnTile {
		nj := min(attnTile, a.tk-j0)
		if err := a.scoreTile(s, b, i0, ni, j0, nj); err != nil {
			return err
		}
		for i := range ni {
			row := s[i*nj : (i+1)*nj]
			vis := a.keys(i0+i, j0, nj)
			mx := max(m[i], vec.Max(row[:vis]))
			if mx == float32(math.Inf(-1)) {
				clear(row) // nothing visible yet
				continue
			}
			clear(row[vis:])
			row = row[:vis]
			if mx > m[i] {
				// A new maximum: what was summed so far shrinks by e^(m_old - m_new).
				if c := vec.Expf(m[i] - mx); l[i] != 0 {
					l[i] *= float64(c)
					scaleRow(o[i*ldo:i*ldo+a.dv], s, c)
				}
				m[i] = mx
			}
			l[i] += vec.ExpShiftSum(row, row, m[i])
		}
		if a.dv > 0 {
			// The first tile's product writes over o (no clearing pass); a row with no key
			// visible in it has all-zero probabilities, so its output starts at zero.
			if err := gemm.Default().SgemmPacked(false, false, ni, a.dv, nj, 1, s, nj,
				gemm.Dense(a.v[a.row(b, a.tk, j0, a.dv):], a.ld(a.dv), false), first(j0), o, ldo); err != nil {
				return err
			}
		}
	}
	normalizeRows(o, a.dv, ldo, ni, &l, s)
	return nil
}

// first is the beta of a product accumulated over tiles: 0 for the tile at offset 0,
// whose product writes over the output (so nothing has to clear it first), 1 after.
func first(at int) float32 {
	if at == 0 {
		return 0
	}
	return 1
}

// ropeKernel rotates feature pairs (2i, 2i+1), i < Dims/2, of every (…, t, :) row by
// float32(pos[t])*freq[i]. The cos/sin table is rebuilt each run from the positions.
func ropeKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.RoPEAttr)
	shape := n.Shape()
	r := shape.Rank()
	t, d, half := shape[r-2], shape[r-1], at.Dims/2
	rows := shape[:r-1].Size()
	X, Y := f32s(in[0]), f32s(out)
	pos := indexReader(n.Input(1).DType(), in[1])
	freq := tensor.RoPEFrequencies(at.Base, at.Dims)
	cos, sin := make([]float32, t*half), make([]float32, t*half)
	return func() error {
		for p := 0; p < t; p++ {
			fp := float32(pos(p))
			for i, f := range freq {
				theta := float64(fp * f)
				cos[p*half+i], sin[p*half+i] = float32(math.Cos(theta)), float32(math.Sin(theta))
			}
		}
		parallel.For(rows, max(1, rowGrain/max(d, 1)), func(lo, hi int) {
			for row := lo; row < hi; row++ {
				x, y := X[row*d:(row+1)*d], Y[row*d:(row+1)*d]
				c, s := cos[(row%t)*half:], sin[(row%t)*half:]
				for i := 0; i < half; i++ {
					x0, x1 := x[2*i], x[2*i+1]
					y[2*i] = x0*c[i] - x1*s[i]
					y[2*i+1] = x0*s[i] + x1*c[i]
				}
				copy(y[at.Dims:], x[at.Dims:])
			}
		})
		return nil
	}, nil
}
