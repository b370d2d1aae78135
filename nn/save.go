package nn

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// The file format: the magic line, a little-endian uint64 header length, the JSON
// header, then the raw little-endian bytes of every variable in header order.
const saveMagic = "GMLNN1\n"

type savedModel struct {
	Name      string
	Inputs    []savedInput
	Layers    []savedLayer
	Nodes     []savedNode
	Outputs   []int // node references (see savedNode)
	Variables []savedVar
	Optimizer *savedOptimizer `json:",omitempty"`
	// Device is the Device option the model was compiled with ("" for the default),
	// so that a loaded copy runs where the saved model ran.
	Device string `json:",omitempty"`
}

type savedInput struct {
	Name  string
	DType string
	Shape []int
}

type savedLayer struct {
	Kind, Name string
	Config     json.RawMessage
	// Custom marks a layer made by Custom or Lambda, rebuilt from what Load is given.
	Custom bool `json:",omitempty"`
}

// savedNode applies layer Layer to Inputs, each a reference: -1-i for model input i,
// j >= 0 for node j.
type savedNode struct {
	Layer  int
	Inputs []int
}

type savedVar struct {
	Name  string
	DType string
	Shape []int
}

type savedOptimizer struct {
	Config      json.RawMessage
	Steps       int
	Losses      []string
	LossWeights []float64
	Metrics     map[string][]string
	Precision   string `json:",omitempty"` // MixedPrecision's policy, when not f32
}

// layerKinds makes an empty layer of each kind, for Load.
var layerKinds = map[string]func() Layer{
	"dense": func() Layer { return &dense{} }, "flatten": func() Layer { return &flatten{} },
	"reshape": func() Layer { return &reshape{} }, "permute": func() Layer { return &permute{} },
	"dropout": func() Layer { return &dropout{} }, "add": func() Layer { return &merge{} },
	"concatenate": func() Layer { return &merge{} }, "conv1d": func() Layer { return &conv{} },
	"conv2d": func() Layer { return &conv{} }, "max_pooling2d": func() Layer { return &pool{} },
	"average_pooling2d": func() Layer { return &pool{} }, "global_average_pooling2d": func() Layer { return &pool{} },
	"batch_norm": func() Layer { return &batchNorm{} }, "layer_norm": func() Layer { return &featureNorm{} },
	"rms_norm": func() Layer { return &featureNorm{} }, "embedding": func() Layer { return &embedding{} },
	"positional_embedding": func() Layer { return &posEmbedding{} }, "lstm": func() Layer { return &recurrent{} },
	"gru": func() Layer { return &recurrent{} }, "sequence_pooling": func() Layer { return &seqPool{} },
	"attention": func() Layer { return &attention{} }, "transformer_block": func() Layer { return &transformerBlock{} },
	"activation": func() Layer { return &actLayer{} },
}

// Save writes the model to one file: architecture, weights, and (when compiled) the
// optimizer with its state and the losses and metrics, so Load in a fresh process
// predicts identically and can resume training.
func (m *Net) Save(path string) error {
	head, values, err := m.serialize()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("nn: Save: %w", err)
	}
	if err := encode(f, head, values); err != nil {
		f.Close()
		return fmt.Errorf("nn: Save: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("nn: Save: %w", err)
	}
	return nil
}

// serialize returns the JSON header and the variable values of the model.
func (m *Net) serialize() ([]byte, []*tensor.Tensor, error) {
	if !m.Built() {
		return nil, nil, errors.New("nn: Save: the model is not built yet (fit it, or give the first layer an InputShape)")
	}
	h := savedModel{Name: m.name}
	if m.comp != nil {
		h.Device = m.comp.device
	}
	for _, in := range m.inputs {
		h.Inputs = append(h.Inputs, savedInput{Name: in.name, DType: in.spec.DType.String(), Shape: in.spec.Shape})
	}
	layerIdx := map[Layer]int{}
	for i, l := range m.layers {
		layerIdx[l] = i
		cfg, err := json.Marshal(l.config())
		if err != nil {
			return nil, nil, fmt.Errorf("nn: Save: layer %s: %w", l.Name(), err)
		}
		_, isCustom := l.(*custom)
		h.Layers = append(h.Layers, savedLayer{Kind: l.Kind(), Name: l.Name(), Config: cfg, Custom: isCustom})
	}
	ref := map[*Node]int{}
	for i, in := range m.inputs {
		ref[in] = -1 - i
	}
	for j, n := range m.nodes {
		ref[n] = j
		sn := savedNode{Layer: layerIdx[n.layer]}
		for _, in := range n.inputs {
			sn.Inputs = append(sn.Inputs, ref[in])
		}
		h.Nodes = append(h.Nodes, sn)
	}
	for _, o := range m.outputs {
		h.Outputs = append(h.Outputs, ref[o])
	}
	vars := m.variables()
	if m.comp != nil && m.comp.opt != nil {
		if m.comp.heads == nil {
			if err := m.resolveHeads(); err != nil {
				return nil, nil, err
			}
		}
		o := m.comp.opt.base()
		cfg, err := json.Marshal(o.C)
		if err != nil {
			return nil, nil, err
		}
		so := &savedOptimizer{Config: cfg, Steps: o.steps, Metrics: map[string][]string{}}
		so.Precision = precisionPolicy(m.comp.opts.precision)
		for _, hd := range m.comp.heads {
			so.Losses = append(so.Losses, hd.loss.name)
			so.LossWeights = append(so.LossWeights, hd.weight)
		}
		for i, nm := range m.OutputNames() {
			so.Metrics[nm] = m.comp.heads[i].metrics
		}
		h.Optimizer = so
		vars = append(vars, o.allSlots(m.Params())...)
	}
	rt, err := m.rtime()
	if err != nil {
		return nil, nil, err
	}
	values := make([]*tensor.Tensor, len(vars))
	for i, v := range vars {
		if values[i], err = rt.Read(v); err != nil {
			return nil, nil, fmt.Errorf("nn: Save: %w", err)
		}
		h.Variables = append(h.Variables, savedVar{Name: v.Name(), DType: v.DType().String(), Shape: v.Shape()})
	}
	head, err := json.Marshal(h)
	return head, values, err
}

