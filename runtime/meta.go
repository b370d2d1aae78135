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
// chooses (the rows of every input, by default: data parallelism; the columns of a
// weight: tensor parallelism), the parts run in parallel, each on its own runtime, and
// their outputs are gathered into the results one device would give. Over one physical
// device it makes replicas of it, which is how the splitting is tested against a single
// device.
//
// How each op takes slices is decided per op (meta_split.go). Where the parts must
// exchange values (a loss averaged over the split batch, a gradient summed over it, a
// softmax along a split axis) the graph is cut into phases and the parts' values are
// summed (all-reduce) or joined (all-gather) through the host between them. A training
// step therefore runs data parallel: each part computes the gradients of its rows, they
// are summed, and every part applies the same update to its own copy of the weights,
// which stay identical across parts (Replicas reads them back).
type Meta struct {
	devices []*PhysicalDevice
	parts   []member
	names   []string // each part's device ID, or its group's description
	split   SplitFunc
	weights []float64

	mu     sync.Mutex
	slices map[*tensor.Variable]*varSlices // split variables' per-part slices, reused across compiles
	closed bool
}

// varSlices are the parts' variables holding the slices of a split variable.
type varSlices struct {
	axis   int
	parts  []*tensor.Variable
	ranges [][2]int
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
	m := &Meta{devices: append([]*PhysicalDevice(nil), devices...), split: SplitRows, slices: map[*tensor.Variable]*varSlices{}}
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
		m.parts = append(m.parts, runtimeMember{newRuntime(b, cpu)})
		m.names = append(m.names, d.id)
	}
	return m, nil
}

// NewMetaOfGroups makes a meta device whose parts are meta devices themselves: a hybrid
// of data and tensor parallelism, where the outer device splits the batch across the
// groups (SplitRows by default) and each group splits the weights across its own
// devices (its own split function). Closing it closes the groups.
func NewMetaOfGroups(groups []*Meta, opts ...MetaOption) (*Meta, error) {
	if len(groups) == 0 {
		return nil, errors.New("runtime: NewMetaOfGroups needs at least one group")
	}
	m := &Meta{split: SplitRows, slices: map[*tensor.Variable]*varSlices{}}
	for _, o := range opts {
		o(m)
	}
	if m.weights == nil {
		m.weights = make([]float64, len(groups))
		for i := range m.weights {
			m.weights[i] = 1
		}
	}
	if len(m.weights) != len(groups) {
		return nil, fmt.Errorf("runtime: NewMetaOfGroups: %d proportions for %d groups", len(m.weights), len(groups))
	}
	for i, g := range groups {
		if g == nil || g.closed {
			return nil, fmt.Errorf("runtime: NewMetaOfGroups: group %d is nil or closed", i)
		}
		m.parts = append(m.parts, metaMember{g})
		m.names = append(m.names, "("+strings.Join(g.names, ", ")+")")
		m.devices = append(m.devices, g.devices...)
	}
	return m, nil
}

// member is what a part of a meta device runs on: a runtime on one device, or a meta
// device of its own (a tensor-parallel group inside a data-parallel device).
type member interface {
	compile(outputs []*tensor.Node) (Runner, error)
	Read(v *tensor.Variable) (*tensor.Tensor, error)
	Write(v *tensor.Variable, t *tensor.Tensor) error
	Close() error
}

// Runner is a compiled graph: an Executable, or a MetaExecutable.
type Runner interface {
	Run(feeds map[*tensor.Node]*tensor.Tensor) ([]*tensor.Tensor, error)
	Free()
}

type runtimeMember struct{ *Runtime }

func (r runtimeMember) compile(outputs []*tensor.Node) (Runner, error) {
	e, err := r.Compile(outputs)
	if err != nil {
		return nil, err
	}
	return e, nil
}

type metaMember struct{ *Meta }

