package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gml-dev/gml/onnx/internal/onnxpb"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Model is a loaded ONNX model: its graph lowered to the engine, weights resident on
// the device, ready to Run any number of times. It is safe for concurrent use (runs
// are serialised).
type Model struct {
	path            string
	producer        string
	producerVersion string
	irVersion       int64
	opsets          map[string]int
	graph           *graphDef
	consts          map[string]*value // initializers
	inputShapes     map[string]tensor.Shape
	// The device resources sit in their own struct so that a model dropped without
	// Close (a notebook cell run again) still frees them when it is collected.
	*resources
}

// resources are what a model holds on its runtime: compiled stages and resident
// weights.
type resources struct {
	mu        sync.Mutex
	rt        *runtime.Runtime
	ownRT     bool
	variables map[*tensor.Tensor]*tensor.Variable // initializers big enough to live on the device
	stages    map[int][]*stageBuild               // builds by first node, most recently used first
	closed    bool
}

// maxBuilds is how many builds of one stage a model keeps (for different input shapes
// or measured sizes); older ones are freed, so memory does not grow across runs.
const maxBuilds = 4

// variableBytes is the size from which an initializer becomes a runtime variable,
// uploaded to the device once and shared by every build; smaller ones are constants.
const variableBytes = 256

// Option configures Load.
type Option func(*config) error

type config struct {
	rt          *runtime.Runtime
	device      string
	inputShapes map[string][]int
}

// Device runs the model on a new runtime for "cpu", "gpu" or "auto" (see
// runtime.Device). Without Device or Runtime the model uses runtime.Default().
func Device(name string) Option {
	return func(c *config) error { c.device = name; return nil }
}

// Runtime runs the model on rt.
func Runtime(rt *runtime.Runtime) Option {
	return func(c *config) error { c.rt = rt; return nil }
}

// InputShapes binds the shapes of inputs with symbolic or unknown dimensions, so the
// model is built and compiled at load. Inputs not named keep their declared shapes;
// those that stay symbolic are bound by the first Run.
func InputShapes(shapes map[string][]int) Option {
	return func(c *config) error { c.inputShapes = shapes; return nil }
}

// Load reads an ONNX model file (with its external data files, found relative to it)
// and prepares it: the graph is parsed, every node is checked for support, and when
// every input shape is known (declared or given by InputShapes) the graph is lowered
// and compiled, with the weights placed on the device.
func Load(path string, opts ...Option) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return decode(data, filepath.Dir(path), path, opts)
}

// Decode prepares a model from the bytes of an ONNX file, as Load does. The model may
// not use external data.
func Decode(data []byte, opts ...Option) (*Model, error) {
	return decode(data, "", "", opts)
}

func decode(data []byte, dir, path string, opts []Option) (*Model, error) {
	var c config
	for _, o := range opts {
		if err := o(&c); err != nil {
			return nil, err
		}
	}
	var mp onnxpb.ModelProto
	if err := unmarshal(data, &mp); err != nil {
		return nil, fmt.Errorf("onnx: %s: not an ONNX model (truncated or corrupt): %w", nameOr(path, "model"), err)
	}
	g, err := parseGraph(&mp, dir)
	if err != nil {
		return nil, err
	}
	m := &Model{
		path: path, producer: mp.GetProducerName(), producerVersion: mp.GetProducerVersion(),
		irVersion: mp.GetIrVersion(), opsets: map[string]int{}, graph: g,
		consts: map[string]*value{}, inputShapes: map[string]tensor.Shape{},
		resources: &resources{variables: map[*tensor.Tensor]*tensor.Variable{}, stages: map[int][]*stageBuild{}},
	}
	for _, o := range mp.OpsetImport {
		m.opsets[normDomain(o.GetDomain())] = int(o.GetVersion())
	}
	if v := m.opsets[""]; v != 0 && v < minOpset {
		return nil, fmt.Errorf("onnx: %s: opset %d is older than %d, the oldest supported", nameOr(path, "model"), v, minOpset)
	}
	for _, n := range g.nodes {
		if err := checkSupported(n); err != nil {
			return nil, err
		}
	}
	for name, a := range g.inits {
		m.consts[name] = &value{dtype: a.dtype, shape: a.Shape(), host: a.t}
		if a.t.Len()*a.t.DType().Size() >= variableBytes {
			m.variables[a.t] = tensor.NewVariable(name, a.t)
		}
	}
	for name, s := range c.inputShapes {
		if !slices.ContainsFunc(g.inputs, func(v valueInfo) bool { return v.name == name }) {
			return nil, fmt.Errorf("onnx: InputShapes names %q, which is not an input (inputs: %s)", name, inputNames(g.inputs))
		}
		m.inputShapes[name] = tensor.Shape(s).Clone()
	}
	switch {
	case c.rt != nil:
		m.rt = c.rt
	case c.device != "":
		if m.rt, err = runtime.New(runtime.Device(c.device)); err != nil {
			return nil, fmt.Errorf("onnx: %w", err)
		}
		m.ownRT = true
	default:
		if m.rt, err = runtime.Default(); err != nil {
			return nil, fmt.Errorf("onnx: %w", err)
		}
	}
	if err := m.prepare(); err != nil {
		m.Close()
		return nil, err
	}
	goruntime.AddCleanup(m, func(r *resources) { r.release() }, m.resources)
	return m, nil
}

