package runtime

import (
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"time"
	"weak"

	"github.com/gml-dev/gml/tensor"
)

// Executable is a compiled graph: prepared programs for each segment, the buffers they
// use, and the transfers between them. Run it as often as needed; Free it when done.
//
// An Executable is what ggml calls a plan: prepared once, computed many times, freed.
// Besides Run, a cell can drive it step by step: Set (or Bind to a device buffer) the
// inputs, Compute (or ComputeAsync), Read the outputs. An executable that becomes
// unreachable is freed when collected; every call after Free returns an error.
type Executable struct {
	*execState
	outputs   []*tensor.Node
	inputs    []*tensor.Node
	segs      []segmentPlan
	on        map[*tensor.Node]Backend
	fallbacks []*tensor.Node
	fed       map[valueKey]keptFeed           // input buffers that hold a kept tensor (Runtime.Keep)
	feeds     map[*tensor.Node]*tensor.Tensor // Set
	binds     map[*tensor.Node]*DeviceBuffer  // Bind
	pending   *Event                          // the last ComputeAsync, which Read waits for
}

// execState is what an executable frees, shared with its cleanup (which must not reach
// the Executable).
type execState struct {
	r     *Runtime
	progs []Program
	place *placement
	freed bool
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
	sc, err := r.plan(outputs, r)
	if err != nil {
		return nil, err
	}
	for n, d := range sc.al {
		r.logf("gml: %v runs on %s through its decomposition (%v)", n, r.preferred.Name(), d)
	}
	for _, n := range sc.fallbacks {
		r.logf("gml: %v runs on the CPU: %s", n, whyUnsupported(r.preferred, n))
	}
	r.stats.Fallbacks += len(sc.fallbacks)
	e := &Executable{execState: &execState{r: r, place: sc.place}, outputs: outputs, on: sc.on, fallbacks: sc.fallbacks, segs: sc.segs,
		fed: map[valueKey]keptFeed{}, feeds: map[*tensor.Node]*tensor.Tensor{}, binds: map[*tensor.Node]*DeviceBuffer{}}
	for _, n := range sc.nodes {
		if n.Op() == tensor.OpInput {
			e.inputs = append(e.inputs, n)
		}
	}
	for si, s := range e.segs {
		seg := &Segment{Nodes: s.nodes, Buffers: make(map[*tensor.Node]Buffer, 2*len(s.nodes)), Escapes: sc.escapes(si)}
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
	goruntime.AddCleanup(e, func(st *execState) {
		st.r.mu.Lock()
		defer st.r.mu.Unlock()
		st.release()
	}, e.execState)
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
	if err := e.run(feeds, nil); err != nil {
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
	return e.run(feeds, nil)
}

// Output downloads output i as the last run left it. Side-effect outputs (Assign, the
// optimizer updates) read the variable they wrote.
func (e *Executable) Output(i int) (*tensor.Tensor, error) {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	if e.freed {
		return nil, fmt.Errorf("runtime: Output of a freed executable: %w", ErrFreed)
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

// run uploads the feeds (host tensors, or device buffers bound to inputs) and runs
// every segment; the caller holds the runtime's lock.
func (e *Executable) run(feeds map[*tensor.Node]*tensor.Tensor, binds map[*tensor.Node]*DeviceBuffer) error {
	if err := e.check("Run"); err != nil {
		return err
	}
	tl := activeTimeline()
	if err := e.feed(feeds, binds, tl); err != nil {
		return err
	}
	r := e.r
	for i, prog := range e.progs {
		for _, t := range e.place.pre[i] {
			start := time.Now()
			if err := r.download(t.from, t.src, t.staging); err != nil {
				return fmt.Errorf("runtime: copying %v from %s: %w", t.node, t.from.Name(), err)
			}
			if err := r.upload(t.to, t.dst, t.staging); err != nil {
				return fmt.Errorf("runtime: copying %v to %s: %w", t.node, t.to.Name(), err)
			}
			if tl != nil {
				tl.add(backendID(t.to)+" transfer", fmt.Sprintf("copy %s→%s %s", backendID(t.from), backendID(t.to), FormatBytes(int64(len(t.staging)))), start, time.Now())
			}
		}
		start := time.Now()
		if err := prog.Run(r.prof); err != nil {
			return fmt.Errorf("runtime: %s: %w", e.segs[i].backend.Name(), err)
		}
		if tl != nil {
			tl.add(backendID(e.segs[i].backend)+" compute", e.segmentLabel(i), start, time.Now())
		}
	}
	return nil
}

// check reports an executable that cannot run: freed, or its runtime closed.
func (e *Executable) check(op string) error {
	if e.freed {
		return fmt.Errorf("runtime: %s of a freed executable: %w", op, ErrFreed)
	}
	if e.r.closed {
		return fmt.Errorf("runtime: %s of an executable whose runtime was closed", op)
	}
	return nil
}

// segmentLabel names segment i for timelines: "compute matmul, add, relu".
func (e *Executable) segmentLabel(i int) string {
	var ops []string
	seen := map[tensor.Op]bool{}
	for _, n := range e.segs[i].nodes {
		if !seen[n.Op()] && len(ops) < 3 {
			seen[n.Op()] = true
			ops = append(ops, n.Op().String())
		}
	}
	return "compute " + strings.Join(ops, ", ")
}

// feed uploads every input: its host tensor, or a copy of the device buffer bound to
// it. The caller holds the runtime's lock.
func (e *Executable) feed(feeds map[*tensor.Node]*tensor.Tensor, binds map[*tensor.Node]*DeviceBuffer, tl *Timeline) error {
	r := e.r
	for n := range feeds {
		if _, ok := e.place.feeds[n]; !ok && n.Op() == tensor.OpInput {
			return fmt.Errorf("runtime: feed for %v, which the outputs do not depend on", n)
		}
	}
	for _, in := range e.inputs {
		if db := binds[in]; db != nil {
			if err := e.feedBuffer(in, db, tl); err != nil {
				return err
			}
			continue
		}
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
			start := time.Now()
			if err := r.upload(k.backend, e.place.bufs[k], t.Bytes()); err != nil {
				return fmt.Errorf("runtime: feeding %q to %s: %w", in.Name(), k.backend.Name(), err)
			}
			if tl != nil && !r.isHost(k.backend) {
				tl.add(backendID(k.backend)+" transfer", fmt.Sprintf("upload %s %s", in.Name(), FormatBytes(int64(len(t.Bytes())))), start, time.Now())
			}
			if kept {
				e.fed[k] = keptFeed{w, gen}
			}
		}
	}
	return nil
}

// feedBuffer copies a device buffer into input in's buffers: on the device when they
// share it, else through the host.
func (e *Executable) feedBuffer(in *tensor.Node, db *DeviceBuffer, tl *Timeline) error {
	st, err := db.use("Bind")
	if err != nil {
		return fmt.Errorf("runtime: input %q: %w", in.Name(), err)
	}
	defer st.mu.Unlock()
	n := bytesOf(in)
	for _, k := range e.place.feeds[in] {
		delete(e.fed, k)
		start := time.Now()
		if err := copyBuffers(k.backend, e.place.bufs[k], n, st.b, st.buf, n); err != nil {
			return fmt.Errorf("runtime: feeding %q from %v: %w", in.Name(), db, err)
		}
		if tl != nil {
			tl.add(backendID(k.backend)+" transfer", fmt.Sprintf("copy %s %s", in.Name(), FormatBytes(n)), start, time.Now())
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
// It is safe to call more than once.
func (e *Executable) Free() {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	e.release()
}

// release frees what the executable owns; the caller holds the runtime's lock.
func (st *execState) release() {
	if st.freed {
		return
	}
	st.freed = true
	for _, p := range st.progs {
		p.Release()
	}
	if st.place != nil {
		for _, o := range st.place.owned {
			st.r.free(o.backend, o.buf, o.pool)
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
