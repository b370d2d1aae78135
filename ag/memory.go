package ag

import (
	"fmt"
	"sort"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// MemoryReport is what a tape holds on its device, in two parts: memory the
// parameters keep alive whatever happens (their values, gradients, optimizer state,
// buffers), and memory the tape holds for the values it recorded, which Clear frees:
// per op kind, the values of each compiled step's last run (kept readable until the
// step runs again), and the rest of the compiled programs' buffers (intermediate
// values reused within a run, inputs, constants). Views (reshapes, detached tensors)
// share their source's storage and are counted once, with the source. In a notebook
// it renders as a table.
type MemoryReport struct {
	Device   string
	Kept     []MemoryLine // parameters, gradients, optimizer state, buffers
	Held     []MemoryLine // recorded values by op kind, then "other program buffers"
	Pending  int          // ops recorded and not yet run
	Programs int          // compiled steps in the cache
}

// MemoryLine is one row of a MemoryReport.
type MemoryLine struct {
	What  string
	Count int
	Bytes int64
}

// KeptBytes is the memory the parameters keep alive.
func (r *MemoryReport) KeptBytes() int64 { return sumLines(r.Kept) }

// HeldBytes is the memory Clear would free.
func (r *MemoryReport) HeldBytes() int64 { return sumLines(r.Held) }

func sumLines(ls []MemoryLine) int64 {
	var n int64
	for _, l := range ls {
		n += l.Bytes
	}
	return n
}

func (r *MemoryReport) table() *display.Table {
	t := display.NewTable("part", "what", "count", "bytes")
	for _, l := range r.Kept {
		t.Row("kept by parameters", l.What, l.Count, runtime.FormatBytes(l.Bytes))
	}
	for _, l := range r.Held {
		t.Row("held by the tape", l.What, l.Count, runtime.FormatBytes(l.Bytes))
	}
	return t.Caption(fmt.Sprintf("tape memory on %s: %s kept by parameters, %s held by the tape (Clear frees it) in %d compiled steps; %d ops pending",
		r.Device, runtime.FormatBytes(r.KeptBytes()), runtime.FormatBytes(r.HeldBytes()), r.Programs, r.Pending))
}

// MIMEBundle renders the report as an HTML table.
func (r *MemoryReport) MIMEBundle() map[string]any { return r.table().MIMEBundle() }

// String renders the report as a text table.
func (r *MemoryReport) String() string { return r.table().String() }

// TapeMemory reports what the current tape holds on its device.
func TapeMemory() *MemoryReport { return CurrentTape().Memory() }

// Memory reports what the tape holds on its device (see MemoryReport).
func (t *Tape) Memory() *MemoryReport {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &MemoryReport{Device: t.rt.DeviceInfo().Name, Programs: len(t.cache.byKey)}
	var kept [4]MemoryLine
	kept[0].What, kept[1].What, kept[2].What, kept[3].What = "parameters", "gradients", "optimizer state", "buffers"
	bytes := func(v *tensor.Variable) int64 { return int64(v.Shape().Size() * v.DType().Size()) }
	for v, p := range t.params {
		switch {
		case p.g == v:
			kept[1].Count++
			kept[1].Bytes += bytes(v)
		case p.buffer:
			kept[3].Count++
			kept[3].Bytes += bytes(v)
		default:
			kept[0].Count++
			kept[0].Bytes += bytes(v)
		}
	}
	for v := range t.slots {
		kept[2].Count++
		kept[2].Bytes += bytes(v)
	}
	for _, l := range kept {
		if l.Count > 0 {
			r.Kept = append(r.Kept, l)
		}
	}
	byOp := map[string]*MemoryLine{}
	var other MemoryLine
	other.What = "other program buffers"
	for _, p := range t.cache.byKey {
		var outs int64
		for _, h := range p.held {
			l := byOp[h.op]
			if l == nil {
				l = &MemoryLine{What: h.op}
				byOp[h.op] = l
			}
			l.Count++
			l.Bytes += h.bytes
			outs += h.bytes
		}
		m := p.exe.Memory()
		var total int64
		for _, b := range m {
			total += b
		}
		other.Count++
		other.Bytes += max(total-outs, 0)
	}
	for _, l := range byOp {
		r.Held = append(r.Held, *l)
	}
	sort.Slice(r.Held, func(i, j int) bool {
		if r.Held[i].Bytes != r.Held[j].Bytes {
			return r.Held[i].Bytes > r.Held[j].Bytes
		}
		return r.Held[i].What < r.Held[j].What
	})
	if other.Count > 0 {
		r.Held = append(r.Held, other)
	}
	if t.open != nil {
		r.Pending = len(t.open.vis)
	}
	return r
}

// ModelShapes describes a model for EstimateTrainingMemory without any device memory:
// its parameter shapes, and the shapes of the values its forward pass records per
// sample (batch axis removed), with the element size of each.
type ModelShapes struct {
	Params      [][]int
	Activations [][]int
	Input       []int // one sample's input
	ElemBytes   int   // bytes per element (4 for f32)
	InputBytes  int   // bytes per input element (4 for f32, 8 for i64 ids)
}

// ShapesOf records model's forward pass on one sample shaped sample (dtype dt) without
// running it and returns the shapes EstimateTrainingMemory needs. It allocates nothing
// on the device.
func ShapesOf(model Module, sample []int, dt tensor.DType) *ModelShapes {
	if model == nil {
		fail("shapes_of", "nil model")
	}
	tp := CurrentTape()
	tr := newTrace(tp)
	tr.capture = true
	s := &ModelShapes{Input: append([]int(nil), sample...), ElemBytes: 4, InputBytes: dt.Size()}
	for _, p := range Parameters(model) {
		s.Params = append(s.Params, p.Shape())
	}
	x := &Tensor{tape: tp, dtype: dt, shape: append(tensor.Shape{1}, sample...), op: "input", tr: tr}
	x.node = tr.g.Input("x", dt, x.shape...)
	tp.mu.Lock()
	if tp.rec != nil {
		tp.mu.Unlock()
		fail("shapes_of", "cannot run while a Capture records")
	}
	tp.rec = tr
	tp.mu.Unlock()
	defer func() {
		tp.mu.Lock()
		tp.rec = nil
		tp.mu.Unlock()
		tr.discard(fmt.Errorf("it was recorded by ShapesOf, which runs nothing"))
	}()
	model.Forward(x)
	for _, v := range tr.vis {
		if v.node.Op() == tensor.OpReshape || !v.dtype.IsFloat() {
			continue
		}
		s.Activations = append(s.Activations, []int(v.node.Shape()[1:].Clone()))
	}
	return s
}

// MemoryEstimate is EstimateTrainingMemory's result, part by part, in bytes.
type MemoryEstimate struct {
	Weights, Gradients, OptimizerState, GradientTemps int64
	Inputs, Activations, BackwardWork                 int64
	Batch                                             int
	Optimizer                                         string
}

// Total is the estimated peak.
func (e *MemoryEstimate) Total() int64 {
	return e.Weights + e.Gradients + e.OptimizerState + e.GradientTemps + e.Inputs + e.Activations + e.BackwardWork
}

func (e *MemoryEstimate) table() *display.Table {
	t := display.NewTable("part", "bytes")
	for _, r := range []struct {
		n string
		b int64
	}{{"weights", e.Weights}, {"gradients (accumulated)", e.Gradients}, {"optimizer state (" + e.Optimizer + ")", e.OptimizerState},
		{"gradients in flight", e.GradientTemps}, {"inputs", e.Inputs}, {"recorded values (forward)", e.Activations},
		{"backward working set", e.BackwardWork}} {
		t.Row(r.n, runtime.FormatBytes(r.b))
	}
	t.Row("total", runtime.FormatBytes(e.Total()))
	return t.Caption(fmt.Sprintf("estimated device memory of one training step at batch %d", e.Batch))
}

// MIMEBundle renders the estimate as an HTML table.
func (e *MemoryEstimate) MIMEBundle() map[string]any { return e.table().MIMEBundle() }

// String renders the estimate as a text table.
func (e *MemoryEstimate) String() string { return e.table().String() }

// EstimateTrainingMemory estimates the device memory of one deferred training step
// (forward, Backward, the optimizer's Step) of a model with these shapes at a batch
// size, before any of it exists on the device: weights, accumulated gradients, the
// optimizer's state ("sgd" and "rmsprop" keep one value per weight, "adam" and "adamw"
// two), the gradients a step computes before they update the weights, the input
// batch, every recorded forward value (the tape keeps them readable until the step
// runs again) and the backward pass's working set (about two of the largest values).
// ShapesOf gives the shapes of a model written with ag; they can also be written by
// hand for a model that does not exist yet.
func EstimateTrainingMemory(s *ModelShapes, batch int, optimizer string) *MemoryEstimate {
	positive("estimate_training_memory", "batch", batch)
	slots := map[string]int64{"sgd": 1, "rmsprop": 1, "adam": 2, "adamw": 2}
	k, ok := slots[optimizer]
	if !ok {
		fail("estimate_training_memory", "unknown optimizer %q (want sgd, rmsprop, adam or adamw)", optimizer)
	}
	eb := int64(s.ElemBytes)
	if eb == 0 {
		eb = 4
	}
	size := func(shape []int) int64 {
		n := int64(1)
		for _, d := range shape {
			n *= int64(d)
		}
		return n
	}
	e := &MemoryEstimate{Batch: batch, Optimizer: optimizer}
	for _, p := range s.Params {
		e.Weights += size(p) * eb
	}
	e.Gradients, e.GradientTemps, e.OptimizerState = e.Weights, e.Weights, k*e.Weights
	ib := int64(s.InputBytes)
	if ib == 0 {
		ib = eb
	}
	e.Inputs = int64(batch) * size(s.Input) * ib
	var largest int64
	for _, a := range s.Activations {
		b := int64(batch) * size(a) * eb
		e.Activations += b
		largest = max(largest, b)
	}
	e.BackwardWork = 2 * largest
	return e
}
