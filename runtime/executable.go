package runtime

import (
	"errors"
	"fmt"
	"weak"

	"github.com/gml-dev/gml/tensor"
)

// Executable is a compiled graph: prepared programs for each segment, the buffers they
// use, and the transfers between them. Run it as often as needed; Free it when done.
type Executable struct {
	r         *Runtime
	outputs   []*tensor.Node
	inputs    []*tensor.Node
	segs      []segmentPlan
	progs     []Program
	place     *placement
	on        map[*tensor.Node]Backend
	fallbacks []*tensor.Node
	fed       map[valueKey]keptFeed // input buffers that hold a kept tensor (Runtime.Keep)
	freed     bool
}

// keptFeed is a kept tensor at the generation it was uploaded.
type keptFeed struct {
	t   weak.Pointer[tensor.Tensor]
	gen uint64
}

// Compile schedules the graph that computes outputs and prepares it on the devices.
// Outputs are the nodes to fetch plus side-effect nodes (Assign and the optimizer
// updates), which are run but not downloaded. Graph-building panics (*tensor.Error)
// raised while compiling are returned as errors.
func (r *Runtime) Compile(outputs []*tensor.Node) (e *Executable, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("runtime: Compile on a closed runtime")
	}
	if cerr := tensor.Catch(func() { e, err = r.compile(outputs) }); cerr != nil {
		return nil, cerr
	}
	return e, err
}

func (r *Runtime) compile(outputs []*tensor.Node) (*Executable, error) {
	nodes, err := collect(outputs)
	if err != nil {
		return nil, err
	}
	homes, err := variableHomes(nodes, r.vars, r.preferred, r.cpu)
	if err != nil {
		return nil, err
	}
	nodes, al := lower(nodes, r.preferred, r.cpu)
	for n, d := range al {
		r.logf("gml: %v runs on %s through its decomposition (%v)", n, r.preferred.Name(), d)
	}
	on, fallbacks := assign(nodes, r.preferred, r.cpu, homes)
	// A lowered fused node lives where its decomposition's result is computed.
	for n := range al {
		d := al[n]
		for al[d] != nil {
			d = al[d]
		}
		on[n] = on[d]
	}
	for _, n := range fallbacks {
		r.logf("gml: %v runs on the CPU: %s has no kernel for it", n, r.preferred.Name())
	}
	r.stats.Fallbacks += len(fallbacks)
	e := &Executable{r: r, outputs: outputs, on: on, fallbacks: fallbacks, fed: map[valueKey]keptFeed{}}
	for _, n := range nodes {
		if n.Op() == tensor.OpInput {
			e.inputs = append(e.inputs, n)
		}
	}
	e.segs = segment(nodes, on)
	keep := make(map[*tensor.Node]bool, len(outputs))
	for _, o := range outputs {
		keep[o] = true
	}
	// An output that is a source (an input echoed back, a variable) still needs a copy
	// on some backend to download from; the CPU is the cheapest.
	e.place, err = r.allocate(e.segs, routes(e.segs, on, al, homes), al, liveness(e.segs, on, al, keep), keep)
	if err != nil {
		e.release()
		return nil, err
	}
	for _, s := range e.segs {
		seg := &Segment{Nodes: s.nodes, Buffers: make(map[*tensor.Node]Buffer, 2*len(s.nodes))}
		for _, n := range s.nodes {
			seg.Buffers[n] = e.place.bufs[valueKey{n, s.backend}]
			for _, in := range n.Inputs() {
				seg.Buffers[in] = e.place.bufs[valueKey{in, s.backend}]
			}
		}
		prog, err := s.backend.Prepare(seg)
		if err != nil {
			e.release()
			return nil, fmt.Errorf("runtime: preparing %d nodes on %s: %w", len(s.nodes), s.backend.Name(), err)
		}
		e.progs = append(e.progs, prog)
	}
	return e, nil
}

// Fallbacks lists the nodes that run on the CPU because the preferred device lacks them.
func (e *Executable) Fallbacks() []*tensor.Node { return e.fallbacks }

// Inputs lists the graph inputs the executable must be fed.
func (e *Executable) Inputs() []*tensor.Node { return e.inputs }

