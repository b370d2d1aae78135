package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// compileSettings collects Compile's options.
type compileSettings struct {
	losses      []string
	lossMap     map[string]string
	lossWeights []float64
	weightMap   map[string]float64
	metrics     []string
	metricMap   map[string][]string
	device      string
	seed        uint64
	precision   tensor.MatMulAttr // the matrix products' precision (MixedPrecision)
	parallel    []string          // DataParallel's devices
}

// compileOption builds a single-call Compile option.
func compileOption(name string, set func(*compileSettings) error) CompileOption {
	return compileOpt{name, set}
}

// Loss sets the loss of every output (one name) or of each output in order (one name
// per output): categorical_crossentropy, sparse_categorical_crossentropy,
// binary_crossentropy, mse, mae or huber (Keras's long names work too).
func Loss(names ...string) CompileOption {
	return compileOption("Loss", func(s *compileSettings) error {
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
func LossByName(losses map[string]string) CompileOption {
	return compileOption("LossByName", func(s *compileSettings) error {
		for _, n := range sortedKeys(losses) {
			if _, err := lossByName(losses[n]); err != nil {
				return fmt.Errorf("output %q: %w", n, err)
			}
		}
		s.lossMap = losses
		return nil
	})
}

// LossWeights weights each output's loss in the total, in output order.
func LossWeights(w ...float64) CompileOption {
	return compileOption("LossWeights", func(s *compileSettings) error { s.lossWeights = w; return nil })
}

// LossWeightsByName weights outputs' losses by the name of the layer producing them.
func LossWeightsByName(w map[string]float64) CompileOption {
	return compileOption("LossWeightsByName", func(s *compileSettings) error { s.weightMap = w; return nil })
}

// Metrics adds metrics reported for every output: accuracy, mae, mse.
func Metrics(names ...string) CompileOption {
	return compileOption("Metrics", func(s *compileSettings) error {
		for _, n := range names {
			if err := knownMetric(n); err != nil {
				return err
			}
		}
		s.metrics = names
		return nil
	})
}

// MetricsByName sets the metrics of outputs by the name of the layer producing them,
// replacing Metrics for those outputs.
func MetricsByName(m map[string][]string) CompileOption {
	return compileOption("MetricsByName", func(s *compileSettings) error {
		for _, out := range sortedKeys(m) {
			for _, n := range m[out] {
				if err := knownMetric(n); err != nil {
					return fmt.Errorf("output %q: %w", out, err)
				}
			}
		}
		s.metricMap = m
		return nil
	})
}

// MixedPrecision sets the precision policy of Compile. "mixed_bfloat16" (or "bf16") lets
// the model's matrix products (Dense, LSTM, GRU and the attention projections) round
// their operands to bfloat16: on a GPU with cooperative matrices they accumulate in f32
// several times faster than f32 products, while weights, gradients, optimizer state,
// the other layers and the losses stay f32. Devices without fast bfloat16 products
// (the CPU, GPUs without cooperative matrices) compute them in f32. "tf32" lets the
// products multiply in TensorFloat-32 (f32's range, 10 bits of mantissa, f32
// accumulation), as PyTorch's allow_tf32 does, where the device has units for it
// (NVIDIA GPUs through cuBLASLt); elsewhere they stay f32. "float32" (or "f32", the
// default) turns both off. Keras's "mixed_float16" is not offered: float16's narrow
// range needs loss scaling, which nn does not do.
func MixedPrecision(policy string) CompileOption {
	return compileOption("MixedPrecision", func(s *compileSettings) error {
		switch policy {
		case "mixed_bfloat16", "bf16":
			s.precision = tensor.MatMulAttr{Precision: tensor.BF16}
		case "tf32", "float32_tf32":
			s.precision = tensor.MatMulAttr{TF32: true}
		case "float32", "f32":
			s.precision = tensor.MatMulAttr{}
		case "mixed_float16", "f16":
			return fmt.Errorf("precision policy %q: float16 products need loss scaling, which nn does not do; use \"mixed_bfloat16\"", policy)
		default:
			return fmt.Errorf("precision policy %q: want \"mixed_bfloat16\", \"tf32\" or \"float32\"", policy)
		}
		return nil
	})
}

// precisionPolicy is the MixedPrecision policy that sets at ("" for f32).
func precisionPolicy(at tensor.MatMulAttr) string {
	switch {
	case at.TF32:
		return "tf32"
	case at.Precision != tensor.F32:
		return at.Precision.String()
	}
	return ""
}

// optimizerSettings collects the options of SGD, Adam and AdamW.
type optimizerSettings struct {
	momentum    float64
	nesterov    bool
	weightDecay float64
}

// Nesterov turns on Nesterov momentum for SGD.
func Nesterov() OptimizerOption {
	return optimizerOpt{"Nesterov", func(s *optimizerSettings) error { s.nesterov = true; return nil }}
}

// WeightDecay sets an optimizer's weight decay.
func WeightDecay(w float64) OptimizerOption {
	return optimizerOpt{"WeightDecay", func(s *optimizerSettings) error {
		if w < 0 {
			return fmt.Errorf("weight decay %v is negative", w)
		}
		s.weightDecay = w
		return nil
	}}
}
