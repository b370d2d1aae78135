package cpu

import (
	"slices"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// A layer or RMS norm's backward as one kernel. tensor's rule (normGrad) recomputes the
// row statistics and builds up to sixteen nodes: mean, x-mean, its square, their mean, +eps,
// rsqrt, x̂, g = gy·gamma, mean(g·x̂), mean(g), the combination into ∂x and gy·x̂ for
// ∂gamma. As an elementwise group they run block by block, but member by member, each
// row value spread over its row first: about four times PyTorch's time on a
// transformer's 2048×128 rows. normGradStep runs such a group instead as a few vector
// calls per block of rows that stay in L1, each computing exactly what its node does
// (the same vec loops, the Mean nodes' row sums from vec.SumEach), so the bits are the
// group's.
//
// The bias-like gradients that follow, ∂gamma = Σ gy·x̂ and ∂beta = Σ gy over the
// rows, are Sum nodes of their own, each a pass over memory. Where such a Sum reads the
// group's gy·x̂ or its gy, the kernel folds each block's rows into the Sum's partial
// sums while the block is in cache (colSum), in the Sum kernel's blocks and order, so
// they too keep their bits. gy·x̂ read by its sum alone then stays in scratch: a pass
// of writes (a fifth of the kernel's memory traffic) saved.

// normGradNodes are the roles of a matched norm backward's nodes.
type normGradNodes struct {
	x, gy, gamma, eps *tensor.Node // outside the group (gamma nil without one)
	dx, dgp           *tensor.Node // the values read outside (dgp = gy·x̂, nil without gamma)
	res               *tensor.Node // a member adding ∂x to a value from outside, or nil
	centred           bool
}

// matchNormGrad returns the roles of group g's nodes when g is exactly a norm's
// backward as normGrad builds it, with only ∂x and gy·x̂ read outside.
func (f *ewFuser) matchNormGrad(g *ewGroup) (normGradNodes, bool) {
	var r normGradNodes
	if g.k == 0 || len(g.members) < 10 || len(g.members) > 17 {
		return r, false
	}
	in := make(map[int]bool, len(g.members))
	for _, m := range g.members {
		in[m] = true
	}
	used := map[*tensor.Node]bool{}
	red := g.reduced()
	// is reports whether n is a member with op of the full (or the row) shape, and
	// marks it used.
	is := func(n *tensor.Node, op tensor.Op, rows bool) bool {
		i, ok := f.index[n]
		want := g.shape
		if rows {
			want = red
		}
		if !ok || !in[i] || n.Op() != op || !n.Shape().Equal(want) {
			return false
		}
		used[n] = true
		return true
	}
	full := func(n *tensor.Node) bool {
		i, ok := f.index[n]
		return !(ok && in[i]) && n.DType() == tensor.F32 && n.Shape().Equal(g.shape)
	}
	// pair returns the inputs of binary n as (the one ok accepts, the other).
	pair := func(n *tensor.Node, ok func(*tensor.Node) bool) (*tensor.Node, *tensor.Node) {
		switch {
		case ok(n.Input(0)):
			return n.Input(0), n.Input(1)
		case ok(n.Input(1)):
			return n.Input(1), n.Input(0)
		}
		return nil, nil
	}
	// The rsqrt of the variance: Rsqrt(Mean(Square(xc)) + eps).
	var rstd *tensor.Node
	for _, m := range g.members {
		if n := f.nodes[m]; n.Op() == tensor.OpRsqrt {
			rstd = n
		}
	}
	if rstd == nil || !is(rstd, tensor.OpRsqrt, true) || !is(rstd.Input(0), tensor.OpAdd, true) {
		return r, false
	}
	v, eps := pair(rstd.Input(0), func(n *tensor.Node) bool { return is(n, tensor.OpMean, true) })
	if v == nil || !is(v.Input(0), tensor.OpSquare, false) {
		return r, false
	}
	if _, ok := scalarConst(eps); !ok {
		return r, false
	}
	r.eps = eps
	xc := v.Input(0).Input(0)
	r.x, r.centred = xc, false
	if is(xc, tensor.OpSub, false) {
		if !is(xc.Input(1), tensor.OpMean, true) || xc.Input(1).Input(0) != xc.Input(0) {
			return r, false
		}
		r.x, r.centred = xc.Input(0), true
	}
	if !full(r.x) {
		return r, false
	}
	// ∂x = rstd·(g - inner), inner = x̂·mean(g·x̂) [+ mean(g)].
	for _, m := range slices.Backward(g.members) {
		if n := f.nodes[m]; n.Op() == tensor.OpMul && (n.Input(0) == rstd || n.Input(1) == rstd) && n.Shape().Equal(g.shape) {
			r.dx = n
			break
		}
	}
	if r.dx == nil || !is(r.dx, tensor.OpMul, false) {
		return r, false
	}
	_, u := pair(r.dx, func(n *tensor.Node) bool { return n == rstd })
	if !is(u, tensor.OpSub, false) {
		return r, false
	}
	gg, inner := u.Input(0), u.Input(1)
	if r.centred {
		if !is(inner, tensor.OpAdd, false) {
			return r, false
		}
		var m2 *tensor.Node
		if m2, inner = pair(inner, func(n *tensor.Node) bool { return is(n, tensor.OpMean, true) && n.Input(0) == gg }); m2 == nil {
			return r, false
		}
	}
	if !is(inner, tensor.OpMul, false) {
		return r, false
	}
	m1, xhat := pair(inner, func(n *tensor.Node) bool { return is(n, tensor.OpMean, true) })
	if m1 == nil || !is(xhat, tensor.OpMul, false) {
		return r, false
	}
	if a, b := xhat.Input(0), xhat.Input(1); !(a == xc && b == rstd || a == rstd && b == xc) {
		return r, false
	}
	p := m1.Input(0)
	if !is(p, tensor.OpMul, false) || !(p.Input(0) == gg && p.Input(1) == xhat || p.Input(0) == xhat && p.Input(1) == gg) {
		return r, false
	}
	// g is gy·gamma (gamma a row of the trailing axes) or gy itself.
	r.gy = gg
	if is(gg, tensor.OpMul, false) {
		r.gy, r.gamma = pair(gg, full)
		if r.gy == nil || !isRowOf(r.gamma, g) {
			return r, false
		}
		for _, m := range g.members {
			n := f.nodes[m]
			if n.Op() == tensor.OpMul && n != gg && n.Shape().Equal(g.shape) &&
				(n.Input(0) == r.gy && n.Input(1) == xhat || n.Input(0) == xhat && n.Input(1) == r.gy) {
				r.dgp = n
				used[n] = true
			}
		}
	}
	// The residual's gradient added to ∂x may have joined the group.
	for _, m := range g.members {
		n := f.nodes[m]
		if !used[n] && n.Op() == tensor.OpAdd && n.Shape().Equal(g.shape) && n.Input(0) != n.Input(1) &&
			(n.Input(0) == r.dx && full(n.Input(1)) || n.Input(1) == r.dx && full(n.Input(0))) {
			r.res, used[n] = n, true
		}
	}
	if !full(r.gy) || len(used) != len(g.members) {
		return r, false
	}
	for _, m := range g.members {
		n := f.nodes[m]
		if (n != r.dx || r.res != nil) && n != r.dgp && n != r.res && f.escaping(m, in) {
			return r, false
		}
	}
	return r, true
}

// takeNormSums takes the column sums of src (data: its values) after the norm kernel at
// last, over rows of row elements, whose outputs may be written at last's place given
// busy (to which it adds them).
func (f *ewFuser) takeNormSums(src *tensor.Node, data []float32, last, row, rows int, busy *[][]byte,
	steps map[*tensor.Node]func() error) []*colSum {
	if src == nil || !absorbLater {
		return nil
	}
	var sums []*colSum
	for _, u := range f.users[f.index[src]] {
		s := f.nodes[u]
		if u < last || !isColumnSum(s, row) {
			continue
		}
		if _, ok := steps[s]; ok || !writableEarly(f.mem[u].out, last, u, f.mem, *busy...) {
			continue
		}
		c := newColSum(data, f32s(f.mem[u].out), row, rows)
		c.at = u
		sums = append(sums, c)
		*busy = append(*busy, f.mem[u].out)
		steps[s] = nil
		if f.owners != nil {
			f.owners[s] = f.nodes[last]
		}
	}
	return sums
}

// isRowOf reports whether x is an F32 row of group g's folded trailing axes (leading
// axes of size 1 aside), broadcast over its rows.
func isRowOf(x *tensor.Node, g *ewGroup) bool {
	if x == nil || x.DType() != tensor.F32 {
		return false
	}
	s := x.Shape()
	for len(s) > 0 && s[0] == 1 {
		s = s[1:]
	}
	return len(s) <= g.k && s.Equal(g.shape[len(g.shape)-len(s):]) && s.Size() == g.shape[len(g.shape)-g.k:].Size()
}

// normGradKernel is a prepared norm backward over rows of row elements.
type normGradKernel struct {
	row, rows   int
	centred     bool
	eps         float32
	x, gy, gam  []float32
	dx, dgp     []float32 // dgp nil when not computed
	dgpScratch  bool      // dgp goes to scratch: its only readers are the sums in mid
	addend      []float32 // added to ∂x (a residual connection's gradient), or nil
	before      []*colSum // column sums of gy, folded before each block is computed
	mid         []*colSum // column sums of gy·x̂, folded once it is, before ∂x
	sums        []*colSum // column sums of the result, folded after each block
	blockRows   int       // rows per L1 block
	bigRows     int       // rows per work item (the column sums' blocks)
	chunks      int
	scratch     []normScratch
	chunkBodyFn func(lo, hi int)
}

// normScratch is a worker's scratch: four blocks of values (five with dgpScratch) and the
// row statistics.
type normScratch struct {
	f    []float32
	sums []float64
}

// normGradStep returns the step of group g when g is a norm's backward, else nil. It
// also takes the Sum nodes after the group that fold gy or gy·x̂ over all rows (the
// gradients of beta and gamma), setting their steps to nil in steps.
func (f *ewFuser) normGradStep(g *ewGroup, steps map[*tensor.Node]func() error) func() error {
	r, ok := f.matchNormGrad(g)
	if !ok {
		return nil
	}
	last := g.members[len(g.members)-1]
	k := &normGradKernel{centred: r.centred}
	k.row = g.shape[len(g.shape)-g.k:].Size()
	k.rows = g.shape.Size() / k.row
	k.eps, _ = scalarConst(r.eps)
	operand := func(n, of *tensor.Node) []float32 {
		i := f.index[of]
		return f32s(f.mem[i].in[slices.Index(of.Inputs(), n)])
	}
	xc := r.x // the reader of x in the group: Sub(x, mean) or Square(x)
	for _, m := range g.members {
		if n := f.nodes[m]; slices.Contains(n.Inputs(), r.x) {
			xc = n
			break
		}
	}
	k.x = operand(r.x, xc)
	var gyReader *tensor.Node
	for _, m := range g.members {
		if n := f.nodes[m]; slices.Contains(n.Inputs(), r.gy) {
			gyReader = n
			break
		}
	}
	k.gy = operand(r.gy, gyReader)
	if r.gamma != nil {
		k.gam = operand(r.gamma, gyReader)
	}
	k.dx = f32s(f.mem[f.index[r.dx]].out)
	if r.dgp != nil {
		k.dgp = f32s(f.mem[f.index[r.dgp]].out)
	}
	k.blockRows = max(1, fuseBlock/k.row)
	k.bigRows = splitRows(k.row, k.rows)
	var ins [][]byte // what the kernel reads
	for _, m := range g.members {
		ins = append(ins, f.mem[m].in...)
	}
	// The column sums of gy and gy·x̂, written early at the group's place.
	busy := append([][]byte{f.mem[f.index[r.dx]].out}, ins...)
	if r.dgp != nil {
		busy = append(busy, f.mem[f.index[r.dgp]].out)
	}
	k.before = f.takeNormSums(r.gy, k.gy, last, k.row, k.rows, &busy, steps)
	k.mid = f.takeNormSums(r.dgp, k.dgp, last, k.row, k.rows, &busy, steps)
	k.dgpScratch = r.dgp != nil && f.onlyFolded(r.dgp, k.mid)
	// The residual's add; the sums just taken read their data inside the kernel, in an
	// order that lets the add's output take gy's or gy·x̂'s memory (gy's sum folds a
	// block before the block is computed, gy·x̂'s before ∂x is).
	res := r.res
	if res == nil {
		// Set aside the memory entries of the later nodes whose work is done by now
		// (these sums, sums folded by earlier steps): they no longer read there.
		saved := map[int]nodeMem{}
		for u := last + 1; u < len(f.nodes) && u <= last+maxFuseSpan; u++ {
			o, ok := f.owners[f.nodes[u]]
			if step, took := steps[f.nodes[u]]; took && step == nil && ok && f.index[o] <= last {
				saved[u], f.mem[u] = f.mem[u], nodeMem{out: f.mem[u].out}
			}
		}
		resBusy := [][]byte{}
		for _, b := range busy[1:] { // not ∂x's memory: ∂x is then never written
			resBusy = append(resBusy, b)
		}
		reused := []reusable{{f.mem[f.index[gyReader]].in[slices.Index(gyReader.Inputs(), r.gy)], lastAt(k.before)}}
		if r.dgp != nil {
			reused = append(reused, reusable{f.mem[f.index[r.dgp]].out, lastAt(k.mid)})
		}
		res = f.takeResidual(r.dx, last, resBusy, reused, steps)
		for u, m := range saved {
			f.mem[u] = m
		}
	}
	if res != nil {
		ir := f.index[res]
		k.dx, k.addend = f32s(f.mem[ir].out), f32s(f.mem[ir].in[1-slices.Index(res.Inputs(), r.dx)])
		busy = append(busy, f.mem[ir].out)
		k.sums = append(k.sums, f.takeNormSums(res, k.dx, last, k.row, k.rows, &busy, steps)...)
	}
	nb := (k.rows + k.bigRows - 1) / k.bigRows
	k.chunks = max(1, min(parallel.Workers(), nb))
	k.scratch = make([]normScratch, k.chunks)
	for c := range k.scratch {
		blocks := 4
		if k.dgpScratch {
			blocks = 5
		}
		k.scratch[c] = normScratch{make([]float32, blocks*k.blockRows*k.row+5*k.blockRows), make([]float64, 2*k.blockRows)}
	}
	k.chunkBodyFn = func(lo, hi int) {
		for c := lo; c < hi; c++ {
			k.chunk(c, nb)
		}
	}
	return k.run
}

func (k *normGradKernel) run() error {
	if k.chunks == 1 {
		k.chunk(0, (k.rows+k.bigRows-1)/k.bigRows)
	} else {
		parallel.For(k.chunks, 1, k.chunkBodyFn)
	}
	for _, cs := range [][]*colSum{k.before, k.mid, k.sums} {
		for _, c := range cs {
			c.merge()
		}
	}
	return nil
}

// chunk computes chunk c of the nb work items of bigRows rows, block by block.
func (k *normGradKernel) chunk(c, nb int) {
	s := k.scratch[c]
	for b := c * nb / k.chunks; b < (c+1)*nb/k.chunks; b++ {
		end := min((b+1)*k.bigRows, k.rows)
		for r0 := b * k.bigRows; r0 < end; r0 += k.blockRows {
			r1 := min(r0+k.blockRows, end)
			for _, cs := range k.before {
				cs.fold(r0, r1)
			}
			k.block(s, r0, r1)
			for _, cs := range k.sums {
				cs.fold(r0, r1)
			}
		}
	}
}

// block computes rows [r0, r1) with the worker's scratch w: the nodes' operations in
// a few passes over the block (package vec's norm passes, each operation rounded as
// its node rounds it) and their row means from vec.SumEach's sums, as the Mean nodes
// sum: the passes that write a Mean's input add its rows as they go.
func (k *normGradKernel) block(w normScratch, r0, r1 int) {
	n, rows := k.row, r1-r0
	cnt := rows * n
	x, gy := k.x[r0*n:][:cnt], k.gy[r0*n:][:cnt]
	s := w.f
	xc, xhat, g, t := s[:cnt], s[cnt:2*cnt], s[2*cnt:3*cnt], s[3*cnt:4*cnt]
	stats := s[4*cnt:][:5*rows]
	mean, v, rstd, m1, m2 := stats[:rows], stats[rows:2*rows], stats[2*rows:3*rows], stats[3*rows:4*rows], stats[4*rows:5*rows]
	sums := w.sums[:2*rows]
	// fin sets d to the means of the row sums in sums, as the Mean nodes finish them
	// (direct calls, which the compiler inlines: a call per row through the reducer's
	// function value cost as much as a pass).
	fin := func(d []float32, sums []float64) {
		for r, a := range sums {
			d[r] = float32(meanOf(a, n))
		}
	}
	if k.centred {
		vec.SumEach(sums[:rows], x, n)
		fin(mean, sums[:rows])
		vec.NormCentre(xc, t, x, mean, n, sums[:rows])
	} else {
		xc = x
		vec.Arith(vec.Mul, t, x, 1, x, 1)
		vec.SumEach(sums[:rows], t, n)
	}
	fin(v, sums[:rows])
	for r := range v {
		v[r] += k.eps
		rstd[r] = float32(rsqrt64(float64(v[r]))) // Rsqrt's value, as fin's means
	}
	if k.gam == nil {
		g = gy
	}
	var dgp []float32
	switch {
	case k.dgpScratch:
		dgp = s[4*cnt+5*rows:][:cnt]
	case k.dgp != nil:
		dgp = k.dgp[r0*n:][:cnt]
	}
	// The row sums of p (into m1) and of g (into m2) as the pass writes them.
	vec.NormGradMid(xhat, t, dgp, g, xc, gy, k.gam, rstd, n, sums)
	for _, cs := range k.mid {
		cs.foldRows(dgp, r0, r1)
	}
	fin(m1, sums[:rows])
	if k.centred {
		fin(m2, sums[rows:])
	} else {
		m2 = nil
	}
	var add []float32
	if k.addend != nil {
		add = k.addend[r0*n:][:cnt]
	}
	vec.NormGradOut(k.dx[r0*n:][:cnt], g, xhat, m1, m2, rstd, add, n)
}

// onlyFolded reports whether the value of n, computed by the norm kernel, is read by
// the sums it folds (sums) alone, so it need not be written where the nodes would read
// it.
func (f *ewFuser) onlyFolded(n *tensor.Node, sums []*colSum) bool {
	if f.escapes(n) || len(sums) == 0 {
		return false
	}
	for _, u := range f.users[f.index[n]] {
		if !slices.ContainsFunc(sums, func(c *colSum) bool { return c.at == u }) {
			return false
		}
	}
	return true
}

// reusable is memory the kernel reads block by block before it writes the block, and
// the index of the last node whose reads of it the kernel does (0: none).
type reusable struct {
	mem    []byte
	readTo int
}

// lastAt returns the largest index of the Sum nodes of sums (0 for none).
func lastAt(sums []*colSum) int {
	at := 0
	for _, c := range sums {
		at = max(at, c.at)
	}
	return at
}

// takeResidual returns the Add that is the only reader of ∂x (at the group's last
// member, last) when the kernel may do it: ∂x plus a full-shape F32 value computed
// before the group and not overwritten until the Add (the gradient that a residual
// connection carries past the norm), whose output may be written at last's place
// (busy: the memory the kernel reads and writes). It takes the Add from steps.
func (f *ewFuser) takeResidual(dx *tensor.Node, last int, busy [][]byte, reused []reusable, steps map[*tensor.Node]func() error) *tensor.Node {
	id := f.index[dx]
	if !absorbLater || len(f.users[id]) != 1 || f.escapes(dx) {
		return nil
	}
	ia := f.users[id][0]
	add := f.nodes[ia]
	if _, taken := steps[add]; taken || add.Op() != tensor.OpAdd || ia < last || !add.Shape().Equal(dx.Shape()) ||
		add.DType() != tensor.F32 || add.Input(0) == add.Input(1) {
		return nil
	}
	j := 1 - slices.Index(add.Inputs(), dx)
	other := add.Input(j)
	if io, ok := f.index[other]; !ok || io > last || !other.Shape().Equal(dx.Shape()) || other.DType() != tensor.F32 {
		return nil
	}
	out, b := f.mem[ia].out, f.mem[ia].in[j]
	// The sum may take the addend's memory or one of reused (each read block by block
	// before the block is written) whose taken sums all came before the Add, nothing
	// else the kernel touches.
	identical := func(a []byte) bool { return sameMemory(out, a) && len(out) == len(a) }
	free := identical(b)
	for _, r := range reused {
		if identical(r.mem) {
			free = r.readTo < ia
			break
		}
	}
	var others [][]byte
	for _, m := range busy {
		if !identical(m) || !free {
			others = append(others, m)
		}
	}
	if written(f.nodes, b, last, ia, f.mem) || overlap(out, b) && !identical(b) ||
		!writableEarly(out, last, ia, f.mem, others...) {
		return nil
	}
	steps[add] = nil
	if f.owners != nil {
		f.owners[add] = f.nodes[last]
	}
	return add
}
