package runtime

import (
	"fmt"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// The scheduler is a sequence of passes, each a function of what the previous ones
// produced, so each can be tested on its own:
//
//	1 collect:  the nodes the outputs need, in an order where in-place writes follow
//	            every read of the value they overwrite
//	2 assign:   a backend per node (preferred if it supports the node, else the CPU)
//	3 segment:  runs of consecutive nodes on one backend
//	4 place:    a buffer per value and backend, with transfers where a value is read
//	            on a backend other than the one that made it, and buffer reuse by liveness
//	5 prepare:  each segment compiled by its backend

// collect returns the nodes needed to compute outputs, sorted by creation order (a
// topological order) except that in-place writers whose results nobody reads move to
// the end, after every read of the variables they update.
func collect(outputs []*tensor.Node) ([]*tensor.Node, error) {
	if len(outputs) == 0 {
		return nil, fmt.Errorf("runtime: Compile needs at least one output")
	}
	g := outputs[0].Graph()
	seen := map[*tensor.Node]bool{}
	var stack []*tensor.Node
	for i, o := range outputs {
		if o == nil {
			return nil, fmt.Errorf("runtime: output %d is nil", i)
		}
		if o.Graph() != g {
			return nil, fmt.Errorf("runtime: output %d (%v) belongs to another graph than output 0", i, o)
		}
		stack = append(stack, o)
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		stack = append(stack, n.Inputs()...)
	}
	nodes := make([]*tensor.Node, 0, len(seen))
	consumed := map[*tensor.Node]bool{}
	for n := range seen {
		nodes = append(nodes, n)
		for _, in := range n.Inputs() {
			consumed[in] = true
		}
	}
	slices.SortFunc(nodes, func(a, b *tensor.Node) int { return a.ID() - b.ID() })
	isSink := func(n *tensor.Node) bool { return len(n.Op().Writes()) > 0 && !consumed[n] }
	body := slices.DeleteFunc(slices.Clone(nodes), isSink)
	for _, n := range nodes {
		if isSink(n) {
			body = append(body, n)
		}
	}
	return body, nil
}

// isSource reports whether n takes no inputs (an input, a constant, a variable).
func isSource(n *tensor.Node) bool { return n.Op().Kind() == tensor.KindSource }

// assign picks a backend per node. Sources are placed where they are read (see place);
// an in-place writer runs on the home of the variable it writes; a Reshape follows its
// input. It returns the assignment and the nodes that fell back to the CPU.
func assign(nodes []*tensor.Node, preferred, cpu Backend, homes map[*tensor.Variable]Backend) (map[*tensor.Node]Backend, []*tensor.Node) {
	on := make(map[*tensor.Node]Backend, len(nodes))
	var fallbacks []*tensor.Node
	for _, n := range nodes {
		switch {
		case isSource(n):
			if v := n.Variable(); v != nil {
				on[n] = homes[v]
			}
		case len(n.Op().Writes()) > 0:
			on[n] = homes[n.Input(n.Op().Writes()[0]).Variable()]
		case preferred.Supports(n):
			on[n] = preferred
		default:
			on[n] = cpu
			if preferred != cpu {
				fallbacks = append(fallbacks, n)
			}
		}
	}
	return on, fallbacks
}

// variableHomes decides where each variable the graph uses lives: where it already is
// if resident, else the preferred backend unless that backend cannot run one of the
// in-place ops that write the variable, in which case the CPU.
func variableHomes(nodes []*tensor.Node, resident map[*tensor.Variable]*resident, preferred, cpu Backend) (map[*tensor.Variable]Backend, error) {
	homes := map[*tensor.Variable]Backend{}
	for _, n := range nodes {
		if v := n.Variable(); v != nil {
			if res, ok := resident[v]; ok {
				homes[v] = res.backend
			} else {
				homes[v] = preferred
			}
		}
	}
	for _, n := range nodes {
		for _, w := range n.Op().Writes() {
			in := n.Input(w)
			v := in.Variable()
			if v == nil {
				return nil, fmt.Errorf("runtime: %v writes input %d (%v), which is not a variable", n, w, in)
			}
			if home := homes[v]; !home.Supports(n) {
				if _, ok := resident[v]; ok && home != cpu {
					return nil, fmt.Errorf("runtime: %v lives on %s, which cannot run %v that updates it", v, home.Name(), n)
				}
				homes[v] = cpu
			}
		}
	}
	return homes, nil
}

// segment groups consecutive non-source nodes with the same backend.
type segmentPlan struct {
	backend Backend
	nodes   []*tensor.Node
}

func segment(nodes []*tensor.Node, on map[*tensor.Node]Backend) []segmentPlan {
	var segs []segmentPlan
	for _, n := range nodes {
		if isSource(n) {
			continue
		}
		b := on[n]
		if len(segs) == 0 || segs[len(segs)-1].backend != b {
			segs = append(segs, segmentPlan{backend: b})
		}
		segs[len(segs)-1].nodes = append(segs[len(segs)-1].nodes, n)
	}
	return segs
}

// valueKey names one copy of a node's value on one backend.
type valueKey struct {
	node    *tensor.Node
	backend Backend
}

// transfer copies a value between backends before a segment runs, through host memory.
type transfer struct {
	node     *tensor.Node
	from, to Backend
	src, dst Buffer
	staging  []byte
}

// owned is a buffer an executable allocated and frees.
type owned struct {
	backend Backend
	buf     Buffer
	pool    Pool
}

// placement is the output of the place pass.
type placement struct {
	bufs      map[valueKey]Buffer
	pre       [][]transfer                // per segment: transfers before it runs
	feeds     map[*tensor.Node][]valueKey // per input node: where to upload the feed
	consts    map[*tensor.Node][]valueKey // per const node: where it was uploaded
	owned     []owned
	variables map[*tensor.Variable]*resident // variables this graph uses, after homing
}

func bytesOf(n *tensor.Node) int64 { return int64(n.DType().Bytes(n.Shape().Size())) }

// place allocates every buffer: variables at their homes (through r), inputs and
// constants on each backend that reads them, transfers for values read away from
// where they are made, and activations reused once their last reader has run.
func (r *Runtime) place(segs []segmentPlan, on map[*tensor.Node]Backend, homes map[*tensor.Variable]Backend, keep map[*tensor.Node]bool) (*placement, error) {
	p := &placement{
		bufs:      map[valueKey]Buffer{},
		pre:       make([][]transfer, len(segs)),
		feeds:     map[*tensor.Node][]valueKey{},
		consts:    map[*tensor.Node][]valueKey{},
		variables: map[*tensor.Variable]*resident{},
	}
	// Liveness of activations: a buffer is reused once the last node that reads it
	// (directly or through Reshape views) on its own backend has run. Values read by
	// another backend (through a transfer) or fetched as outputs are pinned for the
	// executable's lifetime; so are sources and variables, which the executable does
	// not own.
	type pos struct{ seg, idx int }
	baseAct := func(n *tensor.Node) *tensor.Node {
		for n.Op() == tensor.OpReshape {
			n = n.Input(0)
		}
		return n
	}
	last := map[*tensor.Node]pos{}
	pinned := map[*tensor.Node]bool{}
	for n := range keep {
		pinned[baseAct(n)] = true
	}
	for si, s := range segs {
		for ni, n := range s.nodes {
			for _, in := range n.Inputs() {
				b := baseAct(in)
				if on[b] != s.backend {
					pinned[b] = true
				} else {
					last[b] = pos{si, ni}
				}
			}
		}
	}
	releasable := func(b *tensor.Node) bool {
		return !pinned[b] && !isSource(b) && len(b.Op().Writes()) == 0
	}
	free := map[Backend]map[int64][]Buffer{}
	release := func(b Backend, buf Buffer) {
		if free[b] == nil {
			free[b] = map[int64][]Buffer{}
		}
		free[b][buf.Size()] = append(free[b][buf.Size()], buf)
	}
	allocAct := func(b Backend, n *tensor.Node, pool Pool) (Buffer, error) {
		size := max(bytesOf(n), 4)
		if l := free[b][size]; len(l) > 0 {
			buf := l[len(l)-1]
			free[b][size] = l[:len(l)-1]
			return buf, nil
		}
		buf, err := r.alloc(b, size, pool)
		if err != nil {
			return nil, fmt.Errorf("runtime: buffer for %v on %s: %w", n, b.Name(), err)
		}
		p.owned = append(p.owned, owned{b, buf, pool})
		return buf, nil
	}
	// ensure makes value n available on backend b for segment si, adding a transfer or
	// an upload when it lives elsewhere.
	var ensure func(n *tensor.Node, b Backend, si int) (Buffer, error)
	ensure = func(n *tensor.Node, b Backend, si int) (Buffer, error) {
		k := valueKey{n, b}
		if buf, ok := p.bufs[k]; ok {
			return buf, nil
		}
		switch {
		case n.Op() == tensor.OpInput || n.Op() == tensor.OpConst:
			pool := PoolIO
			if n.Op() == tensor.OpConst {
				pool = PoolWeights
			}
			buf, err := r.alloc(b, bytesOf(n), pool)
			if err != nil {
				return nil, fmt.Errorf("runtime: buffer for %v on %s: %w", n, b.Name(), err)
			}
			p.owned = append(p.owned, owned{b, buf, pool})
			p.bufs[k] = buf
			if n.Op() == tensor.OpInput {
				p.feeds[n] = append(p.feeds[n], k)
			} else {
				if err := r.upload(b, buf, n.Value().Bytes()); err != nil {
					return nil, fmt.Errorf("runtime: uploading %v to %s: %w", n, b.Name(), err)
				}
				p.consts[n] = append(p.consts[n], k)
			}
			return buf, nil
		case n.Op() == tensor.OpVariable && homes[n.Variable()] == b:
			res, err := r.variable(n.Variable(), b)
			if err != nil {
				return nil, err
			}
			p.variables[n.Variable()] = res
			p.bufs[k] = res.buf
			return res.buf, nil
		}
		// The value lives on another backend: find its home copy and transfer it.
		from := on[n]
		if n.Op() == tensor.OpVariable {
			from = homes[n.Variable()]
		}
		src, err := ensure(n, from, si)
		if err != nil {
			return nil, err
		}
		// The copy lands before segment si starts, while buffers that nodes of si have
		// already released are still live: so its destination is a fresh buffer, never
		// one from the free list, and it stays the executable's for its lifetime.
		dst, err := r.alloc(b, bytesOf(n), PoolScratch)
		if err != nil {
			return nil, fmt.Errorf("runtime: transfer buffer for %v on %s: %w", n, b.Name(), err)
		}
		p.owned = append(p.owned, owned{b, dst, PoolScratch})
		p.bufs[k] = dst
		p.pre[si] = append(p.pre[si], transfer{node: n, from: from, to: b, src: src, dst: dst, staging: make([]byte, bytesOf(n))})
		return dst, nil
	}
	for si, s := range segs {
		for ni, n := range s.nodes {
			for _, in := range n.Inputs() {
				if _, err := ensure(in, s.backend, si); err != nil {
					return nil, err
				}
			}
			k := valueKey{n, s.backend}
			switch {
			case n.Op() == tensor.OpReshape:
				p.bufs[k] = p.bufs[valueKey{n.Input(0), s.backend}]
			case len(n.Op().Writes()) > 0:
				p.bufs[k] = p.bufs[valueKey{n.Input(n.Op().Writes()[0]), s.backend}]
			default:
				pool := PoolActivations
				if keep[n] {
					pool = PoolIO
				}
				buf, err := allocAct(s.backend, n, pool)
				if err != nil {
					return nil, err
				}
				p.bufs[k] = buf
			}
			// Release the activations whose last reader is this node.
			for _, in := range n.Inputs() {
				b := baseAct(in)
				if l, ok := last[b]; ok && l == (pos{si, ni}) && releasable(b) {
					release(s.backend, p.bufs[valueKey{b, s.backend}])
					delete(last, b)
				}
			}
		}
	}
	return p, nil
}
