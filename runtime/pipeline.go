package runtime

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/tensor"
)

// Pipeline runs a graph split by layers into stages, one per device: the cut nodes
// (activations) end one stage and feed the next. The batch is divided by rows into
// micro-batches, and each stage works on the next micro-batch while the later stages
// work on earlier ones, so every device is busy once the pipeline fills. It is for
// inference on models too large for one device: rows must be computed independently
// (no normalisation over the batch, no sum over rows) and nothing may update a
// variable; a graph that breaks either rule is refused with the node named. Over one
// physical device the stages are replicas of it, which tests the pipelining; the
// results equal one device's.
type Pipeline struct {
	devices []*PhysicalDevice
	parts   []*Runtime
	outputs []*tensor.Node
	inputs  []*tensor.Node
	plan    *metaPlan
	stage   map[*tensor.Node]int // computed node -> its stage
	exports map[*tensor.Node]bool
	micro   int
	batch   int
	steps   [][]*pipeStep // per micro-batch, per stage
	times   []time.Duration
	last    time.Duration
	mu      sync.Mutex
}

// pipeStep is one stage's executable for one micro-batch.
type pipeStep struct {
	exe    *Executable
	rows   [2]int
	feeds  []partFeed // graph inputs (rows of the batch) and values of earlier stages
	fetch  []*tensor.Node
	stage  int
	device string
}

// NewPipeline compiles the graph that computes outputs into stages on devices (one
// more device than cuts; a device may repeat), running micro micro-batches per batch.
func NewPipeline(devices []*PhysicalDevice, outputs, cuts []*tensor.Node, micro int) (pl *Pipeline, err error) {
	switch {
	case len(devices) == 0:
		return nil, errors.New("runtime: NewPipeline needs at least one device")
	case len(cuts) != len(devices)-1:
		return nil, fmt.Errorf("runtime: NewPipeline: %d cuts for %d devices; give one cut (the activation between two stages) fewer than devices", len(cuts), len(devices))
	case micro < 1:
		return nil, fmt.Errorf("runtime: NewPipeline: %d micro-batches; want at least 1", micro)
	}
	if cerr := tensor.Catch(func() { pl, err = newPipeline(devices, outputs, cuts, micro) }); cerr != nil {
		return nil, cerr
	}
	return pl, err
}

func newPipeline(devices []*PhysicalDevice, outputs, cuts []*tensor.Node, micro int) (*Pipeline, error) {
	nodes, err := collect(outputs)
	if err != nil {
		return nil, err
	}
	plan, err := planMeta(nodes, SplitRows)
	if err != nil {
		return nil, err
	}
	pl := &Pipeline{devices: append([]*PhysicalDevice(nil), devices...), outputs: outputs, plan: plan,
		stage: map[*tensor.Node]int{}, exports: map[*tensor.Node]bool{}, micro: micro, batch: -1}
	isCut := map[*tensor.Node]int{}
	for i, c := range cuts {
		isCut[c] = i + 1
	}
	for _, n := range nodes {
		if n.Op() == tensor.OpInput {
			pl.inputs = append(pl.inputs, n)
			if ax := plan.axis[n]; ax >= 0 {
				if pl.batch >= 0 && pl.batch != n.Shape()[0] {
					return nil, fmt.Errorf("runtime: pipeline: inputs of %d and %d rows; the inputs' first axis is the batch", pl.batch, n.Shape()[0])
				}
				pl.batch = n.Shape()[0]
			}
		}
		if isSource(n) {
			if isCut[n] > 0 {
				return nil, fmt.Errorf("runtime: pipeline: cut %v is a source; cut at an activation", n)
			}
			continue
		}
		if len(n.Op().Writes()) > 0 {
			return nil, fmt.Errorf("runtime: pipeline: %v updates a variable; a pipeline runs inference", n)
		}
		if plan.axis[n] == partial || plan.phase[n] > 0 || plan.axis[n] > 0 {
			return nil, fmt.Errorf("runtime: pipeline: %v mixes the rows of the batch; a pipeline computes rows independently", n)
		}
		s := 0
		for i, x := range n.Inputs() {
			if plan.conv[n][i] != asIs && plan.conv[n][i] != slice {
				return nil, fmt.Errorf("runtime: pipeline: %v mixes the rows of the batch; a pipeline computes rows independently", n)
			}
			if isSource(x) {
				continue
			}
			t := pl.stage[x]
			if isCut[x] > 0 {
				t = max(t, isCut[x])
			}
			s = max(s, t)
		}
		if c := isCut[n]; c > 0 && s > c-1 {
			return nil, fmt.Errorf("runtime: pipeline: cut %d (%v) depends on cut %d; give the cuts in order", c, n, s)
		}
		pl.stage[n] = s
	}
	for i, c := range cuts {
		if _, ok := pl.stage[c]; !ok {
			return nil, fmt.Errorf("runtime: pipeline: cut %d (%v) is not computed on the way to the outputs", i+1, c)
		}
	}
	for _, n := range nodes {
		for _, x := range n.Inputs() {
			if !isSource(x) && !isSource(n) && pl.stage[x] < pl.stage[n] {
				pl.exports[x] = true
			}
		}
	}
	if pl.batch < micro {
		return nil, fmt.Errorf("runtime: pipeline: a batch of %d rows cannot make %d micro-batches (the inputs' first axis is the batch)", max(pl.batch, 0), micro)
	}
	cpu, err := open("cpu")
	if err != nil {
		return nil, err
	}
	for _, d := range devices {
		b, err := d.Open()
		if err != nil {
			return nil, err
		}
		pl.parts = append(pl.parts, newRuntime(b, cpu))
	}
	for j := range micro {
		rows := [2]int{pl.batch * j / micro, pl.batch * (j + 1) / micro}
		var steps []*pipeStep
		for s := range devices {
			st, err := pl.build(s, rows)
			if err != nil {
				pl.Close()
				return nil, err
			}
			steps = append(steps, st)
		}
		pl.steps = append(pl.steps, steps)
	}
	pl.times = make([]time.Duration, len(devices))
	return pl, nil
}