// minOpset is the oldest default-domain opset gml loads.
const minOpset = 1

func nameOr(path, def string) string {
	if path == "" {
		return def
	}
	return path
}

func inputNames(vs []valueInfo) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.name
	}
	return strings.Join(names, ", ")
}

// checkSupported fails for ops gml does not implement, naming the node.
func checkSupported(n *nodeDef) error {
	def, ok := opTable[n.op]
	if !ok || n.domain != "" {
		return fmt.Errorf("onnx: %s: operator %w", n.where(), ErrUnsupported)
	}
	if n.opset < def.since {
		return fmt.Errorf("onnx: %s: %w before opset %d", n.where(), ErrUnsupported, def.since)
	}
	return nil
}

// prepare builds and compiles the first stage at load when every input shape is
// known; otherwise the first Run does.
func (m *Model) prepare() error {
	env := newEnv()
	for _, in := range m.graph.inputs {
		s, ok := m.inputShapes[in.name]
		if !ok {
			if s, ok = in.staticShape(); !ok {
				return nil
			}
		}
		if err := checkDeclared(in, s); err != nil {
			return err
		}
		env.shapes[in.name], env.types[in.name] = s, in.dtype
	}
	for name, v := range m.consts {
		env.known[name] = v
	}
	sb, err := m.buildStage(0, env)
	if errors.Is(err, errNeedData) {
		return nil
	}
	if err != nil {
		return err
	}
	m.stages[0] = []*stageBuild{sb}
	return nil
}

// checkDeclared checks a shape against an input's declaration.
func checkDeclared(in valueInfo, s tensor.Shape) error {
	if !in.known {
		return nil
	}
	if len(s) != len(in.dims) || slices.ContainsFunc(s, func(d int) bool { return d < 0 }) {
		return fmt.Errorf("onnx: input %q has shape %v, declared %s", in.name, s, dimsString(in.dims))
	}
	for i, d := range in.dims {
		if d.Value >= 0 && d.Value != s[i] {
			return fmt.Errorf("onnx: input %q has shape %v, declared %s", in.name, s, dimsString(in.dims))
		}
	}
	return nil
}

func dimsString(ds []Dim) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// ValueInfo describes an input or output of the model.
type ValueInfo struct {
	Name  string
	Type  DataType
	Dims  []Dim // nil when the file declares no shape
	Shape bool  // the file declares a shape
}

// String is "name: float32[batch 3 224 224]".
func (v ValueInfo) String() string {
	s := v.Name + ": " + v.Type.String()
	if v.Shape {
		s += dimsString(v.Dims)
	} else {
		s += "[...]"
	}
	return s
}

func infos(vs []valueInfo) []ValueInfo {
	out := make([]ValueInfo, len(vs))
	for i, v := range vs {
		out[i] = ValueInfo{Name: v.name, Type: v.dtype, Dims: slices.Clone(v.dims), Shape: v.known}
	}
	return out
}

// Runtime returns the runtime the model runs on.
func (m *Model) Runtime() *runtime.Runtime { return m.rt }

// Inputs lists the inputs Run must be fed (initializers are not among them).
func (m *Model) Inputs() []ValueInfo { return infos(m.graph.inputs) }

// Outputs lists the outputs Run returns.
func (m *Model) Outputs() []ValueInfo { return infos(m.graph.outputs) }

// Close frees the compiled stages and the weights' device buffers; the model is
// unusable afterwards. A model that is not closed frees them when it is collected.
func (m *Model) Close() error { return m.release() }

// release frees the compiled stages and the variables, once.
func (r *resources) release() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	for _, builds := range r.stages {
		for _, sb := range builds {
			if sb.exe != nil {
				sb.exe.Free()
			}
		}
	}
	r.stages = nil
	if r.rt != nil {
		for _, v := range r.variables {
			r.rt.Release(v)
		}
	}
	if r.ownRT && r.rt != nil {
		return r.rt.Close()
	}
	return nil
}