func (g metaMember) compile(outputs []*tensor.Node) (Runner, error) {
	e, err := g.Compile(outputs)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Read reads a group's variable whole (its replicas are identical; its slices joined).
func (g metaMember) Read(v *tensor.Variable) (*tensor.Tensor, error) {
	reps, err := g.Replicas(v)
	if err != nil {
		return nil, err
	}
	return reps[0], nil
}

// Devices lists the meta device's devices, one per part (every group's, for a meta
// device of groups).
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

// MetaExecutable is a graph compiled on a meta device: per part, one executable per
// phase.
type MetaExecutable struct {
	m       *Meta
	plan    *metaPlan
	outputs []*tensor.Node
	inputs  []*tensor.Node
	exports [][]*tensor.Node // per phase: values later phases take
	parts   []*metaPart
	last    time.Duration
}

type metaPart struct {
	k      int
	name   string                  // the device (or group) it runs on
	ranges map[*tensor.Node][2]int // split source -> its slice
	phases []*partPhase
	time   time.Duration // of the last run
}

// partPhase is one part's graph of one phase.
type partPhase struct {
	exe     Runner
	nodes   map[*tensor.Node]*tensor.Node // original -> the part's node
	sources map[sourceKey]*tensor.Node    // sources made in this phase
	feeds   []partFeed                    // inputs of the part's graph
	fetch   []*tensor.Node                // original nodes read: outputs of this phase, then exports
}

type sourceKey struct {
	n     *tensor.Node
	whole bool
}

// partFeed is an input of a part's graph: a graph input (sliced unless whole) or a
// value of an earlier phase (this part's own, or combined across the parts).
type partFeed struct {
	node     *tensor.Node
	orig     *tensor.Node
	whole    bool // a graph input fed whole
	carried  bool // a value of an earlier phase
	combined bool // summed or gathered across the parts
}

// share returns part k's slice [lo, hi) of an axis of extent, in whole granules of the
// plan's granule for that extent (a head's features, when heads are split).
func (me *MetaExecutable) share(extent, k int) ([2]int, error) {
	g := me.plan.granuleOf(extent)
	s, err := me.m.shares(extent / g)
	if err != nil {
		if g > 1 {
			return [2]int{}, fmt.Errorf("%d groups of %d: %w", extent/g, g, err)
		}
		return [2]int{}, err
	}
	return [2]int{s[k][0] * g, s[k][1] * g}, nil
}

// Compile splits the graph that computes outputs into the parts and compiles each on
// its device.
func (m *Meta) Compile(outputs []*tensor.Node) (*MetaExecutable, error) {
	return m.CompileSplit(outputs, m.split)
}

// CompileSplit is Compile with a split function of its own for this graph (nn's data
// parallelism splits the graph's data inputs and nothing else).
func (m *Meta) CompileSplit(outputs []*tensor.Node, split SplitFunc) (me *MetaExecutable, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("runtime: Compile on a closed meta device")
	}
	if cerr := tensor.Catch(func() { me, err = m.compile(outputs, split) }); cerr != nil {
		return nil, cerr
	}
	return me, err
}

func (m *Meta) compile(outputs []*tensor.Node, split SplitFunc) (*MetaExecutable, error) {
	nodes, err := collect(outputs)
	if err != nil {
		return nil, err
	}
	plan, err := planMeta(nodes, split)
	if err != nil {
		return nil, err
	}
	me := &MetaExecutable{m: m, plan: plan, outputs: outputs, exports: make([][]*tensor.Node, plan.phases)}
	exported := map[*tensor.Node]bool{}
	for _, n := range nodes {
		if n.Op() == tensor.OpInput {
			me.inputs = append(me.inputs, n)
		}
		for i, x := range n.Inputs() {
			if c := plan.conv[n][i]; !exported[x] && plan.crosses(x, n, c) {
				exported[x] = true
				me.exports[plan.phase[x]] = append(me.exports[plan.phase[x]], x)
			}
		}
	}
	for k, r := range m.parts {
		p := &metaPart{k: k, name: m.names[k], ranges: map[*tensor.Node][2]int{}}
		for _, n := range nodes {
			if isSource(n) && plan.axis[n] >= 0 {
				sh, err := me.share(n.Shape()[plan.axis[n]], k)
				if err != nil {
					me.Free()
					return nil, fmt.Errorf("runtime: meta: %v along axis %d: %w", n, plan.axis[n], err)
				}
				p.ranges[n] = sh
			}
		}
		me.parts = append(me.parts, p)
		for ph := range plan.phases {
			pp, err := m.buildPhase(me, p, ph)
			if err != nil {
				me.Free()
				return nil, err
			}
			exe, err := r.compile(pp.outputs(p))
			if err != nil {
				me.Free()
				return nil, fmt.Errorf("runtime: meta: part %d on %s, phase %d: %w", k, p.name, ph+1, err)
			}
			pp.exe = exe
			p.phases = append(p.phases, pp)
		}
	}
	return me, nil
}

