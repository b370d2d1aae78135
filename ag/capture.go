package ag

import (
	"fmt"
	"strings"
	"time"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Captured is a function recorded once per input signature (dtypes and shapes) and
// replayed as one program: upload the inputs, one compute, download the result. Capture
// makes one for a forward pass, CaptureStep for a whole training step. While the
// function records, anything that would make a replay read data back or upload data
// other than its inputs is an error naming the site: reading a value (Item, Value,
// String), host data that is not an argument, or a value computed outside it. Go
// values (scalars, attributes, loop counts) are baked into the recording, as in any
// traced program: change them and capture again. An input signature not seen before
// records a new variant; at most MaxVariants are kept (8 by default), the least
// recently used freed first, and Variants reports them.
type Captured struct {
	tape     *Tape
	fn       func(in ...*Tensor) *Tensor
	opt      *Optimizer // CaptureStep only
	clipNorm float64
	clipVal  float64
	max      int
	variants map[string]*variant
	order    []string // least recently used first
	evicted  int
	freed    bool
}

// variant is one input signature's compiled program.
type variant struct {
	key    string
	exe    *runtime.Executable
	inputs []*tensor.Node // one per argument (nil when the program does not read it)
	seeds  []*tensor.Node
	runs   int
	nodes  int
	writes []*tensor.Variable // variables the program writes
}

// Capture records fn on the current tape for replay (see Captured). The result is the
// captured function's value; it carries no gradient.
func Capture(fn func(in ...*Tensor) *Tensor, opts ...Option) *Captured {
	return newCaptured("capture", fn, nil, []string{"MaxVariants"}, opts)
}

// CaptureStep records a whole training step: fn computes the loss from the inputs;
// Backward, the clipping options (ClipNorm, ClipValue) and opt's update are recorded
// after it, and Step replays all of it as one program, returning the loss. Gradients
// are assigned afresh each step (no ZeroGrad needed) and stay readable with Grad.
func CaptureStep(fn func(in ...*Tensor) *Tensor, opt *Optimizer, opts ...Option) *Captured {
	if opt == nil {
		fail("capture_step", "nil optimizer")
	}
	return newCaptured("capture_step", fn, opt, []string{"MaxVariants", "ClipNorm", "ClipValue"}, opts)
}

func newCaptured(op string, fn func(in ...*Tensor) *Tensor, opt *Optimizer, allowed []string, opts []Option) *Captured {
	if fn == nil {
		fail(op, "nil function")
	}
	s := settings{maxVariants: 8}
	s.apply(op, allowed, opts)
	if s.maxVariants < 1 {
		fail(op, "MaxVariants(%d): want at least 1", s.maxVariants)
	}
	tp := CurrentTape()
	if opt != nil {
		tp = opt.tape
	}
	return &Captured{tape: tp, fn: fn, opt: opt, clipNorm: s.clipNorm, clipVal: s.clipValue, max: s.maxVariants, variants: map[string]*variant{}}
}

// MaxVariants bounds how many input signatures a Captured keeps compiled.
func MaxVariants(n int) Option { return option("MaxVariants", func(s *settings) { s.maxVariants = n }) }

// ClipNorm makes CaptureStep clip the gradients' global norm to max (ClipGradNorm).
func ClipNorm(max float64) Option { return option("ClipNorm", func(s *settings) { s.clipNorm = max }) }

// ClipValue makes CaptureStep clip every gradient element to [-v, v] (ClipGradValue).
func ClipValue(v float64) Option { return option("ClipValue", func(s *settings) { s.clipValue = v }) }

// Call replays the captured function on xs (recording it first for a new input
// signature) and returns its value.
func (c *Captured) Call(xs ...*Tensor) *Tensor {
	if c.opt != nil {
		fail("capture", "this is a CaptureStep: call Step")
	}
	return Const(c.replay("capture", xs))
}

// Step replays the captured training step on xs and returns the loss.
func (c *Captured) Step(xs ...*Tensor) float64 {
	if c.opt == nil {
		fail("capture_step", "this is a Capture: call Call")
	}
	v := c.replay("capture_step", xs)
	if v.Shape().Size() != 1 {
		fail("capture_step", "the loss is %v%v, not a scalar", v.DType(), v.Shape())
	}
	return v.Float(0)
}

// Free releases every variant; a later Call or Step is an error.
func (c *Captured) Free() {
	tp := c.tape
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for _, v := range c.variants {
		v.exe.Free()
	}
	clear(c.variants)
	c.order = nil
	c.freed = true
}

// VariantInfo describes one compiled input signature of a Captured.
type VariantInfo struct {
	Inputs string // "f32[32 784], i64[32]"
	Nodes  int    // graph size
	Runs   int
}

// Variants lists the compiled input signatures, least recently used first, and how
// many were freed to stay within MaxVariants.
func (c *Captured) Variants() (list []VariantInfo, evicted int) {
	c.tape.mu.Lock()
	defer c.tape.mu.Unlock()
	for _, k := range c.order {
		v := c.variants[k]
		list = append(list, VariantInfo{Inputs: k, Nodes: v.nodes, Runs: v.runs})
	}
	return list, c.evicted
}

// replay runs the variant for xs' signature and returns the first output on the host.
func (c *Captured) replay(op string, xs []*Tensor) *tensor.Tensor {
	if c.freed {
		fail(op, "the capture was freed")
	}
	key := signatureOf(xs)
	tp := c.tape
	tp.mu.Lock()
	if tp.rec != nil {
		tp.mu.Unlock()
		fail(op, "a Capture cannot run while another records")
	}
	// Pending work (a parameter assigned, a step in progress) runs first, so the replay
	// reads current values.
	if err := tp.flush(); err != nil {
		tp.mu.Unlock()
		failErr(op, err)
	}
	v := c.variants[key]
	tp.mu.Unlock()
	if v == nil {
		v = c.record(op, key, xs)
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	c.touch(key)
	feeds := map[*tensor.Node]*tensor.Tensor{}
	for i, in := range v.inputs {
		if in == nil {
			continue
		}
		d, err := xs[i].fetch()
		if err != nil {
			failErr(op, fmt.Errorf("input %d: %w", i, err))
		}
		feeds[in] = d
	}
	for _, s := range v.seeds {
		feeds[s] = tensor.Scalar(tensor.I32, float64(int32(tp.nextSeed())))
	}
	if c.opt != nil {
		if err := c.opt.syncLR(); err != nil {
			failErr(op, err)
		}
	}
	if p := tp.prof; p != nil {
		p.closeRow(tp)
		p.cur, p.open = profileStep{nodes: v.nodes, hits: 1, before: tp.rt.Stats()}, true
	}
	t0 := time.Now()
	out, err := v.exe.Run(feeds)
	if p := tp.prof; p != nil {
		p.cur.run += time.Since(t0)
	}
	if err != nil {
		failErr(op, err)
	}
	v.runs++
	for _, w := range v.writes {
		tp.wrote(w)
	}
	if c.opt != nil {
		c.opt.steps++
	}
	return out[0]
}

// touch marks key as the most recently used variant.
func (c *Captured) touch(key string) {
	for i, k := range c.order {
		if k == key {
			c.order = append(append(c.order[:i:i], c.order[i+1:]...), key)
			return
		}
	}
}

// signatureOf names an input signature: "f32[32 784], i64[32]".
func signatureOf(xs []*Tensor) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		if x == nil {
			b.WriteString("nil")
			continue
		}
		b.WriteString(x.dtype.String() + x.shape.String())
	}
	return b.String()
}

