package onnx

import (
	"bytes"
	"errors"
	"fmt"
	goruntime "runtime"
	"slices"

	_ "github.com/gml-dev/gml/backends" // the CPU backend (constant folding runs on it) and the GPU one
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// value is an ONNX value while a graph is being built. It is one of three kinds:
// known on the host (an initializer, a folded constant, or data an earlier stage
// measured and this build depends on: host set), computed by the graph being built
// (node set), or data computed by an earlier stage of this run and fed to this one
// (neither set; fed under its ONNX name when a node reads it).
type value struct {
	dtype DataType
	shape tensor.Shape
	host  *tensor.Tensor
	node  *tensor.Node
	data  string // run data: the name the run holds it under
}

// isHost reports whether the value is known while building.
func (v *value) isHost() bool { return v.host != nil }

// feedSpec is a graph input of a stage: an ONNX value fed from the run's data.
type feedSpec struct {
	name  string
	node  *tensor.Node
	dtype DataType
}

// pin is data of an earlier stage that a build read on the host (a shape, a count):
// the build is valid only while that data is the same.
type pin struct {
	name string
	data *tensor.Tensor
}

// boundary is raised (as a panic, caught per node) when a node needs on the host a
// value the graph being built computes: the stage ends before that node.
type boundary struct{ name string }

// needData is raised when a node needs on the host the contents of run data that a
// build at load time does not have: the build is left to the first Run.
type needData struct{ name string }

// lowerError is a node's lowering failure, raised by the ctx helpers.
type lowerError struct{ err error }

// builder lowers a range of ONNX nodes into one engine graph: one stage.
type builder struct {
	m      *Model
	g      *tensor.Graph
	env    *runEnv
	vals   map[string]*value
	mat    map[*value]*tensor.Node
	feeds  []feedSpec
	pinned []pin
	// measured is a quantity a node needs on the host that is not an ONNX value (the
	// count of NonZero): the stage ends and fetches it under this synthetic name.
	measured     string
	measuredNode *tensor.Node
}

// runEnv is what a run knows when it builds or looks up a stage: the run data so far
// (graph inputs and earlier stages' results: shapes and types always, contents during
// a run but not at load) and the host values (initializers, earlier stages' constants).
type runEnv struct {
	shapes map[string]tensor.Shape
	types  map[string]DataType
	data   map[string]*tensor.Tensor
	known  map[string]*value
}

func newEnv() *runEnv {
	return &runEnv{shapes: map[string]tensor.Shape{}, types: map[string]DataType{}, data: map[string]*tensor.Tensor{}, known: map[string]*value{}}
}

// node returns v as a node of the stage graph: host values become variables (the
// model's initializers, resident on the device across builds) or constants, run data
// becomes a graph input.
func (b *builder) node(v *value) *tensor.Node {
	if v.node != nil {
		return v.node
	}
	if n, ok := b.mat[v]; ok {
		return n
	}
	var n *tensor.Node
	switch {
	case v.host != nil:
		if vr := b.m.variables[v.host]; vr != nil {
			n = b.g.Var(vr)
		} else {
			n = b.g.Const(v.host)
		}
	default:
		n = b.g.Input(v.data, v.dtype.Carrier(), v.shape...)
		b.feeds = append(b.feeds, feedSpec{name: v.data, node: n, dtype: v.dtype})
	}
	b.mat[v] = n
	return n
}

// host returns the contents of v when they are known while building: a constant, or
// run data of an earlier stage (pinned). A value computed by this stage raises a
// boundary.
func (b *builder) host(name string, v *value) *tensor.Tensor {
	switch {
	case v.host != nil:
		return v.host
	case v.node != nil:
		panic(boundary{name})
	}
	d, ok := b.env.data[v.data]
	if !ok {
		panic(needData{v.data})
	}
	b.pinned = append(b.pinned, pin{v.data, d})
	v.host = d
	return d
}

// measure returns the contents of node n, which a lowering needs on the host, under a
// name unique to the node: pinned run data when an earlier stage measured it, else the
// stage ends here and fetches it.
func (b *builder) measure(name string, n *tensor.Node) *tensor.Tensor {
	if d, ok := b.env.data[name]; ok {
		b.pinned = append(b.pinned, pin{name, d})
		return d
	}
	b.measured, b.measuredNode = name, n
	panic(boundary{name})
}

// lowerNode lowers node n with inputs ins into graph g (the stage graph, or a folding
// graph) and returns its output values. Any failure becomes an error naming the node;
// a boundary or needData passes through as a panic for the stage builder.
func (m *Model) lowerNode(n *nodeDef, ins []*value, g *tensor.Graph, b *builder) (outs []*value, err error) {
	def, ok := opTable[n.op]
	if !ok || n.domain != "" {
		return nil, fmt.Errorf("onnx: %s: operator %w", n.where(), ErrUnsupported)
	}
	if n.opset < def.since {
		return nil, fmt.Errorf("onnx: %s: %w before opset %d", n.where(), ErrUnsupported, def.since)
	}
	c := &ctx{n: n, ins: ins, outs: make([]*value, len(n.outputs)), g: g, b: b, used: map[string]bool{}}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		switch e := r.(type) {
		case boundary, needData:
			panic(r)
		case lowerError:
			err = fmt.Errorf("onnx: %s: %w", n.where(), e.err)
		case *tensor.Error:
			err = fmt.Errorf("onnx: %s: %w", n.where(), e)
		default:
			// A bug in a lowering: report it as this node's error rather than take the
			// process (a notebook kernel) down.
			buf := make([]byte, 4096)
			buf = buf[:goruntime.Stack(buf, false)]
			err = fmt.Errorf("onnx: %s: internal error: %v\n%s", n.where(), r, buf)
		}
		outs = nil
	}()
	def.lower(c)
	for name := range n.attrs {
		if !c.used[name] {
			return nil, fmt.Errorf("onnx: %s: attribute %q is %w", n.where(), name, ErrUnsupported)
		}
	}
	for i, o := range c.outs {
		if o == nil && n.outputs[i] != "" {
			return nil, fmt.Errorf("onnx: %s: output %d (%q) is %w", n.where(), i, n.outputs[i], ErrUnsupported)
		}
	}
	return c.outs, nil
}