// crosses reports whether n takes x from an earlier phase (x is then exported there).
func (p *metaPlan) crosses(x, n *tensor.Node, c conversion) bool {
	if isSource(x) {
		return c == gatherd && !p.localWhole(x)
	}
	return p.phase[x] < p.phase[n]
}

// outputs lists the part's nodes a phase fetches.
func (pp *partPhase) outputs(p *metaPart) []*tensor.Node {
	out := make([]*tensor.Node, len(pp.fetch))
	for i, o := range pp.fetch {
		out[i] = pp.nodes[o]
	}
	return out
}

// buildPhase rebuilds the nodes of phase ph in a graph of part p's own: split sources
// sliced, conversions applied, values of earlier phases taken as inputs, and
// shape-carrying attributes resized along the split axis.
func (m *Meta) buildPhase(me *MetaExecutable, p *metaPart, ph int) (*partPhase, error) {
	plan := me.plan
	g := tensor.NewGraph()
	pp := &partPhase{nodes: map[*tensor.Node]*tensor.Node{}, sources: map[sourceKey]*tensor.Node{}}
	carried := map[sourceKey]*tensor.Node{}
	input := func(x *tensor.Node, i int, owner *tensor.Node) (*tensor.Node, error) {
		c := plan.conv[owner][i]
		var v *tensor.Node
		var err error
		switch {
		case plan.crosses(x, owner, c):
			combined := c == reduce || c == gatherd
			key := sourceKey{x, combined}
			if v = carried[key]; v == nil {
				shape := x.Shape().Clone()
				if ax := plan.axis[x]; ax >= 0 && !combined {
					r, err := me.share(shape[ax], p.k)
					if err != nil {
						return nil, err
					}
					shape[ax] = r[1] - r[0]
				}
				v = g.Input(fmt.Sprintf("%s (phase %d)", nodeName(x), plan.phase[x]+1), x.DType(), shape...)
				carried[key] = v
				pp.feeds = append(pp.feeds, partFeed{node: v, orig: x, carried: true, combined: combined})
			}
		case isSource(x):
			if v, err = me.source(pp, p, g, x, c == gatherd); err != nil {
				return nil, err
			}
		default:
			v = pp.nodes[x]
		}
		if c == slice {
			ax := plan.sliceA[owner][i]
			r, err := me.share(x.Shape()[ax], p.k)
			if err != nil {
				return nil, err
			}
			v = tensor.SliceAxis(v, ax, r[0], r[1])
		}
		return v, nil
	}
	for _, n := range plan.nodes {
		if isSource(n) || plan.phase[n] != ph {
			continue
		}
		in := make([]*tensor.Node, len(n.Inputs()))
		for i, y := range n.Inputs() {
			var err error
			if in[i], err = input(y, i, n); err != nil {
				return nil, fmt.Errorf("runtime: meta: %v: %w", n, err)
			}
		}
		var x *tensor.Node
		ax := plan.axis[n]
		if err := tensor.Catch(func() { x = applyPart(n, in, ax) }); err != nil {
			return nil, fmt.Errorf("runtime: meta: %v cannot be computed in parts (axis %d): %w", n, ax, err)
		}
		if n.Name() != "" && x.Name() == "" {
			x.SetName(n.Name())
		}
		pp.nodes[n] = x
	}
	// Sources fetched (outputs, or split variables later phases gather) are made here.
	fetch := func(x *tensor.Node) error {
		if isSource(x) {
			v, err := me.source(pp, p, g, x, false)
			if err != nil {
				return err
			}
			pp.nodes[x] = v
		}
		pp.fetch = append(pp.fetch, x)
		return nil
	}
	for _, o := range me.outputs {
		if plan.phase[o] == ph {
			if err := fetch(o); err != nil {
				return nil, err
			}
		}
	}
	for _, x := range me.exports[ph] {
		if err := fetch(x); err != nil {
			return nil, err
		}
	}
	return pp, nil
}