// Run computes the model's outputs from named inputs, each a *tensor.Tensor (of an
// engine type) or an *Array (any supported ONNX type), and returns every graph output
// by name. Inputs with symbolic dimensions take the fed shapes; a shape not seen before
// builds and compiles the graph again (the last few builds are kept).
func (m *Model) Run(inputs map[string]any) (map[string]*Array, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("onnx: Run on a closed model")
	}
	env, err := m.feedEnv(inputs)
	if err != nil {
		return nil, err
	}
	for start, stages := 0, 0; ; stages++ {
		if stages > 2*len(m.graph.nodes)+1 {
			return nil, fmt.Errorf("onnx: internal error: the graph does not finish after %d stages", stages)
		}
		sb, err := m.stage(start, env)
		if err != nil {
			return nil, err
		}
		if sb.exe != nil {
			feeds := make(map[*tensor.Node]*tensor.Tensor, len(sb.feeds))
			for _, f := range sb.feeds {
				feeds[f.node] = env.data[f.name]
			}
			res, err := sb.exe.Run(feeds)
			if err != nil {
				return nil, fmt.Errorf("onnx: %w", err)
			}
			for k, name := range sb.fetch {
				env.data[name], env.shapes[name], env.types[name] = res[k], res[k].Shape(), sb.fetchTypes[k]
			}
		}
		for name, v := range sb.consts {
			env.known[name] = v
		}
		for name, a := range sb.aliases {
			env.data[name], env.shapes[name], env.types[name] = env.data[a.from], env.shapes[a.from], a.dtype
		}
		if sb.next == "" {
			break
		}
		start = sb.end
	}
	out := make(map[string]*Array, len(m.graph.outputs))
	for _, o := range m.graph.outputs {
		switch {
		case env.data[o.name] != nil:
			out[o.name] = &Array{dtype: env.types[o.name], t: env.data[o.name]}
		case env.known[o.name] != nil:
			v := env.known[o.name]
			out[o.name] = &Array{dtype: v.dtype, t: v.host}
		default:
			return nil, fmt.Errorf("onnx: output %q is not computed by the graph", o.name)
		}
	}
	return out, nil
}

// feedEnv checks the inputs against the declarations, binds symbolic dimensions, and
// returns the run's starting environment.
func (m *Model) feedEnv(inputs map[string]any) (*runEnv, error) {
	env := newEnv()
	for name, v := range m.consts {
		env.known[name] = v
	}
	bound := map[string]int{}
	for _, in := range m.graph.inputs {
		raw, ok := inputs[in.name]
		if !ok || raw == nil {
			return nil, fmt.Errorf("onnx: input %q (%v%s) was not fed", in.name, in.dtype, dimsString(in.dims))
		}
		a, err := asArray(raw)
		if err != nil {
			return nil, fmt.Errorf("onnx: input %q: %w", in.name, err)
		}
		if a.dtype != in.dtype {
			return nil, fmt.Errorf("onnx: input %q wants %v, was fed %v (convert it with onnx.NewArray)", in.name, in.dtype, a.dtype)
		}
		s := a.Shape()
		if err := checkDeclared(in, s); err != nil {
			return nil, err
		}
		for i, d := range in.dims {
			if d.Param == "" {
				continue
			}
			if prev, ok := bound[d.Param]; ok && prev != s[i] {
				return nil, fmt.Errorf("onnx: input %q binds dimension %q to %d, another input bound it to %d", in.name, d.Param, s[i], prev)
			}
			bound[d.Param] = s[i]
		}
		env.data[in.name], env.shapes[in.name], env.types[in.name] = a.t, s, a.dtype
	}
	for name := range m.graph.defs {
		raw, ok := inputs[name]
		if !ok {
			continue
		}
		a, err := asArray(raw)
		if err != nil {
			return nil, fmt.Errorf("onnx: input %q: %w", name, err)
		}
		delete(env.known, name)
		env.data[name], env.shapes[name], env.types[name] = a.t, a.Shape(), a.dtype
	}
	var unknown []string
	for name := range inputs {
		if _, ok := env.shapes[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("onnx: fed %s, which the model does not take (inputs: %s)", strings.Join(unknown, ", "), inputNames(m.graph.inputs))
	}
	return env, nil
}

// asArray accepts the feed types of Run.
func asArray(x any) (*Array, error) {
	switch v := x.(type) {
	case *Array:
		return v, nil
	case *tensor.Tensor:
		return ArrayOf(v), nil
	}
	return nil, fmt.Errorf("want a *tensor.Tensor or an *onnx.Array, have %T", x)
}

// stage returns the build of the stage starting at start that serves env, building
// and compiling it when none does.
func (m *Model) stage(start int, env *runEnv) (*stageBuild, error) {
	builds := m.stages[start]
	for i, sb := range builds {
		if sb.matches(env) {
			copy(builds[1:i+1], builds[:i])
			builds[0] = sb
			return sb, nil
		}
	}
	sb, err := m.buildStage(start, env)
	if err != nil {
		return nil, err
	}
	builds = append([]*stageBuild{sb}, builds...)
	if len(builds) > maxBuilds {
		for _, old := range builds[maxBuilds:] {
			if old.exe != nil {
				old.exe.Free()
			}
		}
		builds = builds[:maxBuilds]
	}
	m.stages[start] = builds
	return sb, nil
}
