package cpu

import (
	"math"
	"sync/atomic"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// The attention backward (OpAttentionGrad), FlashAttention-2 style: the probabilities
// are recomputed tile by tile from q, k and each query's log-sum-exp, so no Tq×Tk matrix
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
//
// When one segment holds all three nodes of one attention (the usual training graph),
// Prepare fuses them (attnTrio): one task per batch entry computes the statistics and
// then, per key block, ∂k and ∂v while adding each tile's share of ∂q into the entry's
// ∂q rows, which that task alone writes. The scores are formed twice instead of three
// times and ∂S once instead of twice.

// attnBwd holds one OpAttentionGrad node's operands: for the statistics, v is the
// forward's output o.
type attnBwd struct {
	attnOperands
	output    tensor.AttentionGradOutput
	gy        []float32
	stats     []float32 // the statistics an ∂ pass reads
	out       []float32 // the statistics an AttentionStats pass writes
	dq        []float32 // the ∂q an AttentionGradQ pass writes
	kv        kvGrads   // where an AttentionGradKV pass writes ∂k and ∂v
	accumulDQ bool      // gradKVBlock also adds each tile's ∂q share into dq (the fused trio)
}

// kvGrads is where the key gradients go: ∂k of key j of batch entry b, d floats, at
// k[row(b, tk, j, wk):] and ∂v, dv floats, at v[row(b, tk, j, wv):]. An AttentionGradKV
// node's output holds them side by side (jointKV); the fused trio writes them straight
// into the two slices that take them apart (fuse.go), each a dense operand of its own.
type kvGrads struct {
	k, v   []float32
	wk, wv int
	joint  bool // v is k[d:] and wk = wv = d + dv: rows of [∂k, ∂v]
}

// jointKV is the kvGrads of out, an AttentionGradKV node's output (…, Tk, d+dv).
func jointKV(out []float32, d, dv int) kvGrads {
	g := kvGrads{k: out, wk: d + dv, wv: d + dv, joint: true}
	if len(out) > 0 {
		g.v = out[d:]
	}
	return g
}

// clearRows zeroes the gradients of keys [j0, j0+nj) of batch entry b.
func (g kvGrads) clearRows(a *attnOperands, b, j0, nj int) {
	for j := j0; j < j0+nj; j++ {
		clear(g.k[a.row(b, a.tk, j, g.wk):][:a.d])
		clear(g.v[a.row(b, a.tk, j, g.wv):][:a.dv])
	}
}

// copyEntry copies the gradients of batch entry b's keys from src.
func (g kvGrads) copyEntry(src kvGrads, a *attnOperands, b int) {
	for j := range a.tk {
		copy(g.k[a.row(b, a.tk, j, g.wk):][:a.d], src.k[a.row(b, a.tk, j, src.wk):])
		copy(g.v[a.row(b, a.tk, j, g.wv):][:a.dv], src.v[a.row(b, a.tk, j, src.wv):])
	}
}

func newAttnBwd(n *tensor.Node, in [][]byte) *attnBwd {
	at := n.Attr().(tensor.AttentionGradAttr)
	a := &attnBwd{attnOperands: newAttnOperands(n, at.Scale, at.Causal, at.Layout, in[0], in[1], in[2], n.Input(2).Shape(), in, at.MaskInput()),
		output: at.Output, gy: f32s(in[3])}
	if at.Output != tensor.AttentionStats {
		a.stats = f32s(in[4])
	}
	return a
}

func attentionGradKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	a := newAttnBwd(n, in)
	rows := a.tq
	pass := a.statsBlock
	switch a.output {
	case tensor.AttentionStats:
		a.out = f32s(out)
	case tensor.AttentionGradQ:
		a.dq, pass = f32s(out), a.gradQBlock
	case tensor.AttentionGradKV:
		a.kv, rows, pass = jointKV(f32s(out), a.d, a.dv), a.tk, a.gradKVBlock
	}
	blocks := (rows + attnTile - 1) / attnTile
	tasks := a.batch * blocks
	scratch := workerScratch(2 * attnTile * attnTile)
	var next atomic.Int64
	return func() error {
		// The ∂ passes form the scores, their gradient and one or two products more.
		return runTasks(scratch, tasks, 3*a.tileWork(rows, a.tq+a.tk-rows), &next, func(s []float32, t int) error {
			return pass(s, t/blocks, t%blocks*attnTile)
		})
	}, nil
}

