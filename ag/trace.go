package ag

import (
	"errors"
	"fmt"
	"time"

	"github.com/gml-dev/gml/tensor"
)

// trace is one recorded graph: the ops since the last run, the host data they read,
// the variables they read and write, and the tensors whose values the run will hold.
type trace struct {
	tape    *Tape
	g       *tensor.Graph
	capture bool // a Capture's recording: no host data but inputs, no reads
	start   time.Time

	feeds    map[int]*tensor.Tensor // input node ID -> data fed at the run
	fedBy    map[*tensor.Tensor]*tensor.Node
	vis      []*Tensor // tensors whose values the run keeps, in record order
	vars     map[*tensor.Variable]*tensor.Node
	cur      map[*tensor.Variable]*tensor.Node // a variable's value after this trace's writes
	written  []*tensor.Variable                // variables assigned at the end of the run
	inplace  map[*tensor.Variable]bool         // variables an in-place update writes
	sinks    []*tensor.Node                    // those updates
	imported map[*Tensor]*tensor.Node
	// cuts are tensors that require a gradient but entered this trace by value, their
	// recipe no longer replayable: Backward cannot reach through them.
	cuts []*Tensor
	// seeds are the dropout-seed inputs, for Capture replays to feed fresh seeds.
	seeds []*tensor.Node
	// inputs are a Capture's input nodes, in argument order.
	inputs []*tensor.Node
	// scope is set while a Checkpoint's segment records; checkpoints lists the
	// segments recorded here, in order.
	scope       *ckScope
	checkpoints []*checkpoint
	// steps counts optimizer steps recorded here (their counters advance at the run).
	after []func()
}

func newTrace(tp *Tape) *trace {
	return &trace{
		tape: tp, g: tensor.NewGraph(), start: time.Now(),
		feeds: map[int]*tensor.Tensor{}, fedBy: map[*tensor.Tensor]*tensor.Node{},
		vars: map[*tensor.Variable]*tensor.Node{}, cur: map[*tensor.Variable]*tensor.Node{},
		inplace: map[*tensor.Variable]bool{}, imported: map[*Tensor]*tensor.Node{},
	}
}

// varNode returns the graph's node reading variable v's value before this trace's writes.
func (tr *trace) varNode(v *tensor.Variable) *tensor.Node {
	if n, ok := tr.vars[v]; ok {
		return n
	}
	n := tr.g.Var(v)
	tr.vars[v] = n
	return n
}

// read returns v's current value in this trace: after its pending assignment if any.
func (tr *trace) read(v *tensor.Variable) *tensor.Node {
	if n := tr.cur[v]; n != nil {
		return n
	}
	return tr.varNode(v)
}

// assign records that v takes value n at the end of the run (the last assignment wins).
func (tr *trace) assign(v *tensor.Variable, n *tensor.Node) {
	if _, ok := tr.cur[v]; !ok {
		tr.written = append(tr.written, v)
	}
	tr.cur[v] = n
}

// unassign drops v's pending assignment (ZeroGrad of a gradient not yet run).
func (tr *trace) unassign(v *tensor.Variable) {
	if _, ok := tr.cur[v]; ok {
		tr.cur[v] = nil
	}
}

// pendingWrite reports whether this trace writes v.
func (tr *trace) pendingWrite(v *tensor.Variable) bool {
	return tr.cur[v] != nil || tr.inplace[v]
}

// feed returns the input node fed with host data t.
func (tr *trace) feed(t *tensor.Tensor) *tensor.Node {
	if n, ok := tr.fedBy[t]; ok {
		return n
	}
	n := tr.g.Input(fmt.Sprintf("in%d", len(tr.feeds)), t.DType(), t.Shape()...)
	tr.feeds[n.ID()] = t
	tr.fedBy[t] = n
	return n
}

// nodeOf returns x's node in this trace, bringing x in when it was made elsewhere: a
// parameter is read, constant data fed, and a result of an earlier run replayed from
// its recipe when it needs a gradient (so Backward reaches through it) or its value is
// gone, else fed with its value.
func (tr *trace) nodeOf(op string, x *Tensor) *tensor.Node {
	if x.tr == tr {
		return x.node
	}
	if n, ok := tr.imported[x]; ok {
		return n
	}
	var n *tensor.Node
	switch {
	case x.p != nil:
		n = tr.read(x.p.v)
	case x.tr != nil && tr.capture:
		fail(op, "%s was recorded outside this Capture and has not run: pass it as an input of the captured function", x.describe())
	case x.tr != nil:
		fail(op, "%s belongs to a Capture's recording and has no value outside it", x.describe())
	case x.op == "seed":
		n = tr.feed(x.host)
		if tr.capture {
			tr.seeds = append(tr.seeds, n)
		}
	case tr.capture && x.emit == nil && x.ran.prog == nil:
		fail(op, "%s is host data that is not an input of the captured function: a replay would upload it again (or, worse, reuse stale data); pass it as an input", x.describe())
	case tr.capture:
		fail(op, "%s was computed outside this Capture: pass it as an input of the captured function", x.describe())
	case x.emit != nil && x.requiresGrad && x.replayable():
		n = tr.emitRecipe(op, x)
	default:
		v, err := x.fetch()
		switch {
		case err == nil:
			n = tr.feed(v)
			if x.requiresGrad && x.emit != nil {
				tr.cuts = append(tr.cuts, x)
			}
		case x.emit != nil && x.replayable():
			n = tr.emitRecipe(op, x)
		default:
			failErr(op, err)
		}
	}
	tr.imported[x] = n
	return n
}