// fold evaluates node n, all of whose inputs are known, on the CPU, and returns its
// outputs as host values.
func (m *Model) fold(n *nodeDef, ins []*value) ([]*value, error) {
	g := tensor.NewGraph()
	outs, err := m.lowerNode(n, ins, g, nil)
	if err != nil {
		return nil, err
	}
	var compute []*tensor.Node
	for _, o := range outs {
		if o != nil && o.node != nil {
			compute = append(compute, o.node)
		}
	}
	if len(compute) == 0 {
		return outs, nil
	}
	res, err := evalCPU(compute)
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: folding: %w", n.where(), err)
	}
	k := 0
	for _, o := range outs {
		if o != nil && o.node != nil {
			o.host, o.node = res[k], nil
			k++
		}
	}
	return outs, nil
}

// evalCPU computes nodes of a graph without inputs on the CPU. The runtime is made
// per call (cheap: the backend is opened once per process), so folding keeps working
// after runtime.Shutdown, which a kernel restart calls.
func evalCPU(nodes []*tensor.Node) ([]*tensor.Tensor, error) {
	rt, err := runtime.New(runtime.Device("cpu"))
	if err != nil {
		return nil, err
	}
	defer rt.Close()
	exe, err := rt.Compile(nodes)
	if err != nil {
		return nil, err
	}
	defer exe.Free()
	return exe.Run(nil)
}

// constNode is the materialisation used while folding: every host value is a constant.
func constNode(g *tensor.Graph, v *value) *tensor.Node {
	if v.node != nil {
		return v.node
	}
	return g.Const(v.host)
}

// stageBuild is one compiled stage: the nodes [start, end) lowered for the shapes of
// the data fed to it and the contents of the data it pinned.
type stageBuild struct {
	start, end int
	feeds      []feedSpec
	pinned     []pin
	exe        *runtime.Executable // nil when the stage computes nothing
	outputs    []*tensor.Node      // what exe computes
	fetch      []string            // values computed here and read later, in exe's output order
	fetchTypes []DataType
	consts     map[string]*value // host values made here and read later
	aliases    map[string]alias  // values that are run data under another name (an Identity of a feed)
	next       string            // the value the next stage needs on the host ("" at the end)
}

// alias is run data seen under another name and, after a cast between types of one
// carrier, another type.
type alias struct {
	from  string
	dtype DataType
}

// matches reports whether this build serves env: the same shapes and types for its
// feeds and the same contents for its pins.
func (s *stageBuild) matches(env *runEnv) bool {
	if _, ok := env.data[s.next]; ok && s.next != "" {
		return false // the run has measured what this build stops for
	}
	for _, f := range s.feeds {
		sh, ok := env.shapes[f.name]
		if !ok || env.types[f.name] != f.dtype || !sh.Equal(f.node.Shape()) {
			return false
		}
	}
	for _, p := range s.pinned {
		t, ok := env.data[p.name]
		if !ok || t.DType() != p.data.DType() || !t.Shape().Equal(p.data.Shape()) || !bytes.Equal(t.Bytes(), p.data.Bytes()) {
			return false
		}
	}
	return true
}