// encode writes the file format to w.
func encode(w io.Writer, head []byte, values []*tensor.Tensor) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(saveMagic)
	binary.Write(bw, binary.LittleEndian, uint64(len(head)))
	bw.Write(head)
	for _, t := range values {
		bw.Write(t.Bytes())
	}
	return bw.Flush()
}

// loadSettings collects Load's options.
type loadSettings struct {
	customKinds map[string]func(config []byte) (CustomLayer, error)
	lambdas     map[string]func(x *tensor.Node) *tensor.Node
	device      string
}

// CustomKind tells Load how to rebuild the custom layers of a kind (see Custom): build
// receives the JSON of the layer's Config option ("null" without one) and returns the
// CustomLayer; the saved weights are then written into the variables its Build
// declares.
func CustomKind(kind string, build func(config []byte) (CustomLayer, error)) LoadOption {
	return loadOpt{"CustomKind", func(s *loadSettings) error {
		if build == nil {
			return fmt.Errorf("the constructor of kind %q is nil", kind)
		}
		if s.customKinds == nil {
			s.customKinds = map[string]func([]byte) (CustomLayer, error){}
		}
		s.customKinds[kind] = build
		return nil
	}}
}

// LambdaFunc gives Load the function of the Lambda layer of the given name (a function
// is not saved with the model).
func LambdaFunc(layer string, f func(x *tensor.Node) *tensor.Node) LoadOption {
	return loadOpt{"LambdaFunc", func(s *loadSettings) error {
		if f == nil {
			return fmt.Errorf("the function of layer %q is nil", layer)
		}
		if s.lambdas == nil {
			s.lambdas = map[string]func(*tensor.Node) *tensor.Node{}
		}
		s.lambdas[layer] = f
		return nil
	}}
}

// Load reads a model written by Save: the same architecture with the saved weights and,
// when it was compiled, compiled again with its optimizer state, losses and metrics.
// It runs on the device the saved model was compiled for (Device("cpu") stays on the
// CPU), unless the Device option says otherwise. A model with custom layers needs them
// again: CustomKind gives the constructor of a kind made with Custom, LambdaFunc the
// function of a Lambda layer.
func Load(path string, opts ...LoadOption) (*Net, error) {
	s := loadSettings{device: keepDevice}
	if err := applyOptions("Load", &s, nil, opts, LoadOption.loadSetting); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("nn: Load: %w", err)
	}
	defer f.Close()
	m, err := decode(bufio.NewReader(f), s.device, nil, s.customSource())
	if err != nil {
		return nil, fmt.Errorf("nn: Load %s: %w", path, err)
	}
	return m, nil
}

// customSource returns the CustomLayer of a saved custom layer.
type customSource func(sl savedLayer) (CustomLayer, error)

