package nn

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// Option configures a layer, an input, Compile, Fit, Evaluate or Predict. Every option
// names the calls it applies to; passing it elsewhere is an error that says so rather
// than being ignored.
type Option struct {
	name string
	set  func(*settings) error
}

// settings collects every option value; each call reads the fields it understands.
type settings struct {
	// Layers and inputs.
	activation  string
	name        string
	padding     string
	strides     []int
	noBias      bool
	inputShape  tensor.Shape
	dtype       tensor.DType
	dtypeSet    bool
	returnSeq   bool
	causal      bool
	rotary      bool
	heads       int
	dropout     float64
	norm        string
	pooling     string
	axis        int
	eps         float64
	momentum    float64
	ffDim       int
	maxLen      int
	nesterov    bool
	weightDecay float64

	// Channels-last data, custom layers and their Load constructors.
	channelsLast bool
	config       json.RawMessage
	customKinds  map[string]func(config []byte) (CustomLayer, error)
	lambdas      map[string]func(x *tensor.Node) *tensor.Node

	// Compile.
	losses      []string
	lossMap     map[string]string
	weightMap   map[string]float64
	lossWeights []float64
	metrics     []string
	metricMap   map[string][]string
	device      string
	seed        uint64
	precision   tensor.DType // the matrix products' operand type (MixedPrecision)

	// Fit, Evaluate, Predict.
	epochs          int
	batchSize       int
	shuffle         bool
	validationSplit float64
	validationX     []*tensor.Tensor
	validationY     []*tensor.Tensor
	classWeights    map[int]float64
	sampleWeights   []*tensor.Tensor
	callbacks       []Callback
	initialEpoch    int
	stepsPerEpoch   int
	verbose         int
	accum           int

	// Callbacks.
	monitor      string
	patience     int
	minDelta     float64
	restoreBest  bool
	factor       float64
	minLR        float64
	saveBestOnly bool
}

func defaultSettings() settings {
	return settings{shuffle: true, batchSize: 32, epochs: 1, verbose: 1, eps: 1e-5, momentum: 0.99}
}

// applyOptions applies opts after checking each is one of allowed (option names).
func applyOptions(call string, s *settings, allowed []string, opts []Option) error {
	for _, o := range opts {
		if o.set == nil {
			return fmt.Errorf("nn: %s: zero Option (build options with the nn option functions)", call)
		}
		ok := false
		for _, a := range allowed {
			if a == o.name {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("nn: %s does not take option %s (it takes %s)", call, o.name, strings.Join(allowed, ", "))
		}
		if err := o.set(s); err != nil {
			return fmt.Errorf("nn: %s: option %s: %w", call, o.name, err)
		}
	}
	return nil
}

func opt(name string, set func(*settings) error) Option { return Option{name: name, set: set} }

func positive(what string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%s must be positive, got %d", what, v)
	}
	return nil
}

// Activation sets a layer's activation: relu, sigmoid, tanh, softmax, silu, gelu,
// leaky_relu, elu or linear.
func Activation(name string) Option {
	return opt("Activation", func(s *settings) error {
		if _, err := activationByName(name); err != nil {
			return err
		}
		s.activation = name
		return nil
	})
}

// Name names a layer or an input (shown in Summary and used for per-output losses).
func Name(n string) Option { return opt("Name", func(s *settings) error { s.name = n; return nil }) }

// Padding sets a convolution's or pooling's padding: "valid" (none) or "same".
func Padding(p string) Option {
	return opt("Padding", func(s *settings) error {
		if p != "valid" && p != "same" {
			return fmt.Errorf("padding %q: want valid or same", p)
		}
		s.padding = p
		return nil
	})
}

// Strides sets a convolution's or pooling's stride: one value for every spatial axis or
// one per axis.
func Strides(st ...int) Option {
	return opt("Strides", func(s *settings) error {
		for _, v := range st {
			if err := positive("stride", v); err != nil {
				return err
			}
		}
		s.strides = st
		return nil
	})
}

// NoBias leaves out a layer's bias.
func NoBias() Option { return opt("NoBias", func(s *settings) error { s.noBias = true; return nil }) }

// InputShape gives the first layer of a Sequential model its input shape (batch axis
// excluded), so the model is built before it sees data.
func InputShape(shape ...int) Option {
	return opt("InputShape", func(s *settings) error {
		sh := tensor.Shape(shape).Clone()
		if err := sh.Validate(); err != nil {
			return err
		}
		s.inputShape = sh
		return nil
	})
}