// applyPart makes n's op in a part from the part's inputs: a sum or mean along the split
// axis becomes a summand (a mean divides by the whole count), attributes that state the
// output's extent along the split axis take the part's.
func applyPart(n *tensor.Node, in []*tensor.Node, ax int) *tensor.Node {
	if ax == partial && (n.Op() == tensor.OpSum || n.Op() == tensor.OpMean) {
		at := n.Attr().(tensor.ReduceAttr)
		s := tensor.Sum(in[0], at.Axes, at.KeepDims)
		if n.Op() == tensor.OpMean {
			s = tensor.MulScalar(s, float64(n.Shape().Size())/float64(n.Input(0).Shape().Size()))
		}
		return s
	}
	return tensor.Apply(n.Op(), partAttr(n, in, ax), in...)
}

// source makes source x in a phase's graph: part k's slice, or all of it when whole.
func (me *MetaExecutable) source(pp *partPhase, p *metaPart, g *tensor.Graph, x *tensor.Node, whole bool) (*tensor.Node, error) {
	r, split := p.ranges[x]
	whole = whole || !split
	key := sourceKey{x, whole}
	if v := pp.sources[key]; v != nil {
		return v, nil
	}
	ax := me.plan.axis[x]
	var v *tensor.Node
	switch x.Op() {
	case tensor.OpInput:
		shape := x.Shape().Clone()
		if !whole {
			shape[ax] = r[1] - r[0]
		}
		v = g.Input(x.Name(), x.DType(), shape...)
		pp.feeds = append(pp.feeds, partFeed{node: v, orig: x, whole: whole})
	case tensor.OpConst:
		c := x.Value()
		if !whole {
			var err error
			if c, err = sliceAxis(c, ax, r[0], r[1]); err != nil {
				return nil, fmt.Errorf("%v: %w", x, err)
			}
		}
		v = g.Const(c)
	case tensor.OpVariable:
		vr := x.Variable()
		if !whole {
			var err error
			if vr, err = me.m.slicedVariable(vr, ax, r, p.k, len(me.m.parts)); err != nil {
				return nil, fmt.Errorf("%v: %w", x, err)
			}
		}
		v = g.Var(vr)
	default:
		return nil, fmt.Errorf("%v is not a source", x)
	}
	if x.Name() != "" && v.Name() == "" {
		v.SetName(x.Name())
	}
	pp.sources[key] = v
	return v, nil
}

// slicedVariable returns part k's variable holding rows r of v along axis, made once
// per meta device (so its updates persist across compiles).
func (m *Meta) slicedVariable(v *tensor.Variable, axis int, r [2]int, k, parts int) (*tensor.Variable, error) {
	vs := m.slices[v]
	if vs == nil {
		vs = &varSlices{axis: axis, parts: make([]*tensor.Variable, parts), ranges: make([][2]int, parts)}
		m.slices[v] = vs
	}
	if vs.axis != axis || (vs.parts[k] != nil && vs.ranges[k] != r) {
		// The slices may have been updated: slicing the initial value again would
		// lose that.
		return nil, fmt.Errorf("already split along axis %d as %v on part %d, where this graph needs axis %d as %v; use a meta device of its own", vs.axis, vs.ranges[k], k, axis, r)
	}
	if vs.parts[k] != nil {
		return vs.parts[k], nil
	}
	init, err := sliceAxis(v.Init(), axis, r[0], r[1])
	if err != nil {
		return nil, err
	}
	vs.parts[k] = tensor.NewVariable(fmt.Sprintf("%s[part %d]", v.Name(), k), init)
	vs.ranges[k] = r
	return vs.parts[k], nil
}

