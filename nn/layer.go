package nn

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/gml-dev/gml/tensor"
)

// Spec is the type of a value flowing between layers: element type and shape, the batch
// axis excluded.
type Spec struct {
	DType tensor.DType
	Shape tensor.Shape
}

func (s Spec) String() string { return fmt.Sprintf("%v%v", s.DType, s.Shape) }

// Layer is a building block of a model. A layer creates its weights the first time it
// is applied, from the shape of its input, and afterwards only checks that later inputs
// fit them. Applying one layer object to several nodes shares its weights.
type Layer interface {
	// Name is the layer's unique name ("dense_2"), used for its variables' names.
	Name() string
	// Kind is the layer type ("dense", "conv2d").
	Kind() string
	// Params lists the trainable variables (empty before the layer is built).
	Params() []*tensor.Variable
	// State lists the non-trainable variables (batch-norm running statistics).
	State() []*tensor.Variable
	// Apply connects the layer to symbolic nodes of the functional API and returns its
	// output node. Errors (a wrong input shape, a bad option) are kept in the node and
	// reported by Model.
	Apply(inputs ...*Node) *Node

	base() *layerBase
	// setup checks the input specs and creates the weights on the first call.
	setup(in []Spec) error
	// forward emits the layer's computation for concrete inputs (batch axis first).
	forward(c *fwd, in []*tensor.Node) *tensor.Node
	// config returns a pointer to the layer's JSON-serialisable configuration.
	config() any
}

// layerBase holds what every layer has: its name and kind, its variables, the error of
// its construction, and the input specs it was built for.
type layerBase struct {
	name   string
	kind   string
	err    error
	built  []Spec
	params []*tensor.Variable
	state  []*tensor.Variable
	// inputShape is the InputShape option of a Sequential model's first layer.
	inputShape *Spec
	// self is the layer this base belongs to, for rendering it.
	self Layer
}

func (b *layerBase) Name() string               { return b.name }
func (b *layerBase) Kind() string               { return b.kind }
func (b *layerBase) Params() []*tensor.Variable { return b.params }
func (b *layerBase) State() []*tensor.Variable  { return b.state }
func (b *layerBase) base() *layerBase           { return b }

var (
	namesMu  sync.Mutex
	nameUsed = map[string]int{}
)

// initBase names the layer l (an explicit Name option, or kind with a counter) and
// applies the options: Name, InputShape and the layer's own, listed in allowed. An
// error is kept for Compile, Model or Fit to report.
func initBase(l Layer, kind string, s *layerSettings, allowed []string, opts []LayerOption) {
	b := l.base()
	b.self, b.kind = l, kind
	b.err = applyOptions(kind, s, append([]string{"Name", "InputShape"}, allowed...), opts, LayerOption.layerSetting)
	if s.inputShape != nil {
		b.inputShape = &Spec{DType: tensor.F32, Shape: s.inputShape}
	}
	b.name = s.name
	if b.name == "" {
		namesMu.Lock()
		k := nameUsed[kind]
		nameUsed[kind]++
		namesMu.Unlock()
		b.name = kind
		if k > 0 {
			b.name = fmt.Sprintf("%s_%d", kind, k)
		}
	}
}

// rng draws initial weights. SetSeed makes model initialisation reproducible.
var (
	rngMu sync.Mutex
	rng   = rand.New(rand.NewPCG(1, 2))
)

// SetSeed reseeds the generator that initialises layer weights.
func SetSeed(seed uint64) {
	rngMu.Lock()
	rng = rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	rngMu.Unlock()
}

// uniformInit returns an F32 tensor of the shape with values uniform in [-limit, limit].
func uniformInit(limit float64, shape ...int) *tensor.Tensor {
	t := tensor.New(tensor.F32, shape...)
	d := t.Float32s()
	rngMu.Lock()
	for i := range d {
		d[i] = float32((rng.Float64()*2 - 1) * limit)
	}
	rngMu.Unlock()
	return t
}

// filled returns an F32 tensor of the shape holding v everywhere.
func filled(v float32, shape ...int) *tensor.Tensor {
	t := tensor.New(tensor.F32, shape...)
	d := t.Float32s()
	for i := range d {
		d[i] = v
	}
	return t
}

// param adds a trainable variable named layer/what.
func (b *layerBase) param(what string, init *tensor.Tensor) *tensor.Variable {
	v := tensor.NewVariable(b.name+"/"+what, init)
	b.params = append(b.params, v)
	return v
}

// stateVar adds a non-trainable variable named layer/what.
func (b *layerBase) stateVar(what string, init *tensor.Tensor) *tensor.Variable {
	v := tensor.NewVariable(b.name+"/"+what, init)
	b.state = append(b.state, v)
	return v
}

// checkRebuild returns nil when the layer is not built yet (and records in as its
// specs), or when in matches the specs it was built for; the caller creates weights
// only when first is true.
func (b *layerBase) checkRebuild(in []Spec) (first bool, err error) {
	if b.built == nil {
		b.built = append([]Spec(nil), in...)
		return true, nil
	}
	if len(in) != len(b.built) {
		return false, fmt.Errorf("layer %s was built for %d inputs, now applied to %d", b.name, len(b.built), len(in))
	}
	for i := range in {
		if in[i].DType != b.built[i].DType || !in[i].Shape.Equal(b.built[i].Shape) {
			return false, fmt.Errorf("layer %s was built for input %v, now applied to %v (a shared layer needs inputs of one shape)", b.name, b.built[i], in[i])
		}
	}
	return false, nil
}

// wantInputs checks the number of inputs a layer receives.
func wantInputs(name string, in []Spec, lo, hi int) error {
	if len(in) < lo || len(in) > hi {
		if lo == hi {
			return fmt.Errorf("layer %s takes %d input(s), got %d", name, lo, len(in))
		}
		return fmt.Errorf("layer %s takes %d to %d inputs, got %d", name, lo, hi, len(in))
	}
	return nil
}

// wantRank checks an input's rank (batch excluded) against the allowed ranks.
func wantRank(name string, s Spec, what string, ranks ...int) error {
	for _, r := range ranks {
		if s.Shape.Rank() == r {
			return nil
		}
	}
	return fmt.Errorf("layer %s needs %s, got input %v (batch axis excluded)", name, what, s)
}

// wantFeatures checks that a layer gets one float input with features on its last axis.
func wantFeatures(name string, in []Spec) error {
	if err := wantInputs(name, in, 1, 1); err != nil {
		return err
	}
	if err := wantFloat(name, in[0]); err != nil {
		return err
	}
	if in[0].Shape.Rank() == 0 {
		return fmt.Errorf("layer %s needs features on the last axis, got a scalar per sample", name)
	}
	return nil
}

// wantFloat checks that an input is floating point.
func wantFloat(name string, s Spec) error {
	if !s.DType.IsFloat() {
		return fmt.Errorf("layer %s needs a float input, got %v (int inputs go to an Embedding)", name, s)
	}
	return nil
}
