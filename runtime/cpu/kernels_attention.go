package cpu

import (
	"math"
	"sync/atomic"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

// Attention (attentionKernel: one query row at a time over its visible keys), rotary
// embedding, and the attention backward.
//
// The attention backward (OpAttentionGrad), FlashAttention-2 style: the probabilities are
// recomputed tile by tile from q, k and each query's log-sum-exp, so no Tq×Tk matrix
// exists beyond two attnTile×attnTile tiles per worker. The three outputs are three
// passes:
//
//	stats (per query block): lse_i = log Σ_j exp(s_ij), online over key tiles; δ_i = gy_i·o_i
//	∂k|∂v (per key block, over query tiles): ∂v += pᵀ gy; ∂k += s·∂Sᵀ q
//	∂q    (per query block, over key tiles): ∂q += s·∂S k
//
// with p = exp(s - lse) and ∂S = p·(gy vᵀ - δ). Each block is written by one task, so no
// two workers add to the same output (no atomics, deterministic results). Tasks are
// (batch entry, block) pairs taken from an atomic counter, which balances the uneven
// blocks of causal attention; causal tiles wholly above the diagonal are skipped. The
// tile products are serial GEMMs (gemm.SgemmPacked without splitting), since the tasks
// already occupy every worker.

func init() {
	register(tensor.OpAttention, floatTypes, attentionKernel)
	register(tensor.OpAttentionGrad, floatTypes, attentionGradKernel)
	register(tensor.OpRoPE, floatTypes, ropeKernel)
}

// attnTile is the number of queries and of keys in one tile.
const attnTile = 128

// attnBwd holds one OpAttentionGrad node's geometry and operands.
type attnBwd struct {
	at                   tensor.AttentionGradAttr
	batch, tq, tk, d, dv int
	q, k                 []float32
	third, gy            []float32 // v, or o for the statistics
	stats, out           []float32
	mask                 []float32 // nil for none
	maskBatch            []int     // mask offset of each batch entry
	maskRow, maskCol     int
	scratch              [][]float32 // two tiles per worker
}

func attentionGradKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.AttentionGradAttr)
	qs, ks := n.Input(0).Shape(), n.Input(1).Shape()
	r := qs.Rank()
	lead := qs[:r-2]
	a := &attnBwd{at: at, batch: lead.Size(), tq: qs[r-2], tk: ks[r-2], d: qs[r-1], dv: n.Input(2).Shape()[r-1],
		q: f32s(in[0]), k: f32s(in[1]), third: f32s(in[2]), gy: f32s(in[3]), out: f32s(out)}
	if at.Output != tensor.AttentionStats {
		a.stats = f32s(in[4])
	}
	if mi := at.MaskInput(); len(in) > mi {
		a.mask = f32s(in[mi])
		st := broadcastStrides(append(lead.Clone(), a.tq, a.tk), n.Input(mi).Shape())
		a.maskBatch = offsets(lead, st[:r-2])
		a.maskRow, a.maskCol = st[r-2], st[r-1]
	}
	workers := parallel.Workers()
	a.scratch = make([][]float32, workers)
	for w := range a.scratch {
		a.scratch[w] = make([]float32, 2*attnTile*attnTile)
	}
	rows := a.tq
	pass := a.statsBlock
	switch at.Output {
	case tensor.AttentionGradQ:
		pass = a.gradQBlock
	case tensor.AttentionGradKV:
		rows, pass = a.tk, a.gradKVBlock
	}
	blocks := (rows + attnTile - 1) / attnTile
	tasks := a.batch * blocks
	var next atomic.Int64
	var failed atomic.Pointer[error]
	return func() error {
		next.Store(0)
		failed.Store(nil)
		parallel.Run(min(workers, tasks), func(w int) {
			for {
				t := int(next.Add(1) - 1)
				if t >= tasks || failed.Load() != nil {
					return
				}
				if err := pass(a.scratch[w], t/blocks, t%blocks*attnTile); err != nil {
					failed.Store(&err)
				}
			}
		})
		if err := failed.Load(); err != nil {
			return *err
		}
		return nil
	}, nil
}

// scoreTile writes into s (ni×nj) the scores of queries [i0, i0+ni) and keys [j0, j0+nj)
// of batch entry b: q kᵀ·scale plus the mask, -Inf where causal attention hides a key.
func (a *attnBwd) scoreTile(s []float32, b, i0, ni, j0, nj int) error {
	s = s[:ni*nj]
	if a.d == 0 {
		clear(s)
	} else if err := gemm.Default().SgemmPacked(false, false, ni, nj, a.d, a.at.Scale, a.q[(b*a.tq+i0)*a.d:], a.d,
		gemm.Dense(a.k[(b*a.tk+j0)*a.d:], a.d, true), 0, s, nj); err != nil {
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
		if a.at.Causal {
			for j := max(0, i0+i+1-j0); j < nj; j++ {
				row[j] = float32(math.Inf(-1))
			}
		}
	}
	return nil
}

