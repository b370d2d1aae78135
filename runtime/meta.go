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

// Meta is one logical device over several: a graph compiled on it is split into one
// part per device, each part computing a slice of the tensors the split function
// chooses (the rows of every input, by default: data parallelism), the parts run in
// parallel, each on its own runtime, and their outputs are gathered into the results
// one device would give. Over one physical device it makes replicas of it, which is
// how the splitting is tested against a single device.
//
// Which nodes can be split along which axis is decided per op (meta_split.go):
// elementwise ops, matrix products (rows of the left operand, columns of the right),
// reductions, softmax and norms over other axes, and the layout ops keep a slice a
// slice; an op that would mix the slices (a sum over the split axis, a softmax along
// it, a product contracting it) is an error that names the node, never a wrong
// result. Graphs that update variables (training steps) are refused: each part would
// update its own copy.
type Meta struct {
	devices []*PhysicalDevice
	parts   []*Runtime
	split   SplitFunc
	weights []float64

	mu     sync.Mutex
	sliced map[slicedKey]*tensor.Variable // split variables' per-part slices, reused across compiles
	closed bool
}

type slicedKey struct {
	v           *tensor.Variable
	axis, lo, n int
}

// SplitFunc decides how a meta device divides a source node (an input, a constant or a
// variable) among its parts: along axis when split is true, else every part gets all of
// it.
type SplitFunc func(n *tensor.Node) (axis int, split bool)

// SplitRows is the default split: graph inputs along their first axis (the batch),
// constants and variables whole.
func SplitRows(n *tensor.Node) (int, bool) {
	return 0, n.Op() == tensor.OpInput && n.Shape().Rank() > 0
}

// MetaOption configures NewMeta.
type MetaOption func(*Meta)

// SplitBy sets the split function (SplitRows by default).
func SplitBy(f SplitFunc) MetaOption { return func(m *Meta) { m.split = f } }

// Proportions sets each part's share of a split axis, one weight per device (equal
// shares by default), as ggml's tensor_split does for GPUs of different sizes.
func Proportions(w ...float64) MetaOption {
	return func(m *Meta) { m.weights = append([]float64(nil), w...) }
}