// probTile turns the scores s (ni×nj) of queries from i0 and keys from j0 of batch entry
// b into probabilities exp(s - lse).
func (a *attnBwd) probTile(s []float32, b, i0, ni, j0, nj int) {
	for i := range ni {
		row := s[i*nj : (i+1)*nj]
		lse := a.stats[2*(b*a.tq+i0+i)]
		vis := a.keys(i0+i, j0, nj)
		vec.ExpShiftSum(row[:vis], row[:vis], lse)
		// The hidden keys' exp(-Inf - lse): zeros, or NaNs for a query that sees no key.
		hidden := vec.Expf(float32(math.Inf(-1)) - lse)
		for j := vis; j < nj; j++ {
			row[j] = hidden
		}
	}
}

// scoreGradTile computes dp = gy vᵀ for queries from i0 and keys from j0 of batch entry
// b, then ∂S = p·(dp - δ) into dp.
func (a *attnBwd) scoreGradTile(p, dp []float32, b, i0, ni, j0, nj int) error {
	dp = dp[:ni*nj]
	if a.dv == 0 {
		clear(dp)
	} else if err := gemm.Default().SgemmPacked(false, false, ni, nj, a.dv, 1, a.gy[a.row(b, a.tq, i0, a.dv):], a.ld(a.dv),
		gemm.Dense(a.v[a.row(b, a.tk, j0, a.dv):], a.ld(a.dv), true), 0, dp, nj); err != nil {
		return err
	}
	for i := range ni {
		at := 2*(b*a.tq+i0+i) + 1
		row := dp[i*nj : (i+1)*nj]
		vec.Arith(vec.Sub, row, row, 1, a.stats[at:at+1], 0)
	}
	vec.Arith(vec.Mul, dp, p[:ni*nj], 1, dp, 1) // the whole tile in one call
	return nil
}

// statsBlock writes (lse, δ) for the queries of one block: the log-sum-exp by the
// online rule (the running maximum rescales the running sum), the sum in float64. For
// the statistics pass v holds the forward's output o.
func (a *attnBwd) statsBlock(scratch []float32, b, i0 int) error {
	return a.statsTile(scratch, b, i0, false)
}

// statsTile is statsBlock; with keepProbs, which needs all keys in one tile, it leaves the
// block's probabilities exp(s - lse) in scratch as probTile would (gradKV's tile p):
// the exponentials the sum was taken of, divided by the sum.
func (a *attnBwd) statsTile(scratch []float32, b, i0 int, keepProbs bool) error {
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
			vis := a.keys(i0+i, j0, nj)
			mx := max(m[i], vec.Max(row[:vis]))
			if mx == float32(math.Inf(-1)) {
				continue // nothing visible yet
			}
			l[i] *= float64(vec.Expf(m[i] - mx))
			// The tile's scores are not needed again; the hidden ones' probabilities are 0.
			l[i] += vec.ExpShiftSum(row[:vis], row[:vis], mx)
			clear(row[vis:])
			m[i] = mx
		}
	}
	if keepProbs {
		nj := min(attnTile, a.tk)
		for i := range ni {
			row := s[i*nj : (i+1)*nj]
			if m[i] == float32(math.Inf(-1)) {
				// No key visible: the row still holds its scores, and probTile's
				// exp(-Inf - lse) gives the same NaNs as recomputing them would.
				vec.ExpShiftSum(row, row, m[i]+float32(math.Log(l[i])))
				continue
			}
			scaleRow(row[:a.keys(i0+i, 0, nj)], scratch, float32(1/l[i]))
		}
	}
	for i := range ni {
		row, at := b*a.tq+i0+i, a.row(b, a.tq, i0+i, a.dv)
		a.out[2*row] = m[i] + float32(math.Log(l[i]))
		a.out[2*row+1] = float32(dot64(a.gy[at:at+a.dv], a.v[at:at+a.dv]))
	}
	return nil
}