// DType sets an input's element type ("float32", "int64", ...); the default is float32.
func DType(name string) Option {
	return opt("DType", func(s *settings) error {
		dt, err := tensor.ParseDType(name)
		if err != nil {
			return err
		}
		s.dtype, s.dtypeSet = dt, true
		return nil
	})
}

// ReturnSequences makes a recurrent layer return its output at every step (batch, time,
// units) instead of the last one.
func ReturnSequences() Option {
	return opt("ReturnSequences", func(s *settings) error { s.returnSeq = true; return nil })
}

// Causal masks attention so position t sees positions <= t only.
func Causal() Option { return opt("Causal", func(s *settings) error { s.causal = true; return nil }) }

// Rotary applies rotary position embeddings to attention queries and keys.
func Rotary() Option { return opt("Rotary", func(s *settings) error { s.rotary = true; return nil }) }

// Heads sets the number of attention heads.
func Heads(n int) Option {
	return opt("Heads", func(s *settings) error { s.heads = n; return positive("heads", n) })
}

// DropoutRate sets the dropout applied inside attention and transformer blocks.
func DropoutRate(r float64) Option {
	return opt("DropoutRate", func(s *settings) error {
		if r < 0 || r >= 1 {
			return fmt.Errorf("rate %v outside [0, 1)", r)
		}
		s.dropout = r
		return nil
	})
}

// Norm selects a transformer block's normalisation: "layer" (default) or "rms".
func Norm(kind string) Option {
	return opt("Norm", func(s *settings) error {
		if kind != "layer" && kind != "rms" {
			return fmt.Errorf("norm %q: want layer or rms", kind)
		}
		s.norm = kind
		return nil
	})
}

// Pooling selects SequencePooling's mode: "mean" (default) or "first".
func Pooling(mode string) Option {
	return opt("Pooling", func(s *settings) error {
		if mode != "mean" && mode != "first" {
			return fmt.Errorf("pooling %q: want mean or first", mode)
		}
		s.pooling = mode
		return nil
	})
}

// Axis sets the axis of Concatenate or BatchNorm (negative counts from the end; the batch
// axis is not counted).
func Axis(a int) Option {
	return opt("Axis", func(s *settings) error { s.axis = a; return nil })
}

// Epsilon sets a normalisation layer's epsilon.
func Epsilon(e float64) Option {
	return opt("Epsilon", func(s *settings) error { s.eps = e; return nil })
}

// Momentum sets BatchNorm's running-average momentum (default 0.99, as Keras).
func Momentum(m float64) Option {
	return opt("Momentum", func(s *settings) error {
		if m < 0 || m >= 1 {
			return fmt.Errorf("momentum %v outside [0, 1)", m)
		}
		s.momentum = m
		return nil
	})
}

// FeedForward sets a transformer block's hidden width (default 4 × model width).
func FeedForward(units int) Option {
	return opt("FeedForward", func(s *settings) error { s.ffDim = units; return positive("feed-forward width", units) })
}

// MaxLen sets PositionalEmbedding's maximum sequence length (default: the input length).
func MaxLen(n int) Option {
	return opt("MaxLen", func(s *settings) error { s.maxLen = n; return positive("max length", n) })
}

// Loss sets the loss of every output (one name) or of each output in order (one name
// per output): categorical_crossentropy, sparse_categorical_crossentropy,
// binary_crossentropy, mse, mae or huber (Keras's long names work too).
func Loss(names ...string) Option {
	return opt("Loss", func(s *settings) error {
		for _, n := range names {
			if _, err := lossByName(n); err != nil {
				return err
			}
		}
		s.losses = names
		return nil
	})
}

// LossByName sets the loss of outputs by the name of the layer producing them.
func LossByName(losses map[string]string) Option {
	return opt("LossByName", func(s *settings) error {
		for _, n := range losses {
			if _, err := lossByName(n); err != nil {
				return err
			}
		}
		s.lossMap = losses
		return nil
	})
}

// LossWeights weights each output's loss in the total, in output order.
func LossWeights(w ...float64) Option {
	return opt("LossWeights", func(s *settings) error { s.lossWeights = w; return nil })
}