// Replicate returns d n times: NewMeta over it makes n replicas of one device.
func Replicate(d *PhysicalDevice, n int) []*PhysicalDevice {
	out := make([]*PhysicalDevice, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// NewMeta makes a meta device over devices (each may appear more than once: replicas),
// opening them. Each part gets a runtime of its own on its device, with the CPU as its
// fallback.
func NewMeta(devices []*PhysicalDevice, opts ...MetaOption) (*Meta, error) {
	if len(devices) == 0 {
		return nil, errors.New("runtime: NewMeta needs at least one device")
	}
	m := &Meta{devices: append([]*PhysicalDevice(nil), devices...), split: SplitRows, sliced: map[slicedKey]*tensor.Variable{}}
	for _, o := range opts {
		o(m)
	}
	if m.weights == nil {
		m.weights = make([]float64, len(devices))
		for i := range m.weights {
			m.weights[i] = 1
		}
	}
	if len(m.weights) != len(devices) {
		return nil, fmt.Errorf("runtime: NewMeta: %d proportions for %d devices", len(m.weights), len(devices))
	}
	for i, w := range m.weights {
		if !(w > 0) {
			return nil, fmt.Errorf("runtime: NewMeta: proportion %d is %v; want a positive weight", i, w)
		}
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
		m.parts = append(m.parts, newRuntime(b, cpu))
	}
	return m, nil
}

// Devices lists the meta device's devices, one per part.
func (m *Meta) Devices() []*PhysicalDevice { return append([]*PhysicalDevice(nil), m.devices...) }

// Close frees the parts' variables. Executables compiled on the meta device must be
// freed first.
func (m *Meta) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	var errs []error
	for _, r := range m.parts {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// shares divides extent among the parts by their weights, every part getting at least
// one: [lo, hi) per part.
func (m *Meta) shares(extent int) ([][2]int, error) {
	n := len(m.parts)
	if extent < n {
		return nil, fmt.Errorf("an axis of %d cannot be split %d ways", extent, n)
	}
	var total float64
	for _, w := range m.weights {
		total += w
	}
	out := make([][2]int, n)
	lo := 0
	for i, w := range m.weights {
		rest := n - 1 - i // parts after this one, each needing a row
		size := int(float64(extent)*w/total + 0.5)
		size = max(1, min(size, extent-lo-rest))
		if i == n-1 {
			size = extent - lo
		}
		out[i] = [2]int{lo, lo + size}
		lo += size
	}
	return out, nil
}

// MetaExecutable is a graph compiled on a meta device: one executable per part.
type MetaExecutable struct {
	m       *Meta
	outputs []*tensor.Node
	inputs  []*tensor.Node
	splits  map[*tensor.Node]int // split source -> axis
	gather  []int                // per output: the axis its parts are joined along, -1 for whole
	parts   []*metaPart
	last    time.Duration
}

type metaPart struct {
	exe     *Executable
	device  *PhysicalDevice
	nodes   map[*tensor.Node]*tensor.Node // original -> the part's node
	ranges  map[*tensor.Node][2]int       // split source -> its slice
	outputs []*tensor.Node
	time    time.Duration // of the last run
}

// Compile splits the graph that computes outputs into the parts and compiles each on
// its device.
func (m *Meta) Compile(outputs []*tensor.Node) (me *MetaExecutable, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("runtime: Compile on a closed meta device")
	}
	if cerr := tensor.Catch(func() { me, err = m.compile(outputs) }); cerr != nil {
		return nil, cerr
	}
	return me, err
}

func (m *Meta) compile(outputs []*tensor.Node) (*MetaExecutable, error) {
	nodes, err := collect(outputs)
	if err != nil {
		return nil, err
	}
	axes, err := splitAxes(nodes, m.split)
	if err != nil {
		return nil, err
	}
	me := &MetaExecutable{m: m, outputs: outputs, splits: map[*tensor.Node]int{}}
	for _, n := range nodes {
		if n.Op() == tensor.OpInput {
			me.inputs = append(me.inputs, n)
		}
		if isSource(n) && axes[n] >= 0 {
			me.splits[n] = axes[n]
		}
	}
	for _, o := range outputs {
		me.gather = append(me.gather, axes[o])
	}
	shares := map[*tensor.Node][][2]int{}
	for n, ax := range me.splits {
		s, err := m.shares(n.Shape()[ax])
		if err != nil {
			return nil, fmt.Errorf("runtime: meta: %v along axis %d: %w", n, ax, err)
		}
		shares[n] = s
	}
	for k, r := range m.parts {
		p := &metaPart{device: m.devices[k], nodes: map[*tensor.Node]*tensor.Node{}, ranges: map[*tensor.Node][2]int{}}
		for n, s := range shares {
			p.ranges[n] = s[k]
		}
		if err := m.buildPart(p, nodes, axes, k); err != nil {
			me.Free()
			return nil, err
		}
		for _, o := range outputs {
			p.outputs = append(p.outputs, p.nodes[o])
		}
		exe, err := r.Compile(p.outputs)
		if err != nil {
			me.Free()
			return nil, fmt.Errorf("runtime: meta: part %d on %s: %w", k, m.devices[k].id, err)
		}
		p.exe = exe
		me.parts = append(me.parts, p)
	}
	return me, nil
}

// buildPart rebuilds the nodes in a graph of part k's own: split sources sliced,
// shape-carrying attributes resized along the split axis.
func (m *Meta) buildPart(p *metaPart, nodes []*tensor.Node, axes map[*tensor.Node]int, k int) error {
	g := tensor.NewGraph()
	for _, n := range nodes {
		ax := axes[n]
		var x *tensor.Node
		switch n.Op() {
		case tensor.OpInput:
			shape := n.Shape().Clone()
			if r, ok := p.ranges[n]; ok {
				shape[ax] = r[1] - r[0]
			}
			x = g.Input(n.Name(), n.DType(), shape...)
		case tensor.OpConst:
			v := n.Value()
			if r, ok := p.ranges[n]; ok {
				var err error
				if v, err = sliceAxis(v, ax, r[0], r[1]); err != nil {
					return fmt.Errorf("runtime: meta: %v: %w", n, err)
				}
			}
			x = g.Const(v)
		case tensor.OpVariable:
			v := n.Variable()
			if r, ok := p.ranges[n]; ok {
				key := slicedKey{v, ax, r[0], r[1] - r[0]}
				sv, ok := m.sliced[key]
				if !ok {
					init, err := sliceAxis(v.Init(), ax, r[0], r[1])
					if err != nil {
						return fmt.Errorf("runtime: meta: %v: %w", n, err)
					}
					sv = tensor.NewVariable(fmt.Sprintf("%s[part %d]", v.Name(), k), init)
					m.sliced[key] = sv
				}
				v = sv
			}
			x = g.Var(v)
		default:
			in := make([]*tensor.Node, len(n.Inputs()))
			for i, y := range n.Inputs() {
				in[i] = p.nodes[y]
			}
			attr := partAttr(n, in, ax)
			if err := tensor.Catch(func() { x = tensor.Apply(n.Op(), attr, in...) }); err != nil {
				return fmt.Errorf("runtime: meta: %v cannot be split along axis %d: %w", n, ax, err)
			}
		}
		if n.Name() != "" && x.Name() == "" {
			x.SetName(n.Name())
		}
		p.nodes[n] = x
	}
	return nil
}

// Run splits the feeds, runs every part in parallel and gathers the outputs (nil for
// side-effect outputs).
func (me *MetaExecutable) Run(feeds map[*tensor.Node]*tensor.Tensor) ([]*tensor.Tensor, error) {
	if err := Interrupted(); err != nil {
		return nil, err
	}
	if me.parts == nil {
		return nil, fmt.Errorf("runtime: Run of a freed meta executable: %w", ErrFreed)
	}
	for _, in := range me.inputs {
		t := feeds[in]
		if t == nil {
			return nil, fmt.Errorf("runtime: meta: input %q (%v%v) was not fed", in.Name(), in.DType(), in.Shape())
		}
		if t.DType() != in.DType() || !t.Shape().Equal(in.Shape()) {
			return nil, fmt.Errorf("runtime: meta: input %q wants %v%v, was fed %v%v", in.Name(), in.DType(), in.Shape(), t.DType(), t.Shape())
		}
	}
	start := time.Now()
	results := make([][]*tensor.Tensor, len(me.parts))
	errs := make([]error, len(me.parts))
	var wg sync.WaitGroup
	for k, p := range me.parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			pf := map[*tensor.Node]*tensor.Tensor{}
			for _, in := range me.inputs {
				t := feeds[in]
				if r, ok := p.ranges[in]; ok {
					var err error
					if t, err = sliceAxis(t, me.splits[in], r[0], r[1]); err != nil {
						errs[k] = err
						return
					}
				}
				pf[p.nodes[in]] = t
			}
			results[k], errs[k] = p.exe.Run(pf)
			p.time = time.Since(t0)
			if errs[k] != nil {
				errs[k] = fmt.Errorf("runtime: meta: part %d on %s: %w", k, p.device.id, errs[k])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([]*tensor.Tensor, len(me.outputs))
	for i := range me.outputs {
		if results[0][i] == nil {
			continue
		}
		if me.gather[i] < 0 {
			out[i] = results[0][i]
			continue
		}
		parts := make([]*tensor.Tensor, len(results))
		for k := range results {
			parts[k] = results[k][i]
		}
		t, err := concatAxis(parts, me.gather[i])
		if err != nil {
			return nil, fmt.Errorf("runtime: meta: gathering %v: %w", me.outputs[i], err)
		}
		out[i] = t
	}
	me.last = time.Since(start)
	return out, nil
}

// Free frees every part's executable.
func (me *MetaExecutable) Free() {
	for _, p := range me.parts {
		if p.exe != nil {
			p.exe.Free()
		}
	}
	me.parts = nil
}

// MetaPart describes one part of a meta executable.
type MetaPart struct {
	Device     string
	Ranges     map[string][2]int // split source name (or node) -> its slice [lo, hi)
	Executable *Executable
	Time       time.Duration // of the last run
}

// Parts describes the parts: device, slices, executable (Explain its runtime to see
// its schedule) and last run time.
func (me *MetaExecutable) Parts() []MetaPart {
	var out []MetaPart
	for _, p := range me.parts {
		mp := MetaPart{Device: p.device.id, Ranges: map[string][2]int{}, Executable: p.exe, Time: p.time}
		for n, r := range p.ranges {
			name := n.Name()
			if name == "" {
				name = n.String()
			}
			mp.Ranges[name] = r
		}
		out = append(out, mp)
	}
	return out
}

func (me *MetaExecutable) table() *display.Table {
	t := display.NewTable("part", "device", "slices", "last run")
	for k, p := range me.Parts() {
		var s []string
		for name, r := range p.Ranges {
			s = append(s, fmt.Sprintf("%s[%d:%d]", name, r[0], r[1]))
		}
		t.Row(k, p.Device, strings.Join(s, " "), p.Time.Round(time.Microsecond).String())
	}
	return t.Caption(fmt.Sprintf("meta executable: %d parts; last run %v", len(me.parts), me.last.Round(time.Microsecond)))
}

// MIMEBundle renders the parts as a table.
func (me *MetaExecutable) MIMEBundle() map[string]any { return me.table().MIMEBundle() }

// String renders the parts as a text table.
func (me *MetaExecutable) String() string { return me.table().String() }

// String describes the meta device: "meta device over cpu, cpu (split rows)".
func (m *Meta) String() string {
	ids := make([]string, len(m.devices))
	for i, d := range m.devices {
		ids[i] = d.id
	}
	return fmt.Sprintf("meta device over %s", strings.Join(ids, ", "))
}

// sliceAxis copies rows [lo, hi) of t along axis.
func sliceAxis(t *tensor.Tensor, axis, lo, hi int) (*tensor.Tensor, error) {
	dt, shape := t.DType(), t.Shape()
	if dt.IsQuantized() && axis == len(shape)-1 {
		return nil, fmt.Errorf("cannot split %v along its blocks' axis", dt)
	}
	outer := shape[:axis].Size()
	inner := dt.Bytes(shape[axis+1:].Size())
	ns := shape.Clone()
	ns[axis] = hi - lo
	out := tensor.New(dt, ns...)
	src, dst := t.Bytes(), out.Bytes()
	row := shape[axis] * inner
	for o := range outer {
		copy(dst[o*(hi-lo)*inner:(o+1)*(hi-lo)*inner], src[o*row+lo*inner:o*row+hi*inner])
	}
	return out, nil
}

// concatAxis joins tensors along axis.
func concatAxis(parts []*tensor.Tensor, axis int) (*tensor.Tensor, error) {
	dt, shape := parts[0].DType(), parts[0].Shape().Clone()
	total := 0
	for _, p := range parts {
		if p.DType() != dt || p.Shape().Rank() != shape.Rank() {
			return nil, fmt.Errorf("parts of different types: %v%v and %v%v", dt, shape, p.DType(), p.Shape())
		}
		total += p.Shape()[axis]
	}
	shape[axis] = total
	out := tensor.New(dt, shape...)
	outer := shape[:axis].Size()
	inner := dt.Bytes(shape[axis+1:].Size())
	dst := out.Bytes()
	off := 0
	for o := range outer {
		for _, p := range parts {
			n := p.Shape()[axis] * inner
			copy(dst[off:off+n], p.Bytes()[o*n:(o+1)*n])
			off += n
		}
	}
	return out, nil
}
