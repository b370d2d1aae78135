package cpu

import (
	"os"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/gml-dev/gml/tensor"
)

// Fusion: Prepare hands the segment to fuse before preparing node by node. fuse finds
// groups of nodes that run better as one step and returns the steps that replace theirs
// (a nil step: the node's work is done by another's). Fused steps compute exactly what
// the nodes' kernels compute (but for the max pool gradient of a window holding NaN,
// convpool.go); what changes is the order of the work, so fuse checks
// that the new order cannot read memory before it is written or overwrite it before it
// is read, given the scheduler's buffer reuse: a fused step may write a later node's
// output early only where no node in between uses that memory.

// fuse returns the fused steps of nodes (mem[i] is the memory of nodes[i]; escapes
// reports the nodes whose values are read after the segment) and, for each node whose
// work another node's step does, that node (for the profile's FLOP counts).
func fuse(nodes []*tensor.Node, mem []nodeMem, escapes func(*tensor.Node) bool) (map[*tensor.Node]func() error, map[*tensor.Node]*tensor.Node) {
	steps := map[*tensor.Node]func() error{}
	owners := map[*tensor.Node]*tensor.Node{}
	index := make(map[*tensor.Node]int, len(nodes))
	for i, n := range nodes {
		index[n] = i
	}
	for _, t := range findAttnTrios(nodes) {
		fuseAttnTrio(t, nodes, index, mem, escapes, steps, owners)
	}
	if fuseOff {
		return steps, owners
	}
	fuseConvPool(nodes, index, mem, escapes, steps, owners)
	fuseMatMulBiasAct(nodes, index, mem, escapes, steps, owners)
	f := &ewFuser{nodes: nodes, mem: mem, index: index, users: make([][]int, len(nodes)), escapes: escapes, owners: owners}
	for i, n := range nodes {
		for _, x := range n.Inputs() {
			if xi, ok := index[x]; ok {
				f.users[xi] = append(f.users[xi], i)
			}
		}
	}
	for _, g := range f.groups(steps) {
		last := nodes[g.members[len(g.members)-1]]
		for _, m := range g.members {
			steps[nodes[m]] = nil
			if nodes[m] != last {
				owners[nodes[m]] = last
			}
		}
		step := f.normGradStep(g, steps)
		if step == nil {
			step = f.geluGradStep(g, steps)
		}
		if step == nil {
			step = f.build(g, steps)
		}
		steps[nodes[g.members[len(g.members)-1]]] = step
	}
	fuseMatMulBias(nodes, index, mem, escapes, steps, owners)
	fuseUpdates(nodes, mem, steps, owners)
	return steps, owners
}

// fuseOff turns elementwise and optimizer fusion off (GML_FUSE=off), to compare or to rule it out.
var fuseOff = os.Getenv("GML_FUSE") == "off"

// addressRange is the address range [lo, hi) of a byte slice.
func addressRange(b []byte) (lo, hi uintptr) {
	if len(b) == 0 {
		return 0, 0
	}
	lo = uintptr(unsafe.Pointer(&b[0]))
	return lo, lo + uintptr(len(b))
}

// overlap reports whether two byte slices share memory.
func overlap(a, b []byte) bool {
	alo, ahi := addressRange(a)
	blo, bhi := addressRange(b)
	return alo < bhi && blo < ahi
}

// writableEarly reports whether the output of node `at` may be written by a step that
// runs in place of node from (from < at): no node in between reads or writes its
// memory, and the memory is none of those listed in busy (what the early step reads or
// writes besides it).
func writableEarly(dst []byte, from, at int, mem []nodeMem, busy ...[]byte) bool {
	for _, b := range busy {
		if overlap(dst, b) {
			return false
		}
	}
	for i := from + 1; i < at; i++ {
		if overlap(dst, mem[i].out) {
			return false
		}
		for _, b := range mem[i].in {
			if overlap(dst, b) {
				return false
			}
		}
	}
	return true
}