// Run feeds the inputs, runs every segment and returns one host tensor per output (nil
// for side-effect outputs). It returns ErrInterrupted, without running, when the bound
// context was cancelled, so training loops that call Run per step stop cleanly.
func (e *Executable) Run(feeds map[*tensor.Node]*tensor.Tensor) ([]*tensor.Tensor, error) {
	if err := Interrupted(); err != nil {
		return nil, err
	}
	r := e.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := e.run(feeds); err != nil {
		return nil, err
	}
	out := make([]*tensor.Tensor, len(e.outputs))
	for i, o := range e.outputs {
		if len(o.Op().Writes()) > 0 {
			continue
		}
		t, err := e.output(i)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// RunResident runs like Run but downloads nothing: every output stays in its device
// buffer, where Output reads it, until the executable runs again. Callers that may
// never look at most outputs (ag keeps every recorded value readable this way) pay
// only for the ones they read.
func (e *Executable) RunResident(feeds map[*tensor.Node]*tensor.Tensor) error {
	if err := Interrupted(); err != nil {
		return err
	}
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	return e.run(feeds)
}

// Output downloads output i as the last run left it. Side-effect outputs (Assign, the
// optimizer updates) read the variable they wrote.
func (e *Executable) Output(i int) (*tensor.Tensor, error) {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	if e.freed {
		return nil, errors.New("runtime: Output of a freed executable")
	}
	if i < 0 || i >= len(e.outputs) {
		return nil, fmt.Errorf("runtime: output %d of an executable with %d outputs", i, len(e.outputs))
	}
	return e.output(i)
}

// output downloads output i; the caller holds the runtime's lock.
func (e *Executable) output(i int) (*tensor.Tensor, error) {
	o := e.outputs[i]
	b, buf, err := e.locate(o)
	if err != nil {
		return nil, err
	}
	t := tensor.New(o.DType(), o.Shape()...)
	if err := e.r.download(b, buf, t.Bytes()); err != nil {
		return nil, fmt.Errorf("runtime: fetching %v: %w", o, err)
	}
	return t, nil
}

// run uploads the feeds and runs every segment; the caller holds the runtime's lock.
func (e *Executable) run(feeds map[*tensor.Node]*tensor.Tensor) error {
	r := e.r
	if e.freed {
		return errors.New("runtime: Run on a freed executable")
	}
	for n := range feeds {
		if _, ok := e.place.feeds[n]; !ok && n.Op() == tensor.OpInput {
			return fmt.Errorf("runtime: feed for %v, which the outputs do not depend on", n)
		}
	}
	for _, in := range e.inputs {
		t, ok := feeds[in]
		if !ok || t == nil {
			return fmt.Errorf("runtime: input %q (%v%v) was not fed", in.Name(), in.DType(), in.Shape())
		}
		if t.DType() != in.DType() || !t.Shape().Equal(in.Shape()) {
			return fmt.Errorf("runtime: input %q wants %v%v, was fed %v%v", in.Name(), in.DType(), in.Shape(), t.DType(), t.Shape())
		}
		w := weak.Make(t)
		gen, kept := r.kept[w]
		for _, k := range e.place.feeds[in] {
			// Input buffers are written by feeds only (never reused for activations, and
			// in-place ops write variables alone), so one given this kept tensor still
			// holds it.
			if kept && e.fed[k] == (keptFeed{w, gen}) {
				r.stats.KeptFeeds++
				continue
			}
			delete(e.fed, k)
			if err := r.upload(k.backend, e.place.bufs[k], t.Bytes()); err != nil {
				return fmt.Errorf("runtime: feeding %q to %s: %w", in.Name(), k.backend.Name(), err)
			}
			if kept {
				e.fed[k] = keptFeed{w, gen}
			}
		}
	}
	for i, prog := range e.progs {
		for _, t := range e.place.pre[i] {
			if err := r.download(t.from, t.src, t.staging); err != nil {
				return fmt.Errorf("runtime: copying %v from %s: %w", t.node, t.from.Name(), err)
			}
			if err := r.upload(t.to, t.dst, t.staging); err != nil {
				return fmt.Errorf("runtime: copying %v to %s: %w", t.node, t.to.Name(), err)
			}
		}
		if err := prog.Run(r.prof); err != nil {
			return fmt.Errorf("runtime: %s: %w", e.segs[i].backend.Name(), err)
		}
	}
	return nil
}

// locate finds a buffer holding node n's value.
func (e *Executable) locate(n *tensor.Node) (Backend, Buffer, error) {
	if b, ok := e.on[n]; ok {
		if buf, ok := e.place.bufs[valueKey{n, b}]; ok {
			return b, buf, nil
		}
	}
	for k, buf := range e.place.bufs {
		if k.node == n {
			return k.backend, buf, nil
		}
	}
	switch n.Op() {
	case tensor.OpVariable:
		if res, ok := e.r.vars[n.Variable()]; ok {
			return res.backend, res.buf, nil
		}
	}
	return nil, nil, fmt.Errorf("runtime: output %v is not computed by this graph (an unread input or constant cannot be fetched)", n)
}

// Free releases the programs and buffers of the executable. Variables stay resident.
func (e *Executable) Free() {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	e.release()
}

func (e *Executable) release() {
	if e.freed {
		return
	}
	e.freed = true
	for _, p := range e.progs {
		p.Release()
	}
	if e.place != nil {
		for _, o := range e.place.owned {
			e.r.free(o.backend, o.buf, o.pool)
		}
	}
}

// Memory returns the bytes of the buffers the executable owns (activations, inputs and
// outputs, constants, transfer buffers), per pool. Variables are the runtime's, not
// the executable's, and are not counted.
func (e *Executable) Memory() [NumPools]int64 {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	var m [NumPools]int64
	if e.freed || e.place == nil {
		return m
	}
	for _, o := range e.place.owned {
		m[o.pool] += o.buf.Size()
	}
	return m
}
