package cpu

import (
	"slices"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Elementwise fusion. A group is a set of F32 elementwise nodes (unary ops, arithmetic
// with broadcast operands, comparisons, Where) and row reductions (Sum or Mean over
// trailing axes, keeping them) of one shape S, or of S with its reduced trailing axes
// at 1. The group runs as one step at the place of its last member, walking S in
// blocks of whole rows that stay in cache: each member computes its block from its
// operands' blocks with the same loops as its own kernel, so the results are those of
// the unfused nodes, bit for bit. Only members whose values are read outside the
// group (by another node, a later segment or a fetch) are written to their buffers;
// the others live in per-worker scratch. A layer norm's backward (mean, sub, square,
// mean, rsqrt, the products) or GELU's (ten elementwise nodes) become one pass.
//
// Moving the work of a member to the group's place is safe when no node in between
// (other than members) writes memory a member reads, reads or writes a member's
// output, or reads a member's value at all.

// fuseBlock is the number of full-shape elements a block aims at: a few such blocks
// (the live members and operand copies) stay within L1 and L2.
const fuseBlock = 2048

// maxFuseRow bounds the row a reduction member folds (a block holds at least a row),
// and keeps the row on the reduction kernel's unsplit path, so the sums are the same.
const maxFuseRow = 1 << 13

// maxFuseSpan bounds the number of nodes between a group's first and last member,
// which bounds the cost of the safety checks.
const maxFuseSpan = 256

// ewKind is what a node does as a group member.
type ewKind uint8

const (
	ewNone ewKind = iota
	ewUnary
	ewBinary
	ewCompare
	ewWhere
	ewReduce
)

var compareOps = map[tensor.Op]bool{tensor.OpEqual: true, tensor.OpNotEqual: true, tensor.OpLess: true,
	tensor.OpLessEqual: true, tensor.OpGreater: true, tensor.OpGreaterEqual: true}

// elementwiseKind classifies n, and for a reduction returns the number of trailing
// axes it reduces.
func elementwiseKind(n *tensor.Node) (ewKind, int) {
	if len(n.Inputs()) == 0 || n.Shape().Size() == 0 {
		return ewNone, 0
	}
	for _, x := range n.Inputs() {
		if x.Shape().Size() == 0 {
			return ewNone, 0
		}
	}
	op := n.Op()
	if op == tensor.OpWhere {
		if n.DType() == tensor.F32 && n.Input(0).DType() == tensor.Bool && n.Input(1).DType() == tensor.F32 &&
			n.Input(2).DType() == tensor.F32 {
			return ewWhere, 0
		}
		return ewNone, 0
	}
	if n.Input(0).DType() != tensor.F32 {
		return ewNone, 0
	}
	switch {
	case f32UnaryOps[op] != nil && n.DType() == tensor.F32:
		return ewUnary, 0
	case f32Binary[op] != nil && n.DType() == tensor.F32 && n.Input(1).DType() == tensor.F32:
		return ewBinary, 0
	case compareOps[op] && n.Input(1).DType() == tensor.F32:
		return ewCompare, 0
	case op == tensor.OpSum || op == tensor.OpMean:
		at := n.Attr().(tensor.ReduceAttr)
		x := n.Input(0).Shape()
		k := len(at.Axes)
		if !at.KeepDims || k == 0 || x[len(x)-k:].Size() > maxFuseRow {
			return ewNone, 0
		}
		for _, a := range at.Axes {
			if a < len(x)-k {
				return ewNone, 0
			}
		}
		return ewReduce, k
	}
	return ewNone, 0
}

// ewGroup is a candidate group: its members (segment indices, ascending), its full
// shape and the number of trailing axes its reductions fold (0 without reductions).
type ewGroup struct {
	members []int
	shape   tensor.Shape
	k       int
}

// reduced is the group's shape with the folded axes at 1.
func (g *ewGroup) reduced() tensor.Shape {
	s := slices.Clone(g.shape)
	for i := len(s) - g.k; i < len(s); i++ {
		s[i] = 1
	}
	return s
}

// merge returns the union of g and h when their shapes fit together, else nil.
func (g *ewGroup) merge(h *ewGroup) *ewGroup {
	if h.k > 0 && g.k == 0 {
		g, h = h, g
	}
	switch {
	case h.k > 0 && (h.k != g.k || !h.shape.Equal(g.shape)):
		return nil
	case h.k == 0 && g.k == 0 && !h.shape.Equal(g.shape):
		return nil
	case h.k == 0 && g.k > 0 && !h.shape.Equal(g.shape) && !h.shape.Equal(g.reduced()):
		return nil
	}
	m := &ewGroup{members: append(slices.Clone(g.members), h.members...), shape: g.shape, k: g.k}
	slices.Sort(m.members)
	return m
}

// ewFuser finds the groups of a segment.
type ewFuser struct {
	nodes   []*tensor.Node
	mem     []nodeMem
	index   map[*tensor.Node]int
	users   [][]int // segment indices of each node's readers
	escapes func(*tensor.Node) bool
	owners  map[*tensor.Node]*tensor.Node // see fuse
}

// groups returns the groups worth fusing (two members or more), skipping nodes that
// already have steps.
func (f *ewFuser) groups(taken map[*tensor.Node]func() error) []*ewGroup {
	of := map[int]*ewGroup{}
	for i, n := range f.nodes {
		if _, ok := taken[n]; ok {
			continue
		}
		kind, k := elementwiseKind(n)
		if kind == ewNone {
			continue
		}
		g := &ewGroup{members: []int{i}, shape: n.Shape(), k: k}
		if kind == ewReduce {
			g.shape = n.Input(0).Shape()
		}
		for _, x := range n.Inputs() {
			xi, ok := f.index[x]
			if !ok || of[xi] == nil || slices.Contains(g.members, xi) {
				continue
			}
			if m := g.merge(of[xi]); m != nil && f.safe(m) {
				g = m
			}
		}
		for _, m := range g.members {
			of[m] = g
		}
	}
	var out []*ewGroup
	for i := range f.nodes {
		if g := of[i]; g != nil && len(g.members) > 1 && g.members[len(g.members)-1] == i {
			out = append(out, g)
		}
	}
	return out
}

// escaping reports whether member m's value is read outside group g.
func (f *ewFuser) escaping(m int, in map[int]bool) bool {
	if f.escapes(f.nodes[m]) {
		return true
	}
	for _, u := range f.users[m] {
		if !in[u] {
			return true
		}
	}
	return false
}

// safe reports whether g may run as one step at its last member's place (see the
// file comment), and that every member has a shape of the group.
func (f *ewFuser) safe(g *ewGroup) bool {
	last := g.members[len(g.members)-1]
	if last-g.members[0] > maxFuseSpan {
		return false
	}
	in := make(map[int]bool, len(g.members))
	for _, m := range g.members {
		in[m] = true
	}
	red := g.reduced()
	type read struct {
		at       int
		b        []byte
		identity bool
	}
	var reads []read
	for _, m := range g.members {
		n := f.nodes[m]
		level := n.Shape()
		if kind, _ := elementwiseKind(n); kind == ewReduce {
			level = n.Input(0).Shape()
			if !level.Equal(g.shape) || !n.Shape().Equal(red) {
				return false
			}
		} else if !level.Equal(g.shape) && !level.Equal(red) {
			return false
		}
		for j, x := range n.Inputs() {
			if xi, ok := f.index[x]; ok && in[xi] {
				continue
			}
			b := f.mem[m].in[j]
			for i := m + 1; i < last; i++ {
				if !in[i] && overlap(b, f.mem[i].out) {
					return false
				}
			}
			reads = append(reads, read{m, b, x.Shape().Size() == level.Size()})
		}
	}
	for _, m := range g.members {
		if !f.escaping(m, in) {
			continue
		}
		for _, u := range f.users[m] {
			if !in[u] && u < last {
				return false
			}
		}
		out := f.mem[m].out
		for i := m + 1; i < last; i++ {
			if in[i] {
				continue
			}
			if overlap(out, f.mem[i].out) || slices.ContainsFunc(f.mem[i].in, func(b []byte) bool { return overlap(out, b) }) {
				return false
			}
		}
		// A read of the same memory is safe only where the block reads exactly what it
		// then overwrites, before it does (the scheduler's reuse after a last reader).
		for _, r := range reads {
			if overlap(out, r.b) && !(r.identity && r.at <= m && sameMemory(out, r.b) && len(out) == len(r.b)) {
				return false
			}
		}
	}
	return true
}

// ewOperand is where a member reads one input within a block.
type ewOperand struct {
	slot   int // >= 0: the member whose values it is (a member index in the group)
	expand bool
	src    []byte // an input from outside the group
	esz    int
	mode   uint8 // operandDirect, operandScalar or operandGather
	walk   *bplan
}

const (
	operandDirect uint8 = iota
	operandScalar
	operandGather
)

// ewMember is one member's work on a block.
type ewMember struct {
	kind    ewKind
	full    bool // works on the full shape's elements, else on the rows'
	unary   func(d, x []float32)
	binary  binaryLoop[float32, float32]
	compare binaryLoop[float32, uint8]
	red     f32Reducer
	sums    bool // a Sum or Mean: its rows fold in one vec.SumEach call per block
	in      []ewOperand
	esz     int
	dst     []byte // the output buffer when the value escapes the group
	slot    int    // the scratch slot of the value otherwise
	free    []int  // slots free after this member
}

// ewProgram is a prepared group.
type ewProgram struct {
	members   []ewMember
	row       int // elements per row
	rows      int // rows of the full shape
	blockRows int
	slotBytes int
	nslots    int // member slots; three operand slots follow them
	scratch   [][]byte
	chunks    int
	chunkBody func(lo, hi int)   // chunks [lo, hi), for parallel.For
	sums      *colSums           // column sums of members folded block by block, or nil
	produce   []func(e0, e1 int) // per chunk: the blocks of elements [e0, e1) (with sums)
}

// build prepares group g's step.
func (f *ewFuser) build(g *ewGroup, steps map[*tensor.Node]func() error) func() error {
	in := map[int]bool{}
	pos := map[int]int{}
	for p, m := range g.members {
		in[m], pos[m] = true, p
	}
	p := &ewProgram{row: 1}
	if g.k > 0 {
		p.row = g.shape[len(g.shape)-g.k:].Size()
	} else if f.readByColumnSum(g) {
		// Rows of the last axis, which the sums fold whole (the members, all of the
		// full shape, compute the same either way).
		p.row = g.shape[len(g.shape)-1]
	}
	p.rows = g.shape.Size() / p.row
	p.blockRows = blockRows(p.row)
	p.slotBytes = 4 * p.blockRows * p.row
	lastUse := map[int]int{}
	for p, m := range g.members {
		for _, x := range f.nodes[m].Inputs() {
			if xi, ok := f.index[x]; ok && in[xi] {
				lastUse[xi] = p
			}
		}
	}
	var free []int
	p.members = make([]ewMember, len(g.members))
	for q, m := range g.members {
		n := f.nodes[m]
		kind, _ := elementwiseKind(n)
		em := &p.members[q]
		em.kind, em.esz, em.full = kind, n.DType().Size(), n.Shape().Size() == g.shape.Size()
		level := n.Shape()
		switch kind {
		case ewUnary:
			em.unary = f32UnaryOps[n.Op()](n.Attr())
		case ewBinary:
			em.binary = f32Binary[n.Op()]
		case ewCompare:
			em.compare = compareF32(n.Op())
		case ewReduce:
			em.red = f32Reducers[n.Op()]
			em.sums = n.Op() == tensor.OpSum || n.Op() == tensor.OpMean
			level = n.Input(0).Shape()
		}
		for j, x := range n.Inputs() {
			op := ewOperand{slot: -1, esz: x.DType().Size()}
			if xi, ok := f.index[x]; ok && in[xi] {
				op.slot = pos[xi]
				op.expand = x.Shape().Size() != level.Size()
			} else {
				op.src = f.mem[m].in[j]
				switch {
				case x.Shape().Size() == level.Size():
					op.mode = operandDirect
				case x.Shape().Size() == 1:
					op.mode = operandScalar
				default:
					op.mode = operandGather
					// newWalk only fails past maxRank merged axes, which a shape that
					// broadcasts to a kernel-supported one never reaches.
					op.walk, _ = newWalk(level, [][]int{broadcastStrides(level, x.Shape())})
				}
			}
			em.in = append(em.in, op)
		}
		em.slot = -1
		if f.escaping(m, in) {
			em.dst = f.mem[m].out
		} else {
			if len(free) > 0 {
				em.slot, free = free[len(free)-1], free[:len(free)-1]
			} else {
				em.slot = p.nslots
				p.nslots++
			}
		}
		for xi, lu := range lastUse {
			if lu == q && p.members[pos[xi]].slot >= 0 && !slices.Contains(em.free, p.members[pos[xi]].slot) {
				em.free = append(em.free, p.members[pos[xi]].slot)
			}
		}
		free = append(free, em.free...)
	}
	blocks := (p.rows + p.blockRows - 1) / p.blockRows
	work := g.shape.Size() * len(g.members)
	p.chunks = max(1, min(parallel.Workers(), blocks, work/(4*elemGrain)))
	if g.k == 0 && p.row > 1 {
		// Bias gradients of escaping members (ReLU's backward), folded as written.
		var srcs []*tensor.Node
		var busy [][]byte
		last := g.members[len(g.members)-1]
		for q, m := range g.members {
			if p.members[q].dst != nil && p.members[q].full {
				srcs = append(srcs, f.nodes[m])
			}
			busy = append(append(busy, f.mem[m].out), f.mem[m].in...)
		}
		if p.sums = f.takeColumnSums(last, srcs, g.shape, p.blockRows*p.row, busy, steps); p.sums != nil {
			p.chunks = max(1, min(parallel.Workers(), p.sums.items()))
		}
	}
	p.scratch = make([][]byte, p.chunks) // one per worker that runs
	for w := range p.scratch {
		p.scratch[w] = alignedBytes(p.sumsAt() + 8*p.blockRows)
	}
	if p.sums != nil {
		p.produce = make([]func(e0, e1 int), p.chunks)
		for c := range p.produce {
			scratch := p.scratch[c]
			p.produce[c] = func(e0, e1 int) { p.rowBlock(scratch, e0/p.row, e1/p.row) }
		}
	}
	p.chunkBody = func(lo, hi int) {
		for c := lo; c < hi; c++ {
			p.chunk(c)
		}
	}
	return p.run
}

// blockRows is the number of rows of a block: about fuseBlock elements, in whole
// vectors of 16 where rows allow, so that package vec's functions run whole vectors
// and pad a tail only at the end of the tensor (the bits are the same either way).
func blockRows(row int) int {
	unit := vecUnit / gcd(row, vecUnit)
	if r := fuseBlock / row; r > unit {
		return r - r%unit
	}
	return unit
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func (p *ewProgram) run() error {
	if p.chunks == 1 {
		p.chunk(0)
		if p.sums != nil {
			p.sums.merge()
		}
		return nil
	}
	// For, not Run: a worker that is slow to start (parked between ops, which waking
	// through the Go scheduler costs microseconds per worker on a 16-core host) finds
	// its chunk done by the others rather than holding up the step. Each chunk has its
	// scratch, and one goroutine makes it.
	parallel.For(p.chunks, 1, p.chunkBody)
	if p.sums != nil {
		p.sums.merge()
	}
	return nil
}

// chunk computes chunk c of the group's blocks, with its own scratch.
func (p *ewProgram) chunk(c int) {
	if p.sums != nil {
		n := p.sums.items()
		for it := c * n / p.chunks; it < (c+1)*n/p.chunks; it++ {
			p.sums.item(it, p.blockRows*p.row, p.produce[c])
		}
		return
	}
	blocks := (p.rows + p.blockRows - 1) / p.blockRows
	p.blocks(p.scratch[c], c*blocks/p.chunks, (c+1)*blocks/p.chunks)
}

// blocks computes blocks [lo, hi) with the given scratch.
func (p *ewProgram) blocks(scratch []byte, lo, hi int) {
	for b := lo; b < hi; b++ {
		p.rowBlock(scratch, b*p.blockRows, min((b+1)*p.blockRows, p.rows))
	}
}

// rowBlock computes rows [r0, r1) (at most blockRows) with the given scratch.
func (p *ewProgram) rowBlock(scratch []byte, r0, r1 int) {
	for q := range p.members {
		m := &p.members[q]
		var ops [3][]byte
		var st [3]int
		perRow, runs := false, -1
		for j := range m.in {
			ops[j], st[j] = p.operand(scratch, m, j, r0, r1)
			perRow = perRow || st[j] == -1
			if st[j] == -2 {
				runs = j
			}
		}
		d := p.value(scratch, q, r0, r1)
		if runs >= 0 {
			p.applyRuns(scratch, m, d, ops, st, runs, r0)
			continue
		}
		if !perRow {
			p.apply(scratch, m, d, ops, st)
			continue
		}
		// Row values read along full rows: one call per row, reading the row's
		// value with stride 0.
		var ro [3][]byte
		var rs [3]int
		for r := 0; r < r1-r0; r++ {
			for j, o := range m.in {
				switch st[j] {
				case -1:
					ro[j], rs[j] = ops[j][r*o.esz:(r+1)*o.esz], 0
				case 0:
					ro[j], rs[j] = ops[j], 0
				default:
					ro[j], rs[j] = ops[j][r*p.row*o.esz:(r+1)*p.row*o.esz], 1
				}
			}
			p.apply(scratch, m, d[r*p.row*m.esz:(r+1)*p.row*m.esz], ro, rs)
		}
	}
}

// value returns the bytes of member q's values in rows [r0, r1).
func (p *ewProgram) value(scratch []byte, q, r0, r1 int) []byte {
	m := &p.members[q]
	off, cnt := r0, r1-r0
	if m.full {
		off, cnt = r0*p.row, (r1-r0)*p.row
	}
	if m.dst != nil {
		return m.dst[off*m.esz : (off+cnt)*m.esz]
	}
	return scratch[m.slot*p.slotBytes:][:cnt*m.esz]
}

// apply runs member m's loop: d from operands ops with strides st (0 or 1), with the
// worker's scratch for a reduction's row sums.
func (p *ewProgram) apply(scratch []byte, m *ewMember, d []byte, ops [3][]byte, st [3]int) {
	switch m.kind {
	case ewUnary:
		m.unary(f32s(d), f32s(ops[0]))
	case ewBinary:
		m.binary(f32s(d), f32s(ops[0]), st[0], f32s(ops[1]), st[1])
	case ewCompare:
		m.compare(d, f32s(ops[0]), st[0], f32s(ops[1]), st[1])
	case ewWhere:
		vec.Where32(typed[uint32](d), ops[0], typed[uint32](ops[1]), st[1], typed[uint32](ops[2]), st[2])
	case ewReduce:
		x, y := f32s(ops[0]), f32s(d)
		if m.sums {
			s := typed[float64](scratch[p.sumsAt():])[:len(y)]
			vec.SumEach(s, x, p.row)
			for r, v := range s {
				y[r] = float32(m.red.fin(v, p.row))
			}
			return
		}
		for r := range y {
			y[r] = float32(m.red.fin(m.red.part(x[r*p.row:(r+1)*p.row]), p.row))
		}
	}
}

// sumsAt is the offset in a worker's scratch of the float64 row sums of a reduction
// member, after the member and operand slots, 8-byte aligned.
func (p *ewProgram) sumsAt() int {
	return ((p.nslots+3)*p.slotBytes + 7) &^ 7
}

// applyRuns runs member m where its input j is read along runs of the full shape, one
// value per run (a bias over H·W, stride 0) or one contiguous run repeated (a dense
// layer's bias over the rows, stride 1): one call per run, reading that input in place.
func (p *ewProgram) applyRuns(scratch []byte, m *ewMember, d []byte, ops [3][]byte, st [3]int, j, r0 int) {
	w, o := m.in[j].walk, &m.in[j]
	off := r0 * p.row
	end := off + len(d)/m.esz
	var ro [3][]byte
	var rs [3]int
	for pos := off; pos < end; {
		row, col := pos/w.inner, pos%w.inner
		n := min(w.inner-col, end-pos)
		so := 0
		for k := len(w.outer) - 1; k >= 0; k-- {
			so += row % w.outer[k] * w.st[0][k]
			row /= w.outer[k]
		}
		for k, x := range m.in {
			switch {
			case k == j && w.ist[0] == 0:
				ro[k], rs[k] = o.src[so*o.esz:(so+1)*o.esz], 0
			case k == j:
				ro[k], rs[k] = o.src[(so+col)*o.esz:(so+col+n)*o.esz], 1
			case st[k] == 0:
				ro[k], rs[k] = ops[k], 0
			default:
				ro[k], rs[k] = ops[k][(pos-off)*x.esz:(pos-off+n)*x.esz], 1
			}
		}
		p.apply(scratch, m, d[(pos-off)*m.esz:(pos-off+n)*m.esz], ro, rs)
		pos += n
	}
}

// minRowCall is the row length from which a row value read along full rows is passed
// one row at a time with stride 0; shorter rows are spread into scratch (vec.Spread)
// and the member makes one call per block: a call costs about as much as spreading 512
// values.
const minRowCall = 512

// minRunCall is the run length from which an input broadcast in runs is read in place
// one run at a time; shorter runs are gathered into scratch, one element or one copy
// per run, which costs more than a call per run of this length.
const minRunCall = 32

// operand returns the bytes of input j of member m in rows [r0, r1) and its stride: 1,
// 0 (one value for all), -1 (one value per row, for a member that works on full rows),
// or -2 (an input outside the group broadcast in runs of at least minRunCall elements,
// each one value or one contiguous stretch, read in place by applyRuns). What cannot be
// read in place is copied into operand scratch: gathered broadcasts, short rows' values,
// and a one-value operand of a loop that needs stride 1.
func (p *ewProgram) operand(scratch []byte, m *ewMember, j, r0, r1 int) ([]byte, int) {
	o := &m.in[j]
	off, cnt := r0, r1-r0
	if m.full || m.kind == ewReduce {
		off, cnt = r0*p.row, (r1-r0)*p.row
	}
	tmp := scratch[(p.nslots+j)*p.slotBytes:][:cnt*o.esz]
	var b []byte
	stride := 1
	switch {
	case o.slot >= 0 && o.expand:
		v := p.value(scratch, o.slot, r0, r1)
		if p.row >= minRowCall && m.kind != ewWhere {
			return v, -1
		}
		if o.esz == 4 {
			vec.Spread(typed[uint32](tmp), typed[uint32](v), p.row)
		} else {
			for r := 0; r < r1-r0; r++ {
				fillElems(tmp[r*p.row:(r+1)*p.row], v[r:r+1])
			}
		}
		b = tmp
	case o.slot >= 0:
		b = p.value(scratch, o.slot, r0, r1)
	case o.mode == operandDirect:
		b = o.src[off*o.esz : (off+cnt)*o.esz]
	case o.mode == operandScalar:
		b, stride = o.src[:o.esz], 0
	case o.walk.ist[0] <= 1 && o.walk.inner >= minRunCall && !(m.kind == ewWhere && j == 0) && m.full &&
		(m.kind == ewBinary || m.kind == ewCompare || m.kind == ewWhere) && p.runsOnly(m, j):
		return nil, -2
	default:
		b = tmp
		if o.esz == 1 {
			gatherRange(o.walk, b, o.src, off)
		} else {
			gatherRange(o.walk, typed[uint32](b), typed[uint32](o.src), off)
		}
	}
	// Unary loops, reductions and Where's condition read every element.
	if stride == 0 && (m.kind == ewUnary || m.kind == ewReduce || (m.kind == ewWhere && j == 0)) {
		fillElems(tmp, b)
		return tmp, 1
	}
	return b, stride
}

// runsOnly reports whether input j is the only input of m that applyRuns would have
// to split (none reads row values per row, no other is broadcast along runs).
func (p *ewProgram) runsOnly(m *ewMember, j int) bool {
	for k, o := range m.in {
		if k != j && ((o.slot >= 0 && o.expand) || (o.slot < 0 && o.mode == operandGather)) {
			return false
		}
	}
	return true
}

// fillElems repeats the element e (1 or 4 bytes) over d.
func fillElems(d, e []byte) {
	if len(e) == 1 {
		for i := range d {
			d[i] = e[0]
		}
		return
	}
	v, dd := typed[uint32](e)[0], typed[uint32](d)
	for i := range dd {
		dd[i] = v
	}
}

// gatherRange copies elements [lo, lo+len(d)) of p's walk (one input, in output
// order) from s into d.
func gatherRange[T any](p *bplan, d, s []T, lo int) {
	var idx [maxRank]int
	row, col := lo/p.inner, lo%p.inner
	off := 0
	for k := len(p.outer) - 1; k >= 0; k-- {
		idx[k] = row % p.outer[k]
		row /= p.outer[k]
		off += idx[k] * p.st[0][k]
	}
	st := p.ist[0]
	for i := 0; i < len(d); {
		n := min(p.inner-col, len(d)-i)
		o := off + col*st
		switch st {
		case 0:
			v := s[o]
			for j := range d[i : i+n] {
				d[i+j] = v
			}
		case 1:
			copy(d[i:i+n], s[o:o+n])
		default:
			for j := range d[i : i+n] {
				d[i+j] = s[o+j*st]
			}
		}
		i, col = i+n, 0
		for k := len(p.outer) - 1; k >= 0; k-- {
			idx[k]++
			off += p.st[0][k]
			if idx[k] < p.outer[k] {
				break
			}
			off -= p.st[0][k] * p.outer[k]
			idx[k] = 0
		}
	}
}
