package nn

import (
	"encoding/json"
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// layerSettings collects the options of layer constructors; each layer reads the fields
// of the options it takes.
type layerSettings struct {
	name         string
	inputShape   tensor.Shape
	activation   string
	padding      string
	strides      []int
	noBias       bool
	channelsLast bool
	returnSeq    bool
	causal       bool
	rotary       bool
	heads        int
	dropout      float64
	norm         string
	pooling      string
	axis         int
	eps          float64
	momentum     float64
	ffDim        int
	maxLen       int
	config       json.RawMessage
}

// inputSettings collects Input's options.
type inputSettings struct {
	name  string
	dtype tensor.DType
}

// modelSettings collects Model's options.
type modelSettings struct{ name string }

// layerOption builds a single-call layer option.
func layerOption(name string, set func(*layerSettings) error) LayerOption {
	return layerOpt{name, set}
}

// Activation sets a layer's activation: relu, sigmoid, tanh, softmax, silu, gelu,
// leaky_relu, elu or linear. An unknown name is an error of the layer's construction.
func Activation(name string) LayerOption {
	return layerOption("Activation", func(s *layerSettings) error {
		if _, err := activationByName(name); err != nil {
			return err
		}
		s.activation = name
		return nil
	})
}

// Padding sets a convolution's or pooling's padding: "valid" (none) or "same".
func Padding(p string) LayerOption {
	return layerOption("Padding", func(s *layerSettings) error {
		if p != "valid" && p != "same" {
			return fmt.Errorf("padding %q: want valid or same", p)
		}
		s.padding = p
		return nil
	})
}

// Strides sets a convolution's or pooling's stride: one value for every spatial axis or
// one per axis.
func Strides(st ...int) LayerOption {
	return layerOption("Strides", func(s *layerSettings) error {
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
func NoBias() LayerOption {
	return layerOption("NoBias", func(s *layerSettings) error { s.noBias = true; return nil })
}

// InputShape gives the first layer of a Sequential model its input shape (batch axis
// excluded), so the model is built, and checked, by Compile before it sees data.
func InputShape(shape ...int) LayerOption {
	return layerOption("InputShape", func(s *layerSettings) error {
		sh := tensor.Shape(shape).Clone()
		if err := sh.Validate(); err != nil {
			return err
		}
		s.inputShape = sh
		return nil
	})
}

// ReturnSequences makes a recurrent layer return its output at every step (batch, time,
// units) instead of the last one.
func ReturnSequences() LayerOption {
	return layerOption("ReturnSequences", func(s *layerSettings) error { s.returnSeq = true; return nil })
}

// Causal masks attention so position t sees positions <= t only.
func Causal() LayerOption {
	return layerOption("Causal", func(s *layerSettings) error { s.causal = true; return nil })
}

// Rotary applies rotary position embeddings to attention queries and keys.
func Rotary() LayerOption {
	return layerOption("Rotary", func(s *layerSettings) error { s.rotary = true; return nil })
}

// Heads sets the number of attention heads.
func Heads(n int) LayerOption {
	return layerOption("Heads", func(s *layerSettings) error { s.heads = n; return positive("heads", n) })
}

// DropoutRate sets the dropout applied inside attention and transformer blocks.
func DropoutRate(r float64) LayerOption {
	return layerOption("DropoutRate", func(s *layerSettings) error {
		if r < 0 || r >= 1 {
			return fmt.Errorf("rate %v outside [0, 1)", r)
		}
		s.dropout = r
		return nil
	})
}

// Norm selects a transformer block's normalisation: "layer" (default) or "rms".
func Norm(kind string) LayerOption {
	return layerOption("Norm", func(s *layerSettings) error {
		if kind != "layer" && kind != "rms" {
			return fmt.Errorf("norm %q: want layer or rms", kind)
		}
		s.norm = kind
		return nil
	})
}

// Pooling selects SequencePooling's mode: "mean" (default) or "first".
func Pooling(mode string) LayerOption {
	return layerOption("Pooling", func(s *layerSettings) error {
		if mode != "mean" && mode != "first" {
			return fmt.Errorf("pooling %q: want mean or first", mode)
		}
		s.pooling = mode
		return nil
	})
}

// Axis sets the axis of Concatenate or BatchNorm (negative counts from the end; the batch
// axis is not counted).
func Axis(a int) LayerOption {
	return layerOption("Axis", func(s *layerSettings) error { s.axis = a; return nil })
}

// Epsilon sets a normalisation layer's epsilon.
func Epsilon(e float64) LayerOption {
	return layerOption("Epsilon", func(s *layerSettings) error {
		if !(e > 0) {
			return fmt.Errorf("epsilon %v is not positive", e)
		}
		s.eps = e
		return nil
	})
}

// FeedForward sets a transformer block's hidden width (default 4 × model width).
func FeedForward(units int) LayerOption {
	return layerOption("FeedForward", func(s *layerSettings) error { s.ffDim = units; return positive("feed-forward width", units) })
}

// MaxLen sets PositionalEmbedding's maximum sequence length (default: the input length).
func MaxLen(n int) LayerOption {
	return layerOption("MaxLen", func(s *layerSettings) error { s.maxLen = n; return positive("max length", n) })
}

// ChannelsLast makes Conv1D, Conv2D and the pooling layers take channels-last samples,
// as Keras does by default: (height, width, channels) images and (steps, channels)
// sequences, so a (28, 28, 1) input needs no transpose. Outputs are channels-last too.
// The weights have the same shapes as with channels-first data.
func ChannelsLast() LayerOption {
	return layerOption("ChannelsLast", func(s *layerSettings) error { s.channelsLast = true; return nil })
}

// Config stores a custom layer's configuration (anything encoding/json can encode) in
// saved models; Load hands the JSON back to the constructor given with CustomKind.
func Config(v any) LayerOption {
	return layerOption("Config", func(s *layerSettings) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		s.config = b
		return nil
	})
}

// DType sets an input's element type ("float32", "int64", ...); the default is float32.
func DType(name string) InputOption {
	return inputOpt{"DType", func(s *inputSettings) error {
		dt, err := tensor.ParseDType(name)
		if err != nil {
			return err
		}
		s.dtype = dt
		return nil
	}}
}