// errNeedData reports that a build at load time stopped at a value only a run knows.
var errNeedData = errors.New("onnx: the graph needs run data to be built")

// buildStage lowers nodes from start in env, up to the end of the
// graph or the first node that needs on the host a value this stage computes, and
// compiles the result on the model's runtime.
func (m *Model) buildStage(start int, env *runEnv) (*stageBuild, error) {
	b := &builder{m: m, g: tensor.NewGraph(), env: env, vals: map[string]*value{}, mat: map[*value]*tensor.Node{}}
	lookup := func(name string) (*value, error) {
		if v, ok := b.vals[name]; ok {
			return v, nil
		}
		if sh, ok := env.shapes[name]; ok {
			v := &value{dtype: env.types[name], shape: sh, data: name}
			b.vals[name] = v
			return v, nil
		}
		if v, ok := env.known[name]; ok {
			return v, nil
		}
		return nil, fmt.Errorf("value %q is not defined", name)
	}
	sb := &stageBuild{start: start, end: len(m.graph.nodes), consts: map[string]*value{}, aliases: map[string]alias{}}
	for i := start; i < len(m.graph.nodes); i++ {
		n := m.graph.nodes[i]
		ins := make([]*value, len(n.inputs))
		allHost := true
		for k, name := range n.inputs {
			if name == "" {
				continue
			}
			v, err := lookup(name)
			if err != nil {
				return nil, fmt.Errorf("onnx: %s: input %d: %w", n.where(), k, err)
			}
			ins[k] = v
			allHost = allHost && v.isHost()
		}
		outs, stop, err := m.lowerStep(n, ins, b, allHost)
		if err != nil {
			return nil, err
		}
		if stop != "" {
			sb.end, sb.next = i, stop
			break
		}
		for k, o := range outs {
			if o != nil && n.outputs[k] != "" {
				b.vals[n.outputs[k]] = o
			}
		}
	}
	// What later stages and the caller read: values computed here are fetched, host
	// values made here are handed on.
	for name, v := range b.vals {
		if m.graph.lastUse[name] < sb.end {
			continue
		}
		switch {
		case v.node == nil && v.host == nil:
			// Data passed through unchanged (an Identity of run data): the run has it.
			sb.aliases[name] = alias{v.data, v.dtype}
		case v.node != nil && v.node.Op() == tensor.OpInput:
			sb.aliases[name] = alias{v.node.Name(), v.dtype}
		case v.node != nil:
			sb.fetch = append(sb.fetch, name)
		case v.host != nil:
			sb.consts[name] = v
		}
	}
	slices.Sort(sb.fetch)
	outs := make([]*tensor.Node, len(sb.fetch))
	for i, name := range sb.fetch {
		outs[i] = b.vals[name].node
		sb.fetchTypes = append(sb.fetchTypes, b.vals[name].dtype)
	}
	if sb.next != "" && sb.next == b.measured {
		sb.fetch = append(sb.fetch, b.measured)
		sb.fetchTypes = append(sb.fetchTypes, fromEngine(b.measuredNode.DType()))
		outs = append(outs, b.measuredNode)
	}
	sb.feeds, sb.pinned = b.feeds, b.pinned
	if len(sb.fetch) == 0 {
		return sb, nil
	}
	exe, err := m.rt.Compile(outs)
	if err != nil {
		return nil, fmt.Errorf("onnx: compiling: %w", err)
	}
	sb.exe, sb.outputs = exe, outs
	// Feeds materialised by a lowering that then stopped at a boundary are not read.
	sb.feeds = slices.DeleteFunc(sb.feeds, func(f feedSpec) bool { return !slices.Contains(exe.Inputs(), f.node) })
	return sb, nil
}

// lowerStep lowers one node into b's graph, or folds it when every input is known. It
// returns the name of the value a boundary stopped at, if any.
func (m *Model) lowerStep(n *nodeDef, ins []*value, b *builder, allHost bool) (outs []*value, stop string, err error) {
	defer func() {
		if r := recover(); r != nil {
			switch e := r.(type) {
			case boundary:
				outs, stop, err = nil, e.name, nil
			case needData:
				outs, stop, err = nil, "", fmt.Errorf("%w: %s reads %q on the host", errNeedData, n.where(), e.name)
			default:
				panic(r)
			}
		}
	}()
	if allHost {
		outs, err = m.fold(n, ins)
		return outs, "", err
	}
	outs, err = m.lowerNode(n, ins, b.g, b)
	return outs, "", err
}