// visibleKeys is the end of the keys any of queries [i0, i0+ni) sees.
func (a *attnBwd) visibleKeys(i0, ni int) int {
	if a.at.Causal {
		return min(a.tk, i0+ni)
	}
	return a.tk
}

// probTile turns the scores s (ni×nj) of queries from i0 of batch entry b into
// probabilities exp(s - lse).
func (a *attnBwd) probTile(s []float32, b, i0, ni, nj int) {
	for i := range ni {
		lse := a.stats[2*(b*a.tq+i0+i)]
		row := s[i*nj : (i+1)*nj]
		for j, v := range row {
			if v -= lse; v >= expLo && v <= expHi {
				row[j] = expCore(v)
			} else {
				row[j] = expEdge(v)
			}
		}
	}
}

// scoreGradTile computes dp = gy vᵀ for queries from i0 and keys from j0 of batch entry
// b, then ∂S = p·(dp - δ) into dp.
func (a *attnBwd) scoreGradTile(p, dp []float32, b, i0, ni, j0, nj int) error {
	dp = dp[:ni*nj]
	if a.dv == 0 {
		clear(dp)
	} else if err := gemm.Default().SgemmPacked(false, false, ni, nj, a.dv, 1, a.gy[(b*a.tq+i0)*a.dv:], a.dv,
		gemm.Dense(a.third[(b*a.tk+j0)*a.dv:], a.dv, true), 0, dp, nj); err != nil {
		return err
	}
	for i := range ni {
		delta := a.stats[2*(b*a.tq+i0+i)+1]
		for j := i * nj; j < (i+1)*nj; j++ {
			dp[j] = p[j] * (dp[j] - delta)
		}
	}
	return nil
}

// statsBlock writes (lse, δ) for the queries of one block: the log-sum-exp by the
// online rule (the running maximum rescales the running sum), the sum in float64.
func (a *attnBwd) statsBlock(scratch []float32, b, i0 int) error {
	ni := min(attnTile, a.tq-i0)
	var m [attnTile]float32
	var l [attnTile]float64
	for i := range ni {
		m[i] = float32(math.Inf(-1))
	}
	s := scratch[:attnTile*attnTile]
	for j0 := 0; j0 < a.visibleKeys(i0, ni); j0 += attnTile {
		nj := min(attnTile, a.tk-j0)
		if err := a.scoreTile(s, b, i0, ni, j0, nj); err != nil {
			return err
		}
		for i := range ni {
			row := s[i*nj : (i+1)*nj]
			mx := m[i]
			for _, v := range row {
				mx = max(mx, v)
			}
			if mx == float32(math.Inf(-1)) {
				continue // nothing visible yet
			}
			l[i] *= float64(expf(m[i] - mx))
			var sum float32
			for _, v := range row {
				if v -= mx; v >= expLo {
					sum += expCore(v)
				} else {
					sum += expEdge(v)
				}
			}
			l[i] += float64(sum)
			m[i] = mx
		}
	}
	for i := range ni {
		row := b*a.tq + i0 + i
		var delta float64
		gy, o := a.gy[row*a.dv:(row+1)*a.dv], a.third[row*a.dv:(row+1)*a.dv]
		for e, g := range gy {
			delta += float64(g) * float64(o[e])
		}
		a.out[2*row] = m[i] + float32(math.Log(l[i]))
		a.out[2*row+1] = float32(delta)
	}
	return nil
}

// gradQBlock accumulates ∂q of one query block over the key tiles it sees.
func (a *attnBwd) gradQBlock(scratch []float32, b, i0 int) error {
	ni := min(attnTile, a.tq-i0)
	dq := a.out[(b*a.tq+i0)*a.d : (b*a.tq+i0+ni)*a.d]
	clear(dq)
	if a.d == 0 {
		return nil
	}
	p, ds := scratch[:attnTile*attnTile], scratch[attnTile*attnTile:]
	for j0 := 0; j0 < a.visibleKeys(i0, ni); j0 += attnTile {
		nj := min(attnTile, a.tk-j0)
		if err := a.scoreTile(p, b, i0, ni, j0, nj); err != nil {
			return err
		}
		a.probTile(p, b, i0, ni, nj)
		if err := a.scoreGradTile(p, ds, b, i0, ni, j0, nj); err != nil {
			return err
		}
		if err := gemm.Default().SgemmPacked(false, false, ni, a.d, nj, a.at.Scale, ds, nj,
			gemm.Dense(a.k[(b*a.tk+j0)*a.d:], a.d, false), 1, dq, a.d); err != nil {
			return err
		}
	}
	return nil
}