// customSource finds saved custom layers among the CustomKind and LambdaFunc options.
func (s *loadSettings) customSource() customSource {
	return func(sl savedLayer) (CustomLayer, error) {
		if sl.Kind == "lambda" {
			f, ok := s.lambdas[sl.Name]
			if !ok {
				return nil, fmt.Errorf("layer %s is a Lambda, whose function is not saved: pass nn.LambdaFunc(%q, f) to Load", sl.Name, sl.Name)
			}
			return lambdaLayer(f), nil
		}
		build, ok := s.customKinds[sl.Kind]
		if !ok {
			return nil, fmt.Errorf("layer %s is a custom layer of kind %q: pass nn.CustomKind(%q, constructor) to Load", sl.Name, sl.Kind, sl.Kind)
		}
		var impl CustomLayer
		var err error
		if perr := callUser("the CustomKind constructor", func() { impl, err = build(sl.Config) }); perr != nil {
			err = perr
		}
		if err == nil && impl == nil {
			err = fmt.Errorf("the CustomKind constructor of kind %q returned a nil CustomLayer", sl.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", sl.Name, err)
		}
		return impl, nil
	}
}

// keepDevice, as decode's device, keeps the device the model was saved with.
const keepDevice = "saved"

// decode reads a saved model and places it on device (keepDevice: the saved one), in
// runtime rt when it is not nil.
func decode(r io.Reader, device string, rt *runtime.Runtime, customs customSource) (*Net, error) {
	magic := make([]byte, len(saveMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != saveMagic {
		return nil, errors.New("not a gml model file")
	}
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil || n > 1<<30 {
		return nil, errors.New("corrupt header length")
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, fmt.Errorf("reading header: %w", err)
	}
	var h savedModel
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	m, err := rebuild(&h, customs)
	if err != nil {
		return nil, err
	}
	if device == keepDevice {
		device = h.Device
	}
	// The model lives on that device from the start, compiled or not.
	m.comp = &compiled{device: device, rt: rt, progs: map[string]*program{}}
	values := map[string]*tensor.Tensor{}
	for _, sv := range h.Variables {
		dt, err := tensor.ParseDType(sv.DType)
		if err != nil {
			return nil, err
		}
		t := tensor.New(dt, sv.Shape...)
		if _, err := io.ReadFull(r, t.Bytes()); err != nil {
			return nil, fmt.Errorf("reading %s: %w", sv.Name, err)
		}
		values[sv.Name] = t
	}
	if so := h.Optimizer; so != nil {
		o := newOptimizer("adam", 1, nil, nil).base()
		if err := json.Unmarshal(so.Config, &o.C); err != nil {
			return nil, fmt.Errorf("optimizer: %w", err)
		}
		o.steps = so.Steps
		o.lrVar, o.stepVar, o.lrSynced, o.stepSynced = nil, nil, 0, false
		opts := []CompileOption{Loss(so.Losses...), LossWeights(so.LossWeights...)}
		if device != "" {
			opts = append(opts, Device(device))
		}
		if len(so.Metrics) > 0 {
			opts = append(opts, MetricsByName(so.Metrics))
		}
		if so.Precision != "" {
			opts = append(opts, MixedPrecision(so.Precision))
		}
		if err := m.Compile(&optimizer{optBase: *o}, opts...); err != nil {
			return nil, err
		}
	}
	if err := m.writeNamed(values); err != nil {
		return nil, err
	}
	return m, nil
}

// rebuild reconstructs the model graph from a header, with customs for custom layers.
func rebuild(h *savedModel, customs customSource) (*Net, error) {
	layers := make([]Layer, len(h.Layers))
	var missing []error // every custom layer Load was not given, reported at once
	for i, sl := range h.Layers {
		var l Layer
		if sl.Custom {
			impl, err := customs(sl)
			if err != nil {
				missing = append(missing, err)
				continue
			}
			l = &custom{impl: impl}
		} else {
			mk, ok := layerKinds[sl.Kind]
			if !ok {
				return nil, fmt.Errorf("unknown layer kind %q", sl.Kind)
			}
			l = mk()
		}
		l.base().name, l.base().kind, l.base().self = sl.Name, sl.Kind, l
		if err := json.Unmarshal(sl.Config, l.config()); err != nil {
			return nil, fmt.Errorf("layer %s: %w", sl.Name, err)
		}
		layers[i] = l
	}
	if len(missing) > 0 {
		return nil, errors.Join(missing...)
	}
	inputs := make([]*Node, len(h.Inputs))
	for i, si := range h.Inputs {
		inputs[i] = Input(si.Shape, Name(si.Name), DType(si.DType))
	}
	nodes := make([]*Node, len(h.Nodes))
	resolve := func(r int) (*Node, error) {
		switch {
		case r < 0 && -1-r < len(inputs):
			return inputs[-1-r], nil
		case r >= 0 && r < len(nodes) && nodes[r] != nil:
			return nodes[r], nil
		}
		return nil, fmt.Errorf("bad node reference %d", r)
	}
	for j, sn := range h.Nodes {
		if sn.Layer < 0 || sn.Layer >= len(layers) {
			return nil, fmt.Errorf("node %d: bad layer %d", j, sn.Layer)
		}
		args := make([]*Node, len(sn.Inputs))
		for k, r := range sn.Inputs {
			a, err := resolve(r)
			if err != nil {
				return nil, err
			}
			args[k] = a
		}
		nodes[j] = layers[sn.Layer].Apply(args...)
	}
	outs := make([]*Node, len(h.Outputs))
	for i, r := range h.Outputs {
		o, err := resolve(r)
		if err != nil {
			return nil, err
		}
		outs[i] = o
	}
	return Model(inputs, outs, Name(h.Name))
}

// writeNamed writes saved values into the model's variables and optimizer slots.
func (m *Net) writeNamed(values map[string]*tensor.Tensor) error {
	vars := m.variables()
	if m.comp != nil && m.comp.opt != nil {
		vars = append(vars, m.comp.opt.base().allSlots(m.Params())...)
	}
	rt, err := m.rtime()
	if err != nil {
		return err
	}
	for _, v := range vars {
		t, ok := values[v.Name()]
		if !ok {
			return fmt.Errorf("the file lacks variable %s", v.Name())
		}
		if err := rt.Write(v, t); err != nil {
			return err
		}
	}
	return nil
}
