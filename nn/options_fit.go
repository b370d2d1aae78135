package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// fitSettings collects the options of Fit and FitGenerator.
type fitSettings struct {
	weighting
	epochs          int
	batchSize       int
	shuffle         bool
	validationSplit float64
	validationX     []*tensor.Tensor
	validationY     []*tensor.Tensor
	callbacks       []Callback
	initialEpoch    int
	stepsPerEpoch   int
	verbose         int
	seed            uint64
	seedSet         bool // Seed given to Fit, which overrides Compile's
	checkFinite     bool
}

func defaultFitSettings() fitSettings {
	return fitSettings{epochs: 1, batchSize: 32, shuffle: true, verbose: 1, checkFinite: true}
}

// evaluateSettings collects Evaluate's options.
type evaluateSettings struct {
	weighting
	batchSize int
}

// predictSettings collects the options of Predict and PredictOutputs.
type predictSettings struct{ batchSize int }

// fitOption builds a single-call Fit option.
func fitOption(name string, set func(*fitSettings) error) FitOption { return fitOpt{name, set} }

// Epochs sets the number of passes over the data (default 1).
func Epochs(n int) FitOption {
	return fitOption("Epochs", func(s *fitSettings) error { s.epochs = n; return positive("epochs", n) })
}

// Shuffle turns shuffling of the training samples before each epoch on (default) or off.
func Shuffle(on bool) FitOption {
	return fitOption("Shuffle", func(s *fitSettings) error { s.shuffle = on; return nil })
}

// ValidationSplit holds out the last fraction of the training samples (before
// shuffling, as Keras) and reports val_ metrics on them after each epoch.
func ValidationSplit(f float64) FitOption {
	return fitOption("ValidationSplit", func(s *fitSettings) error {
		if f < 0 || f >= 1 {
			return fmt.Errorf("fraction %v outside [0, 1)", f)
		}
		s.validationSplit = f
		return nil
	})
}

// ValidationData evaluates on x and y after each epoch; each is a *tensor.Tensor or a
// []*tensor.Tensor (one per model input or output).
func ValidationData(x, y any) FitOption {
	return fitOption("ValidationData", func(s *fitSettings) error {
		var err error
		if s.validationX, err = toTensors(x); err != nil {
			return err
		}
		s.validationY, err = toTensors(y)
		return err
	})
}

// Callbacks adds callbacks run during Fit.
func Callbacks(cb ...Callback) FitOption {
	return fitOption("Callbacks", func(s *fitSettings) error {
		for i, c := range cb {
			if c == nil {
				return fmt.Errorf("callback %d is nil", i)
			}
		}
		s.callbacks = append(s.callbacks, cb...)
		return nil
	})
}

// InitialEpoch starts counting epochs at n (to resume training): Fit runs epochs
// n .. Epochs-1.
func InitialEpoch(n int) FitOption {
	return fitOption("InitialEpoch", func(s *fitSettings) error {
		if n < 0 {
			return fmt.Errorf("initial epoch %d is negative", n)
		}
		s.initialEpoch = n
		return nil
	})
}

// StepsPerEpoch sets how many batches make an epoch when fitting from a generator
// (required for generators that never end).
func StepsPerEpoch(n int) FitOption {
	return fitOption("StepsPerEpoch", func(s *fitSettings) error { s.stepsPerEpoch = n; return positive("steps per epoch", n) })
}

// CheckFinite turns Fit's checks for NaN and infinity on (default) or off: before
// training, inputs and labels given as tensors must be finite (an error names the first
// bad value and its sample), and a loss that turns NaN or infinite stops training with
// an error naming the epoch and the batch, as Keras's TerminateOnNaN does. The data
// check reads the data once; turn it off for data known to be clean and too large to
// scan, or to watch a divergence to its end.
func CheckFinite(on bool) FitOption {
	return fitOption("CheckFinite", func(s *fitSettings) error { s.checkFinite = on; return nil })
}

// Verbose sets how much Fit shows: 0 nothing, 1 a live progress bar per epoch (default),
// 2 one line per epoch.
func Verbose(level int) FitOption {
	return fitOption("Verbose", func(s *fitSettings) error {
		if level < 0 || level > 2 {
			return fmt.Errorf("level %d: want 0, 1 or 2", level)
		}
		s.verbose = level
		return nil
	})
}

// toTensors accepts a *tensor.Tensor, a []*tensor.Tensor, or [][]float64 rows.
func toTensors(v any) ([]*tensor.Tensor, error) {
	switch t := v.(type) {
	case *tensor.Tensor:
		if t == nil {
			return nil, fmt.Errorf("nn: nil tensor")
		}
		return []*tensor.Tensor{t}, nil
	case []*tensor.Tensor:
		for i, x := range t {
			if x == nil {
				return nil, fmt.Errorf("nn: tensor %d is nil", i)
			}
		}
		return t, nil
	case [][]float64:
		x, err := tensor.FromRows(t)
		if err != nil {
			return nil, err
		}
		return []*tensor.Tensor{x}, nil
	}
	return nil, fmt.Errorf("nn: data must be a *tensor.Tensor, a []*tensor.Tensor or [][]float64, got %T", v)
}