// gradKVBlock accumulates ∂k and ∂v of one key block over the query tiles that see it,
// into the block's rows of the (…, Tk, D+Dv) output.
func (a *attnBwd) gradKVBlock(scratch []float32, b, j0 int) error {
	nj := min(attnTile, a.tk-j0)
	w := a.d + a.dv
	blk := a.out[(b*a.tk+j0)*w : (b*a.tk+j0+nj)*w]
	clear(blk)
	p, ds := scratch[:attnTile*attnTile], scratch[attnTile*attnTile:]
	first := 0
	if a.at.Causal {
		first = j0 // earlier queries see none of these keys (tiles of both align)
	}
	for i0 := first; i0 < a.tq; i0 += attnTile {
		ni := min(attnTile, a.tq-i0)
		if err := a.scoreTile(p, b, i0, ni, j0, nj); err != nil {
			return err
		}
		a.probTile(p, b, i0, ni, nj)
		gy := a.gy[(b*a.tq+i0)*a.dv:]
		if a.dv > 0 {
			if err := gemm.Default().SgemmPacked(false, true, nj, a.dv, ni, 1, p, nj,
				gemm.Dense(gy, a.dv, false), 1, blk[a.d:], w); err != nil {
				return err
			}
		}
		if err := a.scoreGradTile(p, ds, b, i0, ni, j0, nj); err != nil {
			return err
		}
		if a.d > 0 {
			if err := gemm.Default().SgemmPacked(false, true, nj, a.d, ni, a.at.Scale, ds, nj,
				gemm.Dense(a.q[(b*a.tq+i0)*a.d:], a.d, false), 1, blk, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// attentionKernel computes softmax(q kᵀ * scale + mask) v for groups of (batch, head)
// items: one strided GEMM for the scores of a group, a row-parallel masked softmax, and
// one strided GEMM into the output.
func attentionKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	at := n.Attr().(tensor.AttentionAttr)
	qs, ks, vs := n.Input(0).Shape(), n.Input(1).Shape(), n.Input(2).Shape()
	r := qs.Rank()
	lead := qs[:r-2]
	batch, tq, d, tk, dv := lead.Size(), qs[r-2], qs[r-1], ks[r-2], vs[r-1]
	Q, K, V, O := f32s(in[0]), f32s(in[1]), f32s(in[2]), f32s(out)
	var mask []float32
	var maskBatch []int
	var maskRow, maskCol int
	if len(in) == 4 {
		mask = f32s(in[3])
		st := broadcastStrides(append(lead.Clone(), tq, tk), n.Input(3).Shape())
		maskBatch = offsets(lead, st[:r-2])
		maskRow, maskCol = st[r-2], st[r-1]
	}
	group := max(1, min(batch, attentionScratchFloats/max(tq*tk, 1)))
	scores := make([]float32, group*tq*tk)
	return func() error {
		if tq == 0 || batch == 0 {
			return nil
		}
		if tk == 0 || dv == 0 {
			clear(O)
			return nil
		}
		for b0 := 0; b0 < batch; b0 += group {
			g := min(group, batch-b0)
			if d == 0 {
				clear(scores) // no features: every score is 0
			} else if err := gemm.SgemmStrided(false, true, tq, tk, d, at.Scale, Q[b0*tq*d:], d, tq*d,
				K[b0*tk*d:], d, tk*d, 0, scores, tk, tq*tk, g); err != nil {
				return err
			}
			parallel.For(g*tq, max(1, rowGrain/tk), func(lo, hi int) {
				for row := lo; row < hi; row++ {
					b, i := row/tq, row%tq
					s := scores[row*tk : (row+1)*tk]
					if mask != nil {
						mrow := mask[maskBatch[b0+b]+i*maskRow:]
						for j := range s {
							s[j] += mrow[j*maskCol]
						}
					}
					visible := tk
					if at.Causal {
						visible = min(tk, i+1) // query i sees keys j <= i
					}
					softmaxRow(s, visible)
				}
			})
			if err := gemm.SgemmStrided(false, false, tq, dv, tk, 1, scores, tk, tq*tk,
				V[b0*tk*dv:], dv, tk*dv, 0, O[b0*tq*dv:], dv, tq*dv, g); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// softmaxRow replaces s[:visible] by its softmax and zeroes the rest; a row with no
// visible entry becomes NaN, as the additive -Inf composition gives.
func softmaxRow(s []float32, visible int) {
	if visible == 0 {
		for j := range s {
			s[j] = float32(math.NaN())
		}
		return
	}
	softmaxStrided(s, s, visible, 1, 1, nil, 0, false)
	clear(s[visible:])
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
