package nn

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// The total loss is the sum of each head's loss times its weight, whether the weights
// are given in output order (LossWeights) or by name (LossWeightsByName).
func TestLossWeightsInOrderAndByName(t *testing.T) {
	x, y := blobs(64, 4, 3, 3)
	target := tensor.New(tensor.F32, 64, 1)
	for i := range target.Float32s() {
		target.Float32s()[i] = x.Float32s()[i*4] * 0.3
	}
	for _, c := range []struct {
		name   string
		weight CompileOption
	}{
		{"in_order", LossWeights(2, 0.25)},
		{"by_name", LossWeightsByName(map[string]float64{"cls": 2, "reg": 0.25})},
	} {
		t.Run(c.name, func(t *testing.T) {
			SetSeed(9)
			in := Input([]int{4})
			h := Dense(8, Activation("tanh")).Apply(in)
			m, err := Model([]*Node{in}, []*Node{Dense(3, Activation("softmax"), Name("cls")).Apply(h), Dense(1, Name("reg")).Apply(h)})
			if err != nil {
				t.Fatal(err)
			}
			compileOrFatal(t, m, Loss("sparse_categorical_crossentropy", "mse"), c.weight)
			logs, err := m.Evaluate(x, []*tensor.Tensor{y, target})
			if err != nil {
				t.Fatal(err)
			}
			want := 2*logs["cls_loss"] + 0.25*logs["reg_loss"]
			if math.Abs(logs["loss"]-want) > 1e-5*max(1, want) {
				t.Errorf("loss %v, want 2·cls_loss + 0.25·reg_loss = %v (%v)", logs["loss"], want, logs)
			}
		})
	}
}
