package runtime

import (
	"fmt"
	"slices"

	"github.com/gml-dev/gml/tensor"
)

// The scheduler is a sequence of passes, each a function of what the previous ones
// produced, so each can be tested on its own:
//
//	1 collect:   the nodes the outputs need, in an order where in-place writes follow
//	             every read of the value they overwrite; variableHomes: where each
//	             variable lives (the preferred backend unless it cannot run an in-place
//	             op that writes it)
//	2 lower:     fused ops the preferred backend lacks but whose decomposition it runs
//	             replaced by the decomposition (lower.go)
//	3 assign:    a backend per node (preferred if it supports the node, else the CPU)
//	4 segment:   runs of consecutive nodes on one backend
//	5 liveness:  each activation's last reader, and the values that must outlive the run
//	6 routes:    the values each segment reads from outside itself: uploads, variables
//	             at home, transfers from the backend that holds them
//	7 allocate:  a buffer per value and backend, reusing activations' buffers after
//	             their last reader
//	8 prepare:   each segment compiled by its backend (Runtime.compile)
//
// Runtime.plan runs passes 1 to 7: Compile allocates for real and prepares, Explain
// allocates with placeholders (dryAllocator) and reports.

// schedule is what passes 1 to 7 produce.
type schedule struct {
	outputs   []*tensor.Node
	nodes     []*tensor.Node // after lowering, in schedule order
	homes     map[*tensor.Variable]Backend
	al        aliases
	on        map[*tensor.Node]Backend
	fallbacks []*tensor.Node
	segs      []segmentPlan
	routes    []route
	life      lifetimes
	keep      map[*tensor.Node]bool
	place     *placement
}

// plan runs passes 1 to 7 on the graph that computes outputs, allocating through a.
func (r *Runtime) plan(outputs []*tensor.Node, a allocator) (*schedule, error) {
	nodes, err := collect(outputs)
	if err != nil {
		return nil, err
	}
	sc := &schedule{outputs: outputs, keep: map[*tensor.Node]bool{}}
	if sc.homes, err = variableHomes(nodes, r.vars, r.preferred, r.cpu); err != nil {
		return nil, err
	}
	sc.nodes, sc.al = lower(nodes, r.preferred, r.cpu)
	sc.on, sc.fallbacks = assign(sc.nodes, r.preferred, r.cpu, sc.homes)
	// A lowered fused node lives where its decomposition's result is computed.
	for n := range sc.al {
		d := sc.al[n]
		for sc.al[d] != nil {
			d = sc.al[d]
		}
		sc.on[n] = sc.on[d]
	}
	sc.segs = segment(sc.nodes, sc.on)
	for _, o := range outputs {
		sc.keep[o] = true
	}
	sc.life = liveness(sc.segs, sc.on, sc.al, sc.keep)
	sc.routes = routes(sc.segs, sc.on, sc.al, sc.homes)
	if sc.place, err = allocate(a, sc.segs, sc.routes, sc.al, sc.life, sc.keep); err != nil {
		return nil, err
	}
	return sc, nil
}

// allocator is where the allocate pass gets memory: the runtime, or placeholders.
type allocator interface {
	alloc(b Backend, bytes int64, pool Pool) (Buffer, error)
	free(b Backend, buf Buffer, pool Pool)
	upload(b Backend, buf Buffer, src []byte) error
	variable(v *tensor.Variable, on Backend) (*resident, error)
}