// LossWeightsByName weights outputs' losses by the name of the layer producing them.
func LossWeightsByName(w map[string]float64) Option {
	return opt("LossWeightsByName", func(s *settings) error { s.weightMap = w; return nil })
}

// Metrics adds metrics reported for every output: accuracy, mae, mse.
func Metrics(names ...string) Option {
	return opt("Metrics", func(s *settings) error { s.metrics = names; return nil })
}

// MetricsByName sets the metrics of outputs by the name of the layer producing them,
// replacing Metrics for those outputs.
func MetricsByName(m map[string][]string) Option {
	return opt("MetricsByName", func(s *settings) error { s.metricMap = m; return nil })
}

// Device picks where the model runs: "auto" (default: the GPU when there is one),
// "cpu" or "gpu".
func Device(name string) Option {
	return opt("Device", func(s *settings) error {
		if name != "auto" && name != "cpu" && name != "gpu" {
			return fmt.Errorf("device %q: want auto, cpu or gpu", name)
		}
		s.device = name
		return nil
	})
}

// MixedPrecision sets the precision policy of Compile. "mixed_bfloat16" (or "bf16") lets
// the model's matrix products (Dense, LSTM, GRU and the attention projections) round
// their operands to bfloat16: on a GPU with cooperative matrices they accumulate in f32
// several times faster than f32 products, while weights, gradients, optimizer state,
// the other layers and the losses stay f32. Devices without fast bfloat16 products
// (the CPU, GPUs without cooperative matrices) compute them in f32. "float32" (or
// "f32", the default) turns it off. Keras's "mixed_float16" is not offered: float16's
// narrow range needs loss scaling, which nn does not do.
func MixedPrecision(policy string) Option {
	return opt("MixedPrecision", func(s *settings) error {
		switch policy {
		case "mixed_bfloat16", "bf16":
			s.precision = tensor.BF16
		case "float32", "f32":
			s.precision = tensor.F32
		case "mixed_float16", "f16":
			return fmt.Errorf("precision policy %q: float16 products need loss scaling, which nn does not do; use \"mixed_bfloat16\"", policy)
		default:
			return fmt.Errorf("precision policy %q: want \"mixed_bfloat16\" or \"float32\"", policy)
		}
		return nil
	})
}

// Seed seeds dropout masks (Compile) or shuffling (Fit), for reproducible runs.
func Seed(seed uint64) Option {
	return opt("Seed", func(s *settings) error { s.seed = seed; return nil })
}

// ChannelsLast makes Conv1D, Conv2D and the pooling layers take channels-last samples,
// as Keras does by default: (height, width, channels) images and (steps, channels)
// sequences, so a (28, 28, 1) input needs no transpose. Outputs are channels-last too.
// The weights have the same shapes as with channels-first data.
func ChannelsLast() Option {
	return opt("ChannelsLast", func(s *settings) error { s.channelsLast = true; return nil })
}

// Config stores a custom layer's configuration (anything encoding/json can encode) in
// saved models; Load hands the JSON back to the constructor given with CustomKind.
func Config(v any) Option {
	return opt("Config", func(s *settings) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		s.config = b
		return nil
	})
}

// CustomKind tells Load how to rebuild the custom layers of a kind (see Custom): build
// receives the JSON of the layer's Config option ("null" without one) and returns the
// CustomLayer; the saved weights are then written into the variables its Build
// declares.
func CustomKind(kind string, build func(config []byte) (CustomLayer, error)) Option {
	return opt("CustomKind", func(s *settings) error {
		if build == nil {
			return fmt.Errorf("the constructor of kind %q is nil", kind)
		}
		if s.customKinds == nil {
			s.customKinds = map[string]func([]byte) (CustomLayer, error){}
		}
		s.customKinds[kind] = build
		return nil
	})
}

// LambdaFunc gives Load the function of the Lambda layer of the given name (a function
// is not saved with the model).
func LambdaFunc(layer string, f func(x *tensor.Node) *tensor.Node) Option {
	return opt("LambdaFunc", func(s *settings) error {
		if f == nil {
			return fmt.Errorf("the function of layer %q is nil", layer)
		}
		if s.lambdas == nil {
			s.lambdas = map[string]func(*tensor.Node) *tensor.Node{}
		}
		s.lambdas[layer] = f
		return nil
	})
}