// dot64 is the dot product of x and y (as long as x), summed in float64 in four
// interleaved sums: one sum would wait on each addition before the next.
func dot64(x, y []float32) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	e := 0
	for ; e+4 <= len(x); e += 4 {
		s0 += float64(x[e]) * float64(y[e])
		s1 += float64(x[e+1]) * float64(y[e+1])
		s2 += float64(x[e+2]) * float64(y[e+2])
		s3 += float64(x[e+3]) * float64(y[e+3])
	}
	for ; e < len(x); e++ {
		s0 += float64(x[e]) * float64(y[e])
	}
	return (s0 + s1) + (s2 + s3)
}

// gradQBlock accumulates ∂q of one query block over the key tiles it sees.
func (a *attnBwd) gradQBlock(scratch []float32, b, i0 int) error {
	ni := min(attnTile, a.tq-i0)
	if a.d == 0 {
		return nil
	}
	if a.tk == 0 {
		a.clearRows(a.dq, b, a.tq, i0, ni, a.d) // no key tile writes it
		return nil
	}
	dq := a.dq[a.row(b, a.tq, i0, a.d):]
	p, ds := scratch[:attnTile*attnTile], scratch[attnTile*attnTile:]
	for j0 := 0; j0 < a.visibleKeys(i0, ni); j0 += attnTile {
		nj := min(attnTile, a.tk-j0)
		if err := a.scoreTile(p, b, i0, ni, j0, nj); err != nil {
			return err
		}
		a.probTile(p, b, i0, ni, j0, nj)
		if err := a.scoreGradTile(p, ds, b, i0, ni, j0, nj); err != nil {
			return err
		}
		if err := gemm.Default().SgemmPacked(false, false, ni, a.d, nj, a.scale, ds, nj,
			gemm.Dense(a.k[a.row(b, a.tk, j0, a.d):], a.ld(a.d), false), first(j0), dq, a.ld(a.d)); err != nil {
			return err
		}
	}
	return nil
}

// gradKVBlock accumulates ∂k and ∂v of one key block over the query tiles that see it,
// into the block's rows of a.kv; with accumulDQ it also adds each
// tile's share of ∂q into dq, written over by key block 0's (so blocks must come in
// order).
func (a *attnBwd) gradKVBlock(scratch []float32, b, j0 int) error {
	return a.gradKV(scratch, b, j0, false)
}

// gradKV is gradKVBlock; probsReady says that scratch already holds the probabilities of
// the one query tile (stats with keepProbs), which are then not recomputed.
func (a *attnBwd) gradKV(scratch []float32, b, j0 int, probsReady bool) error {
	nj := min(attnTile, a.tk-j0)
	kv := a.kv
	dk, dv := kv.k[a.row(b, a.tk, j0, kv.wk):], kv.v[a.row(b, a.tk, j0, kv.wv):]
	p, ds := scratch[:attnTile*attnTile], scratch[attnTile*attnTile:]
	from := 0
	if a.causal {
		from = j0 // earlier queries see none of these keys (tiles of both align)
	}
	if from >= a.tq {
		kv.clearRows(&a.attnOperands, b, j0, nj) // no query tile writes it
	}
	// The first query tile's products write over the block, and (key block 0, which
	// every query tile visits) over dq's rows: no clearing passes.
	for i0 := from; i0 < a.tq; i0 += attnTile {
		beta := first(i0 - from)
		ni := min(attnTile, a.tq-i0)
		if !probsReady {
			if err := a.scoreTile(p, b, i0, ni, j0, nj); err != nil {
				return err
			}
			a.probTile(p, b, i0, ni, j0, nj)
		}
		gy := a.gy[a.row(b, a.tq, i0, a.dv):]
		if a.dv > 0 {
			if err := gemm.Default().SgemmPacked(false, true, nj, a.dv, ni, 1, p, nj,
				gemm.Dense(gy, a.ld(a.dv), false), beta, dv, a.ld(kv.wv)); err != nil {
				return err
			}
		}
		if err := a.scoreGradTile(p, ds, b, i0, ni, j0, nj); err != nil {
			return err
		}
		if a.d == 0 {
			continue
		}
		if err := gemm.Default().SgemmPacked(false, true, nj, a.d, ni, a.scale, ds, nj,
			gemm.Dense(a.q[a.row(b, a.tq, i0, a.d):], a.ld(a.d), false), beta, dk, a.ld(kv.wk)); err != nil {
			return err
		}
		if a.accumulDQ {
			if err := gemm.Default().SgemmPacked(false, false, ni, a.d, nj, a.scale, ds, nj,
				gemm.Dense(a.k[a.row(b, a.tk, j0, a.d):], a.ld(a.d), false), first(j0), a.dq[a.row(b, a.tq, i0, a.d):], a.ld(a.d)); err != nil {
				return err
			}
		}
	}
	return nil
}

