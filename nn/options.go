package nn

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// Options are functional and typed by the call that takes them: a layer constructor
// takes LayerOptions, Compile CompileOptions, Fit FitOptions, and so on, so an option
// passed where it does not belong (Epochs to Dense) is a compile error of the cell or
// program that writes it, not a surprise at Fit. An option several calls accept (Name,
// Seed, BatchSize, ...) has a type of its own that implements each of their interfaces.
// Within one kind of call the check is at run time but immediate: a layer constructor
// given an option of another layer (Heads to Dense) keeps the error, and Compile, Model
// or the first Fit reports it.

// setting is one option's effect on the settings S of one kind of call: its name, for
// messages, and the setter, which checks the value.
type setting[S any] struct {
	name string
	set  func(*S) error
}

// LayerOption configures a layer constructor (Dense, Conv2D, ...). Every layer takes
// Name and InputShape, plus the options its doc lists; another layer's option is an
// error that Compile, Model or Fit reports.
type LayerOption interface{ layerSetting() setting[layerSettings] }

// InputOption configures Input: Name, DType.
type InputOption interface{ inputSetting() setting[inputSettings] }

// ModelOption configures Model: Name.
type ModelOption interface{ modelSetting() setting[modelSettings] }

// OptimizerOption configures SGD, Adam and AdamW: Momentum, Nesterov, WeightDecay.
type OptimizerOption interface {
	optimizerSetting() setting[optimizerSettings]
}

// CompileOption configures Compile: Loss, LossByName, LossWeights, LossWeightsByName,
// Metrics, MetricsByName, Device, Seed, MixedPrecision.
type CompileOption interface {
	compileSetting() setting[compileSettings]
}

// FitOption configures Fit and FitGenerator: Epochs, BatchSize, Shuffle,
// ValidationSplit, ValidationData, ClassWeights, SampleWeights, Callbacks, InitialEpoch,
// StepsPerEpoch, Verbose, Seed, CheckFinite.
type FitOption interface{ fitSetting() setting[fitSettings] }

// EvaluateOption configures Evaluate: BatchSize, SampleWeights, ClassWeights.
type EvaluateOption interface {
	evaluateSetting() setting[evaluateSettings]
}

// PredictOption configures Predict and PredictOutputs: BatchSize.
type PredictOption interface {
	predictSetting() setting[predictSettings]
}

// CallbackOption configures EarlyStopping, ReduceLROnPlateau and ModelCheckpoint:
// Monitor, Patience, MinDelta, RestoreBest, Factor, MinLR, Cooldown, SaveBestOnly.
type CallbackOption interface {
	callbackSetting() setting[callbackSettings]
}

// LoadOption configures Load: CustomKind, LambdaFunc, Device.
type LoadOption interface{ loadSetting() setting[loadSettings] }

// TrainerOption configures NewTrainer: GradientAccumulation.
type TrainerOption interface {
	trainerSetting() setting[trainerSettings]
}

// One named type per kind of call gives a single-call option its interface.
type (
	layerOpt     setting[layerSettings]
	inputOpt     setting[inputSettings]
	modelOpt     setting[modelSettings]
	optimizerOpt setting[optimizerSettings]
	compileOpt   setting[compileSettings]
	fitOpt       setting[fitSettings]
	evaluateOpt  setting[evaluateSettings]
	predictOpt   setting[predictSettings]
	callbackOpt  setting[callbackSettings]
	loadOpt      setting[loadSettings]
	trainerOpt   setting[trainerSettings]
)

func (o layerOpt) layerSetting() setting[layerSettings] { return setting[layerSettings](o) }
func (o inputOpt) inputSetting() setting[inputSettings] { return setting[inputSettings](o) }
func (o modelOpt) modelSetting() setting[modelSettings] { return setting[modelSettings](o) }
func (o optimizerOpt) optimizerSetting() setting[optimizerSettings] {
	return setting[optimizerSettings](o)
}
func (o compileOpt) compileSetting() setting[compileSettings] { return setting[compileSettings](o) }
func (o fitOpt) fitSetting() setting[fitSettings]             { return setting[fitSettings](o) }
func (o evaluateOpt) evaluateSetting() setting[evaluateSettings] {
	return setting[evaluateSettings](o)
}
func (o predictOpt) predictSetting() setting[predictSettings] { return setting[predictSettings](o) }
func (o callbackOpt) callbackSetting() setting[callbackSettings] {
	return setting[callbackSettings](o)
}
func (o loadOpt) loadSetting() setting[loadSettings]          { return setting[loadSettings](o) }
func (o trainerOpt) trainerSetting() setting[trainerSettings] { return setting[trainerSettings](o) }

// applyOptions applies opts to s, after checking that each is one of allowed (option
// names; nil allows every option of the call's type). get is the interface's method.
func applyOptions[O any, S any](call string, s *S, allowed []string, opts []O, get func(O) setting[S]) error {
	for i, o := range opts {
		if any(o) == nil {
			return fmt.Errorf("nn: %s: option %d is nil", call, i)
		}
		st := get(o)
		if st.set == nil {
			return fmt.Errorf("nn: %s: option %d is a zero value (build options with the nn option functions)", call, i)
		}
		if allowed != nil && !slices.Contains(allowed, st.name) {
			return fmt.Errorf("nn: %s does not take option %s (it takes %s)", call, st.name, strings.Join(allowed, ", "))
		}
		if err := st.set(s); err != nil {
			return fmt.Errorf("nn: %s: option %s: %w", call, st.name, err)
		}
	}
	return nil
}