// record runs the function on placeholders of xs' signature in a capture trace,
// appends the step (CaptureStep) and compiles the result.
func (c *Captured) record(op, key string, xs []*Tensor) *variant {
	tp := c.tape
	for i, x := range xs {
		if x == nil {
			fail(op, "input %d is nil", i)
		}
		if x.tape != nil && x.tape != tp {
			fail(op, "input %d (%s) belongs to another tape", i, x.describe())
		}
	}
	tr := newTrace(tp)
	tr.capture = true
	args := make([]*Tensor, len(xs))
	for i, x := range xs {
		n := tr.g.Input(fmt.Sprintf("x%d", i), x.dtype, x.shape...)
		tr.inputs = append(tr.inputs, n)
		args[i] = &Tensor{tape: tp, dtype: x.dtype, shape: x.shape, op: "input", seq: tp.seq, tr: tr, node: n}
	}
	tp.mu.Lock()
	tp.rec = tr
	tp.mu.Unlock()
	var outNode *tensor.Node
	func() {
		defer func() {
			tp.mu.Lock()
			tp.rec = nil
			tp.mu.Unlock()
			tr.discard(fmt.Errorf("it was recorded inside a Capture, where only the captured function's result has a value"))
		}()
		out := c.fn(args...)
		if out == nil {
			fail(op, "the captured function returned nil")
		}
		if out.tr != tr {
			fail(op, "the captured function must return a value it computed (it returned %s)", out.describe())
		}
		outNode = out.node
		if c.opt != nil {
			out.Backward()
			params := c.opt.params
			if c.clipNorm > 0 {
				ClipGradNorm(params, c.clipNorm)
			}
			if c.clipVal > 0 {
				ClipGradValue(params, c.clipVal)
			}
			tp.mu.Lock()
			defer tp.mu.Unlock()
			build(op, func() { c.opt.record(tr) })
		}
	}()
	tp.mu.Lock()
	defer tp.mu.Unlock()
	outs := []*tensor.Node{outNode}
	if err := tensor.Catch(func() {
		for _, v := range tr.written {
			if n := tr.cur[v]; n != nil {
				outs = append(outs, tensor.Assign(tr.varNode(v), n))
			}
		}
	}); err != nil {
		failErr(op, err)
	}
	outs = append(outs, tr.sinks...)
	exe, err := tp.rt.Compile(outs)
	if err != nil {
		failErr(op, fmt.Errorf("compiling the capture for %s: %w", key, err))
	}
	v := &variant{key: key, exe: exe, seeds: tr.seeds, nodes: tr.g.Len()}
	read := map[*tensor.Node]bool{}
	for _, in := range exe.Inputs() {
		read[in] = true
	}
	for _, in := range tr.inputs {
		if read[in] {
			v.inputs = append(v.inputs, in)
		} else {
			v.inputs = append(v.inputs, nil)
		}
	}
	for _, w := range tr.written {
		if tr.cur[w] != nil {
			v.writes = append(v.writes, w)
		}
	}
	for w := range tr.inplace {
		v.writes = append(v.writes, w)
	}
	if len(c.order) >= c.max {
		old := c.order[0]
		c.order = c.order[1:]
		c.variants[old].exe.Free()
		delete(c.variants, old)
		c.evicted++
	}
	c.variants[key] = v
	c.order = append(c.order, key)
	return v
}