// attnTrio is the fused backward of one attention: the AttentionStats node and the
// AttentionGradQ and AttentionGradKV nodes that read its statistics. Its gradients go
// straight into their nodes' buffers (∂k and ∂v into those of the slices that take the
// AttentionGradKV node's output apart, where they are its only readers) when Prepare
// finds that safe (fuse.go), else into scratch, which those nodes' steps copy out.
type attnTrio struct {
	stats, gradQ, gradKV *tensor.Node
	a                    *attnBwd
	o                    []float32 // the forward's output, for δ
	oInDQ                bool      // o and dq are the same memory
	// lateKV says that ∂k or ∂v is the memory of one of the operands, of the same shape
	// (the scheduler hands an operand's buffer on when the trio's nodes read it last),
	// which the four-row kernels allow: each batch entry reads its rows of the operands
	// and writes its rows of ∂k and ∂v (the same elements' places) only after, from
	// scratch. An entry the tiles redo has them write ∂k and ∂v into spareKV (the
	// AttentionGradKV node's output) and copies the entry's rows out after.
	lateKV  bool
	spareKV kvGrads
}

// findAttnTrios returns, for each AttentionStats node of nodes whose two gradient nodes
// are among nodes too, the trio.
func findAttnTrios(nodes []*tensor.Node) map[*tensor.Node]*attnTrio {
	var trios map[*tensor.Node]*attnTrio
	for _, n := range nodes {
		if n.Op() != tensor.OpAttentionGrad {
			continue
		}
		at := n.Attr().(tensor.AttentionGradAttr)
		if at.Output == tensor.AttentionStats || n.Input(0).DType() != tensor.F32 {
			continue
		}
		st := n.Input(4)
		if st.Op() != tensor.OpAttentionGrad {
			continue
		}
		if sat := st.Attr().(tensor.AttentionGradAttr); sat.Output != tensor.AttentionStats ||
			sat.Causal != at.Causal || sat.Scale != at.Scale || sat.Layout != at.Layout {
			continue
		}
		// Stats reads (q, k, o, gy [, mask]); the gradients (q, k, v, gy, stats [, mask]).
		same := n.Input(0) == st.Input(0) && n.Input(1) == st.Input(1) && n.Input(3) == st.Input(3) &&
			len(n.Inputs()) == len(st.Inputs())+1 && (len(st.Inputs()) == 4 || n.Input(5) == st.Input(4))
		if !same {
			continue
		}
		if trios == nil {
			trios = map[*tensor.Node]*attnTrio{}
		}
		t := trios[st]
		if t == nil {
			t = &attnTrio{stats: st}
			trios[st] = t
		}
		switch {
		case at.Output == tensor.AttentionGradQ && (t.gradKV == nil || t.gradKV.Input(2) == n.Input(2)):
			t.gradQ = n
		case at.Output == tensor.AttentionGradKV && (t.gradQ == nil || t.gradQ.Input(2) == n.Input(2)):
			t.gradKV = n
		}
	}
	for st, t := range trios {
		if t.gradQ == nil || t.gradKV == nil {
			delete(trios, st)
		}
	}
	return trios
}