// Run splits the feeds, runs every part in parallel phase by phase, exchanging values
// between phases, and gathers the outputs (nil for side-effect outputs).
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
	n := len(me.parts)
	own := make([]map[*tensor.Node]*tensor.Tensor, n) // each part's values of fetched nodes
	for k := range own {
		own[k] = map[*tensor.Node]*tensor.Tensor{}
	}
	combined := map[*tensor.Node]*tensor.Tensor{}
	for k := range me.parts {
		me.parts[k].time = 0
	}
	for ph := range me.plan.phases {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for k, p := range me.parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t0 := time.Now()
				errs[k] = me.runPart(p, ph, feeds, own[k], combined)
				p.time += time.Since(t0)
				if errs[k] != nil {
					errs[k] = fmt.Errorf("runtime: meta: part %d on %s: %w", k, p.name, errs[k])
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		for _, x := range me.exports[ph] {
			if me.plan.axis[x] == partial || me.plan.axis[x] >= 0 {
				t, err := me.combine(x, own)
				if err != nil {
					return nil, err
				}
				combined[x] = t
			}
		}
	}
	out := make([]*tensor.Tensor, len(me.outputs))
	for i, o := range me.outputs {
		if own[0][o] == nil {
			continue
		}
		t, err := me.combine(o, own)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	me.last = time.Since(start)
	return out, nil
}

// runPart runs part p's phase ph, storing what it fetches in own.
func (me *MetaExecutable) runPart(p *metaPart, ph int, feeds, own, combined map[*tensor.Node]*tensor.Tensor) error {
	pp := p.phases[ph]
	pf := make(map[*tensor.Node]*tensor.Tensor, len(pp.feeds))
	for _, f := range pp.feeds {
		var t *tensor.Tensor
		switch {
		case f.carried && f.combined:
			t = combined[f.orig]
		case f.carried:
			t = own[f.orig]
		default:
			t = feeds[f.orig]
			if r, ok := p.ranges[f.orig]; ok && !f.whole {
				var err error
				if t, err = sliceAxis(t, me.plan.axis[f.orig], r[0], r[1]); err != nil {
					return err
				}
			}
		}
		pf[f.node] = t
	}
	res, err := pp.exe.Run(pf)
	if err != nil {
		return err
	}
	for i, o := range pp.fetch {
		own[o] = res[i]
	}
	return nil
}

// combine makes the whole value of x from the parts': joined when split, summed when
// partial, part 0's when whole.
func (me *MetaExecutable) combine(x *tensor.Node, own []map[*tensor.Node]*tensor.Tensor) (*tensor.Tensor, error) {
	parts := make([]*tensor.Tensor, len(own))
	for k := range own {
		parts[k] = own[k][x]
	}
	switch ax := me.plan.axis[x]; {
	case ax == partial:
		t, err := sumTensors(parts)
		if err != nil {
			return nil, fmt.Errorf("runtime: meta: summing %v: %w", x, err)
		}
		return t, nil
	case ax >= 0:
		t, err := concatAxis(parts, ax)
		if err != nil {
			return nil, fmt.Errorf("runtime: meta: gathering %v: %w", x, err)
		}
		return t, nil
	}
	return parts[0], nil
}

// Free frees every part's executables.
func (me *MetaExecutable) Free() {
	for _, p := range me.parts {
		for _, pp := range p.phases {
			pp.exe.Free()
		}
	}
	me.parts = nil
}

// Phases is how many phases a run takes: 1 plus one per exchange between the parts.
func (me *MetaExecutable) Phases() int { return me.plan.phases }

// Write sets variable v to t on every part (each part's slice of it when it is split).
func (m *Meta) Write(v *tensor.Variable, t *tensor.Tensor) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.slices[v]
	for k, r := range m.parts {
		target, val := v, t
		if vs != nil && vs.parts[k] != nil {
			var err error
			if val, err = sliceAxis(t, vs.axis, vs.ranges[k][0], vs.ranges[k][1]); err != nil {
				return fmt.Errorf("runtime: meta: writing %v: %w", v, err)
			}
			target = vs.parts[k]
		}
		if err := r.Write(target, val); err != nil {
			return fmt.Errorf("runtime: meta: part %d: %w", k, err)
		}
	}
	return nil
}