// emitRecipe rebuilds x's node in this trace from its inputs.
func (tr *trace) emitRecipe(op string, x *Tensor) *tensor.Node {
	in := make([]*tensor.Node, len(x.in))
	for i, y := range x.in {
		in[i] = tr.nodeOf(op, y)
	}
	var n *tensor.Node
	build(x.op, func() { n = x.emit(emitContext{tr: tr, replay: true}, in) })
	return n
}

// replayable reports whether x's recipe still computes x's value: every parameter
// under it holds the version x's ops read.
func (x *Tensor) replayable() bool {
	if x.emit == nil {
		return true // leaves: constants hold their data; parameters are checked by readers
	}
	for i, y := range x.in {
		if x.vers != nil && x.vers[i] != 0 && y.p.version != x.vers[i] {
			return false
		}
		if y.emit != nil && !y.replayable() {
			return false
		}
	}
	return true
}

// discard marks every tensor of a trace that will not run as failed with err.
func (tr *trace) discard(err error) {
	for _, t := range tr.vis {
		if t.tr == tr {
			t.tr, t.node, t.err = nil, nil, err
		}
	}
}

// flush runs the open trace. The caller holds t.mu.
func (t *Tape) flush() error {
	tr := t.open
	if tr == nil {
		return nil
	}
	t.open = nil
	if len(tr.vis) == 0 && len(tr.written) == 0 && len(tr.sinks) == 0 {
		return nil
	}
	if t.prof != nil {
		t.prof.beginRun(t, tr)
	}
	outs, err := tr.outputs()
	if err != nil {
		tr.discard(err)
		return err
	}
	if len(outs) == 0 { // every write was dropped (ZeroGrad of a pending gradient)
		return nil
	}
	prog, err := t.program(tr, outs)
	if err == nil {
		err = t.run(tr, prog)
	}
	if err != nil {
		err = fmt.Errorf("running the recorded ops (%s): %w", tr.summary(), err)
		tr.discard(err)
		return err
	}
	tr.bind(prog)
	return nil
}

// outputs lists what a run produces: the value of every recorded tensor, then the
// writes of variables (assignments and in-place updates).
func (tr *trace) outputs() (outs []*tensor.Node, err error) {
	outs = make([]*tensor.Node, 0, len(tr.vis)+len(tr.written)+len(tr.sinks))
	for _, x := range tr.vis {
		outs = append(outs, x.node)
	}
	err = tensor.Catch(func() {
		for _, v := range tr.written {
			if n := tr.cur[v]; n != nil {
				outs = append(outs, tensor.Assign(tr.varNode(v), n))
			}
		}
	})
	return append(outs, tr.sinks...), err
}

// run feeds a trace's data to its program and runs it, leaving values on the device.
func (t *Tape) run(tr *trace, prog *program) error {
	feeds := make(map[*tensor.Node]*tensor.Tensor, len(prog.inputs))
	for _, in := range prog.inputs {
		d, ok := tr.feeds[in.ID()]
		if !ok {
			return fmt.Errorf("internal error: no data for %v", in)
		}
		feeds[in] = d
	}
	t0 := time.Now()
	err := prog.exe.RunResident(feeds)
	if p := t.prof; p != nil {
		p.cur.run += time.Since(t0)
	}
	prog.gen++
	if err != nil {
		return err
	}
	if t.anomaly {
		return tr.checkAnomaly(prog)
	}
	return nil
}

// bind points every tensor of a trace that ran at its value in the program's buffers,
// and applies what the run changed: variable versions, gradient flags, counters.
func (tr *trace) bind(prog *program) {
	for i, x := range tr.vis {
		x.tr, x.node = nil, nil
		x.ran = runRef{prog: prog, out: i, gen: prog.gen}
	}
	tp := tr.tape
	for _, v := range tr.written {
		if tr.cur[v] != nil {
			tp.wrote(v)
		}
	}
	for v := range tr.inplace {
		tp.wrote(v)
	}
	for _, f := range tr.after {
		f()
	}
}

// wrote records that a run changed variable v.
func (t *Tape) wrote(v *tensor.Variable) {
	p := t.params[v]
	if p == nil {
		return
	}
	if p.v == v {
		p.version++
	} else {
		p.gradSet = true
	}
}

// summary describes a trace in errors: its size and its first few ops.
func (tr *trace) summary() string {
	s := fmt.Sprintf("%d recorded tensors", len(tr.vis))
	if len(tr.vis) > 0 {
		s += fmt.Sprintf(", from %s", tr.vis[0].describe())
	}
	return s
}

// runRef is the output of one run of a program that holds a tensor's value.
type runRef struct {
	prog *program
	out  int
	gen  uint64
}

// errExpired is the cause reported for a value whose run was overwritten.
var errExpired = errors.New("its value is no longer held: the program that computed it ran again (the next step) or was freed, and a parameter it depends on has changed since, so it cannot be recomputed; read values you keep across steps (Item, Value) before the next step")

// fetch returns x's value from the host copy or the device buffers of its run, without
// running anything. The caller holds the tape's lock.
func (x *Tensor) fetch() (*tensor.Tensor, error) {
	if x.err != nil {
		return nil, x.err
	}
	if x.host != nil {
		return x.host, nil
	}
	r := x.ran
	if r.prog == nil || r.prog.freed || r.prog.gen != r.gen {
		return nil, fmt.Errorf("%s: %w", x.describe(), errExpired)
	}
	t0 := time.Now()
	v, err := r.prog.exe.Output(r.out)
	if err != nil {
		return nil, err
	}
	if p := x.tape.prof; p != nil {
		p.cur.download += time.Since(t0)
		p.cur.downloads++
	}
	x.host = v
	return v, nil
}