// prepare binds the trio to its memory: the stats node's output and inputs, the
// gradient nodes' inputs, and where the gradients go: dq, and kv, either the
// AttentionGradKV node's output (one buffer) or ∂k's and ∂v's (two).
func (t *attnTrio) prepare(statsOut, dq []byte, kv [][]byte, statsIn, gradIn [][]byte) {
	t.a = newAttnBwd(t.gradQ, gradIn)
	t.a.out, t.a.stats = f32s(statsOut), f32s(statsOut)
	t.a.dq, t.a.kv = f32s(dq), jointKV(f32s(kv[0]), t.a.d, t.a.dv)
	if len(kv) == 2 {
		t.a.kv = kvGrads{k: f32s(kv[0]), v: f32s(kv[1]), wk: t.a.d, wv: t.a.dv}
	}
	t.a.accumulDQ = true
	t.o = f32s(statsIn[2])
}

// run computes the statistics and both gradients, one task per batch entry. When all
// queries and all keys fit in one tile (a short sequence) the probabilities the
// statistics pass forms stay in the tile for the gradients: one score product and one
// pass of exponentials fewer per entry.
func (t *attnTrio) run(scratch [][]float32, next *atomic.Int64) error {
	a := t.a
	if t.lateKV {
		// The tiles write ∂k and ∂v into spareKV (see lateKV).
		tiles := *a
		tiles.kv = t.spareKV
		a = &tiles
	}
	stats := *a
	stats.v = t.o // statsBlock reads o where v is
	work := 5 * a.tq * a.tk * (a.d + a.dv)
	body := func(s []float32, b int) error { return entryByTiles(a, &stats, s, b) }
	if a.tq >= 1 && a.tq <= attnTile && a.tk >= 1 && a.tk <= attnTile {
		work = 4 * a.tileWork(a.tq, a.tk)
		body = func(s []float32, b int) error {
			if err := stats.statsTile(s, b, 0, true); err != nil {
				return err
			}
			return a.gradKV(s, b, 0, true)
		}
	}
	if a.small16() {
		// An entry that meets a non-finite score is redone by tiles, which write over it
		// and read o again: where dq is o's memory, the entry's rows of o are kept until
		// entry16 succeeds (it writes dq's rows of each group of queries once it has read
		// them).
		tiles := body
		body = func(s []float32, b int) error {
			kept := take(&s, t.keptO())
			t.keepO(kept, b, true)
			if t.entry16(s, b) {
				return nil
			}
			t.keepO(kept, b, false)
			if err := tiles(s, b); err != nil || !t.lateKV {
				return err
			}
			t.a.kv.copyEntry(a.kv, &a.attnOperands, b)
			return nil
		}
	}
	return runTasks(scratch, a.batch, work, next, body)
}

// keptO is how many floats of scratch run needs to keep one entry's rows of o.
func (t *attnTrio) keptO() int {
	if !t.oInDQ || !t.a.small16() {
		return 0
	}
	return t.a.tq * t.a.dv
}

// keepO copies batch entry b's rows of o into kept (save) or back (none where kept is
// empty).
func (t *attnTrio) keepO(kept []float32, b int, save bool) {
	a := t.a
	if len(kept) == 0 {
		return
	}
	for i := range a.tq {
		at, row := a.row(b, a.tq, i, a.dv), kept[i*a.dv:][:a.dv]
		if save {
			copy(row, t.o[at:at+a.dv])
		} else {
			copy(t.o[at:at+a.dv], row)
		}
	}
}

// entryByTiles computes the statistics and the gradients of batch entry b by tiles,
// with a's operands; stats is a reading the forward's output as v.
func entryByTiles(a, stats *attnBwd, s []float32, b int) error {
	for i0 := 0; i0 < a.tq; i0 += attnTile {
		if err := stats.statsBlock(s, b, i0); err != nil {
			return err
		}
	}
	if a.tk == 0 {
		a.clearRows(a.dq, b, a.tq, 0, a.tq, a.d) // no key block writes it
	}
	for j0 := 0; j0 < a.tk; j0 += attnTile {
		if err := a.gradKVBlock(s, b, j0); err != nil {
			return err
		}
	}
	return nil
}