// Replicas reads variable v from every part: the copies data-parallel training keeps
// identical (a split variable is read whole, joined from the parts' slices).
func (m *Meta) Replicas(v *tensor.Variable) ([]*tensor.Tensor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if vs := m.slices[v]; vs != nil {
		parts := make([]*tensor.Tensor, len(m.parts))
		for k, r := range m.parts {
			if vs.parts[k] == nil {
				return nil, fmt.Errorf("runtime: meta: %v has no slice on part %d", v, k)
			}
			var err error
			if parts[k], err = r.Read(vs.parts[k]); err != nil {
				return nil, err
			}
		}
		t, err := concatAxis(parts, vs.axis)
		if err != nil {
			return nil, fmt.Errorf("runtime: meta: joining %v: %w", v, err)
		}
		return []*tensor.Tensor{t}, nil
	}
	out := make([]*tensor.Tensor, len(m.parts))
	for k, r := range m.parts {
		t, err := r.Read(v)
		if err != nil {
			return nil, err
		}
		out[k] = t
	}
	return out, nil
}

// MetaPart describes one part of a meta executable.
type MetaPart struct {
	Device      string
	Ranges      map[string][2]int // split source name (or node) -> its slice [lo, hi)
	Executables []Runner          // one per phase: Executables, or MetaExecutables of a group
	Time        time.Duration     // of the last run
}

// Parts describes the parts: device, slices, executables (one per phase) and last run
// time.
func (me *MetaExecutable) Parts() []MetaPart {
	var out []MetaPart
	for _, p := range me.parts {
		mp := MetaPart{Device: p.name, Ranges: map[string][2]int{}, Time: p.time}
		for _, pp := range p.phases {
			mp.Executables = append(mp.Executables, pp.exe)
		}
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
	return t.Caption(fmt.Sprintf("meta executable: %d parts, %d phases; last run %v", len(me.parts), me.plan.phases, me.last.Round(time.Microsecond)))
}

// MIMEBundle renders the parts as a table.
func (me *MetaExecutable) MIMEBundle() map[string]any { return me.table().MIMEBundle() }

// String renders the parts as a text table.
func (me *MetaExecutable) String() string { return me.table().String() }

// String describes the meta device: "meta device over cpu, cpu (split rows)".
func (m *Meta) String() string {
	return fmt.Sprintf("meta device over %s", strings.Join(m.names, ", "))
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

// sumTensors adds the parts' summands elementwise.
func sumTensors(parts []*tensor.Tensor) (*tensor.Tensor, error) {
	out := parts[0].Clone()
	for _, p := range parts[1:] {
		if p.DType() != out.DType() || !p.Shape().Equal(out.Shape()) {
			return nil, fmt.Errorf("summands of different types: %v%v and %v%v", out.DType(), out.Shape(), p.DType(), p.Shape())
		}
		if out.DType() == tensor.F32 {
			dst, src := out.Float32s(), p.Float32s()
			for i := range dst {
				dst[i] += src[i]
			}
			continue
		}
		for i := range out.Len() {
			out.SetFloat(i, out.Float(i)+p.Float(i))
		}
	}
	return out, nil
}

// nodeName names a node for an input of a later phase.
func nodeName(n *tensor.Node) string {
	if n.Name() != "" {
		return n.Name()
	}
	return n.String()
}