// fuseAttnTrio makes the statistics node's step compute the whole backward of one
// attention, writing each gradient straight into the output of the node its readers
// take it from where writableEarly allows it, else into scratch that the node's step
// copies out. ∂q goes to the AttentionGradQ node; ∂k and ∂v to the two slices that take
// the AttentionGradKV node's output apart where they are all that read it (kvSlices:
// the usual training graph), which spares copying them out of it, else to that output.
// Two memories the scheduler hands on are taken too: ∂q may take that of the forward's
// output o (when the statistics are o's last reader: each batch entry reads its rows of
// o before it writes the same elements of ∂q, and the run keeps them where it may read
// them again), and ∂k or ∂v that of an operand (sharesOperand).
func fuseAttnTrio(t *attnTrio, nodes []*tensor.Node, index map[*tensor.Node]int, mem []nodeMem, escapes func(*tensor.Node) bool,
	steps map[*tensor.Node]func() error, owners map[*tensor.Node]*tensor.Node) {
	is, ikv := index[t.stats], index[t.gradKV]
	sm, qm, kvm := mem[is], mem[index[t.gradQ]], mem[ikv]
	dst := []*tensor.Node{t.gradQ, t.gradKV} // the nodes whose outputs take ∂q, then ∂k|∂v or ∂k and ∂v
	if dk, dv, ok := kvSlices(t.gradKV, nodes[ikv+1:], escapes); ok {
		dst = []*tensor.Node{t.gradQ, dk, dv}
	}
	busy := append(append([][]byte{sm.out}, sm.in...), qm.in...)
	o := sm.in[2]
	oInDQ := sameMemory(qm.out, o) && len(qm.out) == len(o) && t.gradQ.Shape().Equal(t.stats.Input(2).Shape())
	// The AttentionGradKV node's output is spare where the slices take ∂k and ∂v.
	spare := len(dst) == 3 && newAttnBwd(t.gradQ, qm.in).small16() &&
		writableEarly(kvm.out, is, ikv, mem, append(slices.Clone(busy), mem[index[dst[0]]].out, mem[index[dst[1]]].out, mem[index[dst[2]]].out)...)
	late := false
	out := make([][]byte, len(dst))
	steps[t.gradQ], steps[t.gradKV] = nil, nil
	owners[t.gradQ], owners[t.gradKV] = t.stats, t.stats
	for i, n := range dst {
		mine := mem[index[n]].out
		others := slices.Clone(busy)
		if i == 0 && oInDQ {
			others = slices.DeleteFunc(others, func(b []byte) bool { return sameMemory(b, o) && len(b) == len(o) })
		}
		for _, m := range dst {
			if m != n {
				others = append(others, mem[index[m]].out)
			}
		}
		owners[n] = t.stats
		switch {
		case writableEarly(mine, is, index[n], mem, others...):
		case i > 0 && spare && t.sharesOperand(n, mine, sm, qm) &&
			writableLate(mine, is, index[n], nodes, mem, others, append([]*tensor.Node{t.gradQ, t.gradKV}, dst...)):
			late = true
		default:
			out[i] = make([]byte, len(mine))
			steps[n] = func() error { copy(mine, out[i]); return nil }
			continue
		}
		out[i], steps[n] = mine, nil
	}
	t.prepare(sm.out, out[0], out[1:], sm.in, qm.in)
	t.oInDQ = oInDQ && sameMemory(out[0], o)
	if late {
		t.lateKV, t.spareKV = true, jointKV(f32s(kvm.out), t.a.d, t.a.dv)
	}
	scratch := workerScratch(2*attnTile*attnTile + t.keptO())
	var next atomic.Int64
	steps[t.stats] = func() error { return t.run(scratch, &next) }
}

// sharesOperand reports whether mine, the output of n (the slice that takes ∂k or ∂v),
// is the memory of one of the trio's operands q, k, v, gy and o that has n's shape
// (sm and qm: the memory of the statistics and the ∂q node). The scheduler hands an
// operand's buffer on when the trio's nodes read it last; the four-row kernels may then
// write it (lateKV).
func (t *attnTrio) sharesOperand(n *tensor.Node, mine []byte, sm, qm nodeMem) bool {
	ops := []*tensor.Node{t.gradQ.Input(0), t.gradQ.Input(1), t.gradQ.Input(2), t.gradQ.Input(3), t.stats.Input(2)}
	for i, b := range [][]byte{qm.in[0], qm.in[1], qm.in[2], qm.in[3], sm.in[2]} {
		if sameMemory(b, mine) && len(b) == len(mine) && ops[i].Shape().Equal(n.Shape()) {
			return true
		}
	}
	return false
}

// writableLate is writableEarly for mine, the memory of an operand that the nodes of
// skip (the trio's) read: nodes of skip and the operand itself in busy are let be.
func writableLate(mine []byte, from, at int, nodes []*tensor.Node, mem []nodeMem, busy [][]byte, skip []*tensor.Node) bool {
	for _, b := range busy {
		if overlap(mine, b) && !(sameMemory(b, mine) && len(b) == len(mine)) {
			return false
		}
	}
	for i := from + 1; i < at; i++ {
		if !slices.Contains(skip, nodes[i]) && !writableEarly(mine, i-1, i+1, mem) {
			return false
		}
	}
	return true
}

// kvSlices returns the slices that take ∂k (the last axis's first d elements, d those of
// q) and ∂v (the rest) out of kv, an AttentionGradKV node, when the two are all that
// read it among later (the nodes after it) and it does not escape the segment.
func kvSlices(kv *tensor.Node, later []*tensor.Node, escapes func(*tensor.Node) bool) (dk, dv *tensor.Node, ok bool) {
	if escapes(kv) {
		return nil, nil, false
	}
	shape := kv.Shape()
	r := shape.Rank()
	d := kv.Input(0).Shape()[r-1]
	for _, n := range later {
		if !slices.Contains(n.Inputs(), kv) {
			continue
		}
		at, isSlice := n.Attr().(tensor.SliceAttr)
		if n.Op() != tensor.OpSlice || !isSlice || at.Steps[r-1] != 1 {
			return nil, nil, false
		}
		for i := range r - 1 {
			if at.Starts[i] != 0 || at.Ends[i] != shape[i] || at.Steps[i] != 1 {
				return nil, nil, false
			}
		}
		switch {
		case dk == nil && at.Starts[r-1] == 0 && at.Ends[r-1] == d:
			dk = n
		case dv == nil && at.Starts[r-1] == d && at.Ends[r-1] == shape[r-1]:
			dv = n
		default:
			return nil, nil, false
		}
	}
	return dk, dv, dk != nil && dv != nil
}
