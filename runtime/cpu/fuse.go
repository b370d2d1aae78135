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
		fuseAttnTrio(t, index, mem, steps)
		owners[t.gradQ], owners[t.gradKV] = t.stats, t.stats
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
// attention, writing the gradients straight into their nodes' outputs where
// writableEarly allows it, else into scratch that the gradient nodes' steps copy out.
// ∂q may also take the memory of the forward's output o, which the scheduler hands on
// when the statistics are o's last reader: each batch entry reads its rows of o before
// it writes the same elements of ∂q (the run keeps them where it may read them again).
func fuseAttnTrio(t *attnTrio, index map[*tensor.Node]int, mem []nodeMem, steps map[*tensor.Node]func() error) {
	is, iq, ikv := index[t.stats], index[t.gradQ], index[t.gradKV]
	sm, qm, kvm := mem[is], mem[iq], mem[ikv]
	busy := append(append([][]byte{sm.out}, sm.in...), qm.in...)
	dq, dkv := qm.out, kvm.out
	o := sm.in[2]
	oInDQ := sameMemory(dq, o) && len(dq) == len(o) && t.gradQ.Shape().Equal(t.stats.Input(2).Shape())
	busyQ := busy
	if oInDQ {
		busyQ = slices.DeleteFunc(slices.Clone(busy), func(b []byte) bool { return sameMemory(b, o) && len(b) == len(o) })
	}
	directQ := writableEarly(dq, is, iq, mem, append(busyQ, dkv)...)
	directKV := writableEarly(dkv, is, ikv, mem, append(busy, dq)...)
	if !directQ {
		dq = make([]byte, len(qm.out))
	}
	if !directKV {
		dkv = make([]byte, len(kvm.out))
	}
	t.prepare(sm.out, dq, dkv, sm.in, qm.in)
	t.oInDQ = directQ && oInDQ
	scratch := workerScratch(2*attnTile*attnTile + t.keptO())
	var next atomic.Int64
	steps[t.stats] = func() error { return t.run(scratch, &next) }
	steps[t.gradQ], steps[t.gradKV] = nil, nil
	if !directQ {
		steps[t.gradQ] = func() error { copy(qm.out, dq); return nil }
	}
	if !directKV {
		steps[t.gradKV] = func() error { copy(kvm.out, dkv); return nil }
	}
}
