package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// Epochs sets the number of passes over the data (default 1).
func Epochs(n int) Option {
	return opt("Epochs", func(s *settings) error { s.epochs = n; return positive("epochs", n) })
}

// BatchSize sets the number of samples per step (default 32). The last batch of an
// epoch may be smaller; it gets a graph of its own, compiled once.
func BatchSize(n int) Option {
	return opt("BatchSize", func(s *settings) error { s.batchSize = n; return positive("batch size", n) })
}

// Shuffle turns shuffling of the training samples before each epoch on (default) or off.
func Shuffle(on bool) Option {
	return opt("Shuffle", func(s *settings) error { s.shuffle = on; return nil })
}

// ValidationSplit holds out the last fraction of the training samples (before
// shuffling, as Keras) and reports val_ metrics on them after each epoch.
func ValidationSplit(f float64) Option {
	return opt("ValidationSplit", func(s *settings) error {
		if f < 0 || f >= 1 {
			return fmt.Errorf("fraction %v outside [0, 1)", f)
		}
		s.validationSplit = f
		return nil
	})
}

// ValidationData evaluates on x and y after each epoch; each is a *tensor.Tensor or a
// []*tensor.Tensor (one per model input or output).
func ValidationData(x, y any) Option {
	return opt("ValidationData", func(s *settings) error {
		var err error
		if s.validationX, err = toTensors(x); err != nil {
			return err
		}
		s.validationY, err = toTensors(y)
		return err
	})
}

// ClassWeights scales each sample's loss by the weight of its class (class id to
// weight; missing classes weigh 1), from the labels of the first output.
func ClassWeights(w map[int]float64) Option {
	return opt("ClassWeights", func(s *settings) error { s.classWeights = w; return nil })
}

// SampleWeights scales each sample's loss, one tensor per output: shape (batch) for a
// per-sample weight, or the output's full shape for a per-element mask (mse, mae, huber).
func SampleWeights(w ...*tensor.Tensor) Option {
	return opt("SampleWeights", func(s *settings) error { s.sampleWeights = w; return nil })
}

// Callbacks adds callbacks run during Fit.
func Callbacks(cb ...Callback) Option {
	return opt("Callbacks", func(s *settings) error {
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
func InitialEpoch(n int) Option {
	return opt("InitialEpoch", func(s *settings) error {
		if n < 0 {
			return fmt.Errorf("initial epoch %d is negative", n)
		}
		s.initialEpoch = n
		return nil
	})
}

// StepsPerEpoch sets how many batches make an epoch when fitting from a generator
// (required for generators that never end).
func StepsPerEpoch(n int) Option {
	return opt("StepsPerEpoch", func(s *settings) error { s.stepsPerEpoch = n; return positive("steps per epoch", n) })
}

// Verbose sets how much Fit shows: 0 nothing, 1 a live progress bar per epoch (default),
// 2 one line per epoch.
func Verbose(level int) Option {
	return opt("Verbose", func(s *settings) error {
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