// build compiles stage s for the micro-batch of rows.
func (pl *Pipeline) build(s int, rows [2]int) (*pipeStep, error) {
	g := tensor.NewGraph()
	st := &pipeStep{rows: rows, stage: s, device: pl.devices[s].id}
	made := map[*tensor.Node]*tensor.Node{}
	value := func(x *tensor.Node) *tensor.Node {
		if v := made[x]; v != nil {
			return v
		}
		var v *tensor.Node
		switch {
		case x.Op() == tensor.OpInput:
			shape := x.Shape().Clone()
			if pl.plan.axis[x] == 0 {
				shape[0] = rows[1] - rows[0]
			}
			v = g.Input(x.Name(), x.DType(), shape...)
			st.feeds = append(st.feeds, partFeed{node: v, orig: x, whole: pl.plan.axis[x] != 0})
		case x.Op() == tensor.OpConst:
			v = g.Const(x.Value())
		case x.Op() == tensor.OpVariable:
			v = g.Var(x.Variable())
		default: // a value of an earlier stage: this micro-batch's rows of it
			shape := x.Shape().Clone()
			if pl.plan.axis[x] == 0 {
				shape[0] = rows[1] - rows[0]
			}
			v = g.Input(fmt.Sprintf("%s (stage %d)", nodeName(x), pl.stage[x]+1), x.DType(), shape...)
			st.feeds = append(st.feeds, partFeed{node: v, orig: x, carried: true})
		}
		made[x] = v
		return v
	}
	for _, n := range pl.plan.nodes {
		if isSource(n) || pl.stage[n] != s {
			continue
		}
		in := make([]*tensor.Node, len(n.Inputs()))
		for i, x := range n.Inputs() {
			in[i] = value(x)
			if pl.plan.conv[n][i] == slice {
				in[i] = tensor.SliceAxis(in[i], pl.plan.sliceA[n][i], rows[0], rows[1])
			}
		}
		var x *tensor.Node
		if err := tensor.Catch(func() { x = applyPart(n, in, pl.plan.axis[n]) }); err != nil {
			return nil, fmt.Errorf("runtime: pipeline: %v in stage %d: %w", n, s+1, err)
		}
		made[n] = x
	}
	var out []*tensor.Node
	for _, o := range pl.outputs {
		if !isSource(o) && pl.stage[o] == s {
			st.fetch, out = append(st.fetch, o), append(out, made[o])
		}
	}
	for _, n := range pl.plan.nodes {
		if pl.exports[n] && pl.stage[n] == s {
			st.fetch, out = append(st.fetch, n), append(out, made[n])
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("runtime: pipeline: stage %d computes nothing the outputs need", s+1)
	}
	exe, err := pl.parts[s].Compile(out)
	if err != nil {
		return nil, fmt.Errorf("runtime: pipeline: stage %d on %s: %w", s+1, pl.devices[s].id, err)
	}
	st.exe = exe
	return st, nil
}

// Run feeds a batch through the stages, micro-batch by micro-batch, and joins the
// outputs' rows.
func (pl *Pipeline) Run(feeds map[*tensor.Node]*tensor.Tensor) ([]*tensor.Tensor, error) {
	if err := Interrupted(); err != nil {
		return nil, err
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.steps == nil {
		return nil, fmt.Errorf("runtime: Run of a closed pipeline: %w", ErrFreed)
	}
	for _, in := range pl.inputs {
		t := feeds[in]
		if t == nil || t.DType() != in.DType() || !t.Shape().Equal(in.Shape()) {
			return nil, fmt.Errorf("runtime: pipeline: input %q wants %v%v, was fed %v", in.Name(), in.DType(), in.Shape(), describe(t))
		}
	}
	start := time.Now()
	stages := len(pl.devices)
	vals := make([]map[*tensor.Node]*tensor.Tensor, pl.micro) // per micro-batch
	done := make([][]chan struct{}, stages)
	for s := range done {
		done[s] = make([]chan struct{}, pl.micro)
		for j := range done[s] {
			done[s][j] = make(chan struct{})
		}
	}
	for j := range vals {
		vals[j] = map[*tensor.Node]*tensor.Tensor{}
	}
	var vmu sync.Mutex
	errs := make([]error, stages)
	var wg sync.WaitGroup
	for s := range stages {
		pl.times[s] = 0
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range pl.micro {
				if s > 0 {
					<-done[s-1][j]
				}
				vmu.Lock()
				failed := errors.Join(errs...) != nil
				vmu.Unlock()
				if !failed {
					t0 := time.Now()
					err := pl.step(pl.steps[j][s], feeds, vals[j], &vmu)
					pl.times[s] += time.Since(t0)
					if err != nil {
						vmu.Lock()
						errs[s] = fmt.Errorf("runtime: pipeline: stage %d on %s, micro-batch %d: %w", s+1, pl.devices[s].id, j+1, err)
						vmu.Unlock()
					}
				}
				close(done[s][j])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]*tensor.Tensor, len(pl.outputs))
	for i, o := range pl.outputs {
		if pl.plan.axis[o] != 0 {
			out[i] = vals[0][o]
			continue
		}
		parts := make([]*tensor.Tensor, pl.micro)
		for j := range parts {
			parts[j] = vals[j][o]
		}
		t, err := concatAxis(parts, 0)
		if err != nil {
			return nil, fmt.Errorf("runtime: pipeline: joining %v: %w", o, err)
		}
		out[i] = t
	}
	pl.last = time.Since(start)
	return out, nil
}

// step runs one stage on one micro-batch.
func (pl *Pipeline) step(st *pipeStep, feeds, vals map[*tensor.Node]*tensor.Tensor, vmu *sync.Mutex) error {
	pf := make(map[*tensor.Node]*tensor.Tensor, len(st.feeds))
	vmu.Lock()
	for _, f := range st.feeds {
		if f.carried {
			pf[f.node] = vals[f.orig]
		}
	}
	vmu.Unlock()
	for _, f := range st.feeds {
		if f.carried {
			continue
		}
		t := feeds[f.orig]
		if !f.whole {
			var err error
			if t, err = sliceAxis(t, 0, st.rows[0], st.rows[1]); err != nil {
				return err
			}
		}
		pf[f.node] = t
	}
	res, err := st.exe.Run(pf)
	if err != nil {
		return err
	}
	vmu.Lock()
	for i, o := range st.fetch {
		vals[o] = res[i]
	}
	vmu.Unlock()
	return nil
}

// Stages is the number of stages; Micro the number of micro-batches per batch.
func (pl *Pipeline) Stages() int { return len(pl.devices) }

// Micro is the number of micro-batches a batch is divided into.
func (pl *Pipeline) Micro() int { return pl.micro }

// Close frees the stages' executables and runtimes.
func (pl *Pipeline) Close() error {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for _, steps := range pl.steps {
		for _, st := range steps {
			if st != nil && st.exe != nil {
				st.exe.Free()
			}
		}
	}
	pl.steps = nil
	var errs []error
	for _, r := range pl.parts {
		errs = append(errs, r.Close())
	}
	pl.parts = nil
	return errors.Join(errs...)
}

func (pl *Pipeline) table() *display.Table {
	t := display.NewTable("stage", "device", "nodes", "busy in the last run")
	count := make([]int, len(pl.devices))
	for _, s := range pl.stage {
		count[s]++
	}
	for s, d := range pl.devices {
		t.Row(s+1, d.id, count[s], pl.times[s].Round(time.Microsecond).String())
	}
	ids := make([]string, len(pl.devices))
	for i, d := range pl.devices {
		ids[i] = d.id
	}
	return t.Caption(fmt.Sprintf("pipeline over %s: %d stages, %d micro-batches; last run %v",
		strings.Join(ids, ", "), len(pl.devices), pl.micro, pl.last.Round(time.Microsecond)))
}

// MIMEBundle renders the stages as a table.
func (pl *Pipeline) MIMEBundle() map[string]any { return pl.table().MIMEBundle() }

// String renders the stages as a text table.
func (pl *Pipeline) String() string { return pl.table().String() }