func positive(what string, v int) error {
	if v <= 0 {
		return fmt.Errorf("%s must be positive, got %d", what, v)
	}
	return nil
}

// NameOption is Name's option, taken by every layer constructor, Input and Model.
type NameOption struct {
	layerOpt
	inputOpt
	modelOpt
}

// Name names a layer, an input or a model (shown in Summary; a layer's name prefixes
// its variables' names and names its output in LossByName and friends).
func Name(n string) NameOption {
	return NameOption{
		layerOpt{"Name", func(s *layerSettings) error { s.name = n; return nil }},
		inputOpt{"Name", func(s *inputSettings) error { s.name = n; return nil }},
		modelOpt{"Name", func(s *modelSettings) error { s.name = n; return nil }},
	}
}

// MomentumOption is Momentum's option, taken by BatchNorm and SGD.
type MomentumOption struct {
	layerOpt
	optimizerOpt
}

// Momentum sets BatchNorm's running-average momentum (default 0.99, as Keras) or SGD's
// momentum (default 0).
func Momentum(m float64) MomentumOption {
	check := func() error {
		if m < 0 || m >= 1 {
			return fmt.Errorf("momentum %v outside [0, 1)", m)
		}
		return nil
	}
	return MomentumOption{
		layerOpt{"Momentum", func(s *layerSettings) error { s.momentum = m; return check() }},
		optimizerOpt{"Momentum", func(s *optimizerSettings) error { s.momentum = m; return check() }},
	}
}

// SeedOption is Seed's option, taken by Compile and Fit.
type SeedOption struct {
	compileOpt
	fitOpt
}

// Seed makes runs reproducible: in Compile it seeds the dropout masks and the shuffling
// of every Fit, in Fit the shuffling of that Fit only. Weight initialisation has its own
// seed, SetSeed.
func Seed(seed uint64) SeedOption {
	return SeedOption{
		compileOpt{"Seed", func(s *compileSettings) error { s.seed = seed; return nil }},
		fitOpt{"Seed", func(s *fitSettings) error { s.seed, s.seedSet = seed, true; return nil }},
	}
}

// DeviceOption is Device's option, taken by Compile and Load.
type DeviceOption struct {
	compileOpt
	loadOpt
}

// Device picks where the model runs: "auto" (the GPU when there is one), "cpu" or
// "gpu". Compile's default is auto; Load's is the device the saved model ran on.
func Device(name string) DeviceOption {
	check := func() error {
		if name != "auto" && name != "cpu" && name != "gpu" {
			return fmt.Errorf("device %q: want auto, cpu or gpu", name)
		}
		return nil
	}
	return DeviceOption{
		compileOpt{"Device", func(s *compileSettings) error { s.device = name; return check() }},
		loadOpt{"Device", func(s *loadSettings) error { s.device = name; return check() }},
	}
}

// BatchSizeOption is BatchSize's option, taken by Fit, Evaluate and Predict.
type BatchSizeOption struct {
	fitOpt
	evaluateOpt
	predictOpt
}

// BatchSize sets the number of samples per step (default 32). The last batch of an
// epoch may be smaller; it gets a graph of its own, compiled once.
func BatchSize(n int) BatchSizeOption {
	return BatchSizeOption{
		fitOpt{"BatchSize", func(s *fitSettings) error { s.batchSize = n; return positive("batch size", n) }},
		evaluateOpt{"BatchSize", func(s *evaluateSettings) error { s.batchSize = n; return positive("batch size", n) }},
		predictOpt{"BatchSize", func(s *predictSettings) error { s.batchSize = n; return positive("batch size", n) }},
	}
}

// WeightingOption is the option of ClassWeights and SampleWeights, taken by Fit and
// Evaluate.
type WeightingOption struct {
	fitOpt
	evaluateOpt
}

// weighting is how Fit and Evaluate weight the loss of each sample.
type weighting struct {
	classWeights  map[int]float64
	sampleWeights []*tensor.Tensor
}

// weightingOption builds a WeightingOption from its effect on a weighting.
func weightingOption(name string, set func(*weighting) error) WeightingOption {
	return WeightingOption{
		fitOpt{name, func(s *fitSettings) error { return set(&s.weighting) }},
		evaluateOpt{name, func(s *evaluateSettings) error { return set(&s.weighting) }},
	}
}

// ClassWeights scales each sample's loss by the weight of its class (class id to
// weight; missing classes weigh 1), from the labels of the first output.
func ClassWeights(w map[int]float64) WeightingOption {
	return weightingOption("ClassWeights", func(s *weighting) error {
		for c, v := range w {
			if v < 0 {
				return fmt.Errorf("class %d has negative weight %v", c, v)
			}
		}
		s.classWeights = w
		return nil
	})
}

// SampleWeights scales each sample's loss, one tensor per output: shape (batch) for a
// per-sample weight, or the output's full shape for a per-element mask (mse, mae, huber).
func SampleWeights(w ...*tensor.Tensor) WeightingOption {
	return weightingOption("SampleWeights", func(s *weighting) error { s.sampleWeights = w; return nil })
}
