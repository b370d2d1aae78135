package nn

import (
	"reflect"
	"slices"
	"testing"
)

// TestOptionTypes checks which calls each option can be passed to. Go's compiler (and
// the notebook's interpreter) accepts an option exactly where its type implements the
// call's interface, so this table is the compile-time check of "Epochs is not a layer
// option": passing an option anywhere else does not build.
func TestOptionTypes(t *testing.T) {
	kinds := map[string]reflect.Type{
		"layer":     reflect.TypeFor[LayerOption](),
		"input":     reflect.TypeFor[InputOption](),
		"model":     reflect.TypeFor[ModelOption](),
		"optimizer": reflect.TypeFor[OptimizerOption](),
		"compile":   reflect.TypeFor[CompileOption](),
		"fit":       reflect.TypeFor[FitOption](),
		"evaluate":  reflect.TypeFor[EvaluateOption](),
		"predict":   reflect.TypeFor[PredictOption](),
		"callback":  reflect.TypeFor[CallbackOption](),
		"load":      reflect.TypeFor[LoadOption](),
		"trainer":   reflect.TypeFor[TrainerOption](),
	}
	cases := []struct {
		option any
		takes  []string
	}{
		{Activation("relu"), []string{"layer"}},
		{InputShape(4), []string{"layer"}},
		{Name("x"), []string{"input", "layer", "model"}},
		{Momentum(0.9), []string{"layer", "optimizer"}},
		{DType("int64"), []string{"input"}},
		{WeightDecay(0.1), []string{"optimizer"}},
		{Loss("mse"), []string{"compile"}},
		{Device("cpu"), []string{"compile", "load"}},
		{Seed(1), []string{"compile", "fit"}},
		{Epochs(2), []string{"fit"}},
		{CheckFinite(false), []string{"fit"}},
		{BatchSize(8), []string{"evaluate", "fit", "predict"}},
		{SampleWeights(), []string{"evaluate", "fit"}},
		{ClassWeights(nil), []string{"evaluate", "fit"}},
		{Patience(2), []string{"callback"}},
		{Cooldown(1), []string{"callback"}},
		{LambdaFunc("f", nil), []string{"load"}},
		{GradientAccumulation(2), []string{"trainer"}},
	}
	for _, tc := range cases {
		var got []string
		for kind, iface := range kinds {
			if reflect.TypeOf(tc.option).Implements(iface) {
				got = append(got, kind)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.takes) {
			t.Errorf("%T is taken by %v, want %v", tc.option, got, tc.takes)
		}
	}
}