// collect returns the nodes needed to compute outputs, sorted by creation order (a
// topological order) except that in-place writers whose results nobody reads move to
// the end, after every read of the variables they update.
func collect(outputs []*tensor.Node) ([]*tensor.Node, error) {
	if len(outputs) == 0 {
		return nil, fmt.Errorf("runtime: Compile needs at least one output")
	}
	g := outputs[0].Graph()
	// Sized up front: ag compiles a trace of a whole training step at every step when its
	// trace cache is off, and growing these maps was a tenth of that.
	seen := make(map[*tensor.Node]bool, g.Len())
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
	consumed := make(map[*tensor.Node]bool, len(seen))
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

// assign picks a backend per node. Sources are placed where they are read (see routes);
// an in-place writer runs on the home of the variable it writes; a Reshape follows its
// input. It returns the assignment and the nodes that fell back to the CPU (in-place
// writers included, when their variable lives there).
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
			// The writer runs where its variable lives: on the CPU when the preferred
			// backend cannot run it (variableHomes), which is a fallback like any other.
			on[n] = homes[n.Input(n.Op().Writes()[0]).Variable()]
			if on[n] == cpu && preferred != cpu {
				fallbacks = append(fallbacks, n)
			}
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

// placement is the output of the allocate pass.
type placement struct {
	bufs      map[valueKey]Buffer
	pre       [][]transfer                // per segment: transfers before it runs
	feeds     map[*tensor.Node][]valueKey // per input node: where to upload the feed
	consts    map[*tensor.Node][]valueKey // per const node: where it was uploaded
	owned     []owned
	variables map[*tensor.Variable]*resident // variables this graph uses, after homing
}

func bytesOf(n *tensor.Node) int64 { return int64(n.DType().Bytes(n.Shape().Size())) }

// pos is a node's place in the schedule: segment and index within it.
type pos struct{ seg, idx int }

// lifetimes is the output of the liveness pass.
type lifetimes struct {
	// last is, per activation (a base of Reshape views), the position of its last
	// reader on its own backend: its buffer is free for reuse once that node has run.
	last map[*tensor.Node]pos
	// pinned activations keep their buffers for the executable's lifetime: values
	// read on another backend (through a transfer) and fetched outputs.
	pinned map[*tensor.Node]bool
}

// releasable reports whether b's buffer returns to the free list after its last
// reader: not when pinned, nor for sources and variables, which the executable does
// not own.
func (l lifetimes) releasable(b *tensor.Node) bool {
	return !l.pinned[b] && !isSource(b) && len(b.Op().Writes()) == 0
}

// liveness is pass 5: when each activation is read for the last time (through Reshape
// views and lowered fused nodes, which share its buffer), and which activations must
// live as long as the executable.
func liveness(segs []segmentPlan, on map[*tensor.Node]Backend, al aliases, keep map[*tensor.Node]bool) lifetimes {
	l := lifetimes{last: make(map[*tensor.Node]pos, len(on)), pinned: make(map[*tensor.Node]bool, len(keep))}
	for n := range keep {
		l.pinned[al.base(n)] = true
	}
	for si, s := range segs {
		for ni, n := range s.nodes {
			for _, in := range n.Inputs() {
				b := al.base(in)
				if on[b] != s.backend {
					l.pinned[b] = true
				} else {
					l.last[b] = pos{si, ni}
				}
			}
		}
	}
	return l
}

// routeKind says how a value reaches the backend that reads it.
type routeKind uint8

// The route kinds.
const (
	routeFeed     routeKind = iota // a graph input, uploaded at every run
	routeConst                     // a constant, uploaded once
	routeVariable                  // a variable on its home backend: its resident buffer
	routeTransfer                  // a copy from another backend before the segment runs
)

// route is one value a segment reads that it does not compute: a source, or a value
// that lives on another backend.
type route struct {
	node *tensor.Node
	to   Backend
	seg  int // the first segment that reads it on to
	kind routeKind
	from Backend // routeTransfer: the backend that holds it
}

// routes is pass 6: every value each segment reads from outside itself, once per
// backend, in the order they must be made available (the home copy of a value before
// a transfer of it). A value computed by a node is available on the node's backend;
// inputs and constants are uploaded to every backend that reads them; a variable lives
// at its home and is copied to any other backend that reads it.
func routes(segs []segmentPlan, on map[*tensor.Node]Backend, al aliases, homes map[*tensor.Variable]Backend) []route {
	have := map[valueKey]bool{}
	for _, s := range segs {
		for _, n := range s.nodes {
			have[valueKey{n, s.backend}] = true
		}
	}
	for n := range al {
		have[valueKey{n, on[n]}] = true
	}
	var out []route
	var add func(n *tensor.Node, b Backend, si int)
	add = func(n *tensor.Node, b Backend, si int) {
		k := valueKey{n, b}
		if have[k] {
			return
		}
		have[k] = true
		switch {
		case n.Op() == tensor.OpInput:
			out = append(out, route{node: n, to: b, seg: si, kind: routeFeed})
		case n.Op() == tensor.OpConst:
			out = append(out, route{node: n, to: b, seg: si, kind: routeConst})
		case n.Op() == tensor.OpVariable && homes[n.Variable()] == b:
			out = append(out, route{node: n, to: b, seg: si, kind: routeVariable})
		default:
			from := on[n]
			if n.Op() == tensor.OpVariable {
				from = homes[n.Variable()]
			}
			add(n, from, si)
			out = append(out, route{node: n, to: b, seg: si, kind: routeTransfer, from: from})
		}
	}
	for si, s := range segs {
		for _, n := range s.nodes {
			for _, in := range n.Inputs() {
				add(in, s.backend, si)
			}
		}
	}
	return out
}

// freeList holds released activation buffers per backend and size.
type freeList map[Backend]map[int64][]Buffer

func (f freeList) put(b Backend, buf Buffer) {
	if f[b] == nil {
		f[b] = map[int64][]Buffer{}
	}
	f[b][buf.Size()] = append(f[b][buf.Size()], buf)
}

func (f freeList) take(b Backend, size int64) Buffer {
	l := f[b][size]
	if len(l) == 0 {
		return nil
	}
	f[b][size] = l[:len(l)-1]
	return l[len(l)-1]
}

// allocate is pass 7: a buffer for every value on every backend that holds it.
// Variables get their resident buffers at their homes (through r), inputs and
// constants a buffer on each backend that reads them (constants uploaded now), values
// routed across backends a transfer buffer of their own before the segment that reads
// them, and each computed value an activation buffer, taken from those released once
// their last reader has run (Reshape aliases its input, in-place ops their variable,
// a lowered fused node its decomposition's result).
func allocate(r allocator, segs []segmentPlan, rts []route, al aliases, l lifetimes, keep map[*tensor.Node]bool) (p *placement, err error) {
	nodes := 0
	for _, s := range segs {
		nodes += len(s.nodes)
	}
	p = &placement{
		bufs:      make(map[valueKey]Buffer, nodes),
		pre:       make([][]transfer, len(segs)),
		feeds:     map[*tensor.Node][]valueKey{},
		consts:    map[*tensor.Node][]valueKey{},
		variables: map[*tensor.Variable]*resident{},
	}
	built := p // a failing return sets p to nil before this runs
	defer func() {
		// What a failed allocation took goes back.
		if err != nil {
			for _, o := range built.owned {
				r.free(o.backend, o.buf, o.pool)
			}
		}
	}()
	fresh := func(b Backend, n *tensor.Node, size int64, pool Pool) (Buffer, error) {
		buf, err := r.alloc(b, size, pool)
		if err != nil {
			return nil, fmt.Errorf("runtime: buffer for %v on %s: %w", n, b.Name(), err)
		}
		p.owned = append(p.owned, owned{b, buf, pool})
		return buf, nil
	}
	// realize makes a routed value available. Transfers land before their segment
	// starts, while buffers that nodes of the segment release are still live: so they
	// get fresh buffers, never ones from the free list.
	realize := func(rt route) error {
		n, b := rt.node, rt.to
		k := valueKey{n, b}
		switch rt.kind {
		case routeFeed, routeConst:
			pool := PoolIO
			if rt.kind == routeConst {
				pool = PoolWeights
			}
			buf, err := fresh(b, n, bytesOf(n), pool)
			if err != nil {
				return err
			}
			p.bufs[k] = buf
			if rt.kind == routeFeed {
				p.feeds[n] = append(p.feeds[n], k)
				return nil
			}
			if err := r.upload(b, buf, n.Value().Bytes()); err != nil {
				return fmt.Errorf("runtime: uploading %v to %s: %w", n, b.Name(), err)
			}
			p.consts[n] = append(p.consts[n], k)
		case routeVariable:
			res, err := r.variable(n.Variable(), b)
			if err != nil {
				return err
			}
			p.variables[n.Variable()] = res
			p.bufs[k] = res.buf
		case routeTransfer:
			dst, err := fresh(b, n, bytesOf(n), PoolScratch)
			if err != nil {
				return fmt.Errorf("runtime: transfer %w", err)
			}
			p.bufs[k] = dst
			src := p.bufs[valueKey{n, rt.from}]
			p.pre[rt.seg] = append(p.pre[rt.seg], transfer{node: n, from: rt.from, to: b, src: src, dst: dst, staging: make([]byte, bytesOf(n))})
		}
		return nil
	}
	aliasesOf := map[*tensor.Node][]*tensor.Node{}
	for n, d := range al {
		aliasesOf[d] = append(aliasesOf[d], n)
	}
	// share gives the lowered fused nodes whose result x is (and theirs, in turn) x's
	// buffer on b.
	var share func(x *tensor.Node, b Backend)
	share = func(x *tensor.Node, b Backend) {
		for _, n := range aliasesOf[x] {
			p.bufs[valueKey{n, b}] = p.bufs[valueKey{x, b}]
			share(n, b)
		}
	}
	free := freeList{}
	released := make(map[*tensor.Node]bool, nodes)
	next := 0
	for si, s := range segs {
		for ; next < len(rts) && rts[next].seg == si; next++ {
			if err := realize(rts[next]); err != nil {
				return nil, err
			}
		}
		for ni, n := range s.nodes {
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
				size := max(bytesOf(n), 4)
				buf := free.take(s.backend, size)
				if buf == nil {
					var err error
					if buf, err = fresh(s.backend, n, size, pool); err != nil {
						return nil, err
					}
				}
				p.bufs[k] = buf
			}
			share(n, s.backend)
			// Release the activations whose last reader is this node.
			for _, in := range n.Inputs() {
				b := al.base(in)
				if last, ok := l.last[b]; ok && last == (pos{si, ni}) && l.releasable(b) && !released[b] {
					free.put(s.backend, p.bufs[valueKey{b, s.backend}])
					released[b] = true
				}
			}
		}
	}
	return p, nil
}

// escapes is the Escapes set of segment si: its nodes whose values are read after it,
// because they are pinned (fetched, or read on another backend) or a later segment
// reads them (through Reshape views too), and the results of lowered fused nodes,
// whose readers name the fused node rather than the result.
func (sc *schedule) escapes(si int) map[*tensor.Node]bool {
	lowered := map[*tensor.Node]bool{}
	for _, d := range sc.al {
		lowered[sc.al.base(d)] = true
	}
	out := map[*tensor.Node]bool{}
	for _, n := range sc.segs[si].nodes {
		b := sc.al.base(n)
		if last, ok := sc.life.last[b]; sc.keep[n] || sc.life.pinned[b] || lowered[b] || (ok && last.seg > si) {
			out[n] = true
		}
	}
	return out
}
