package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// recallTask is a memory task: sequences of T random values labelled 1 when the first
// two have the same sign. No single step's input decides it, and the sign agreement is
// not linear in the inputs: the block must carry the first value to the second step
// through its state and combine the two there.
func recallTask(n, t int, seed uint64) (*tensor.Tensor, *tensor.Tensor) {
	r := rand.New(rand.NewPCG(seed, seed))
	x := tensor.New(tensor.F32, n, t, 1)
	y := tensor.New(tensor.I64, n)
	for i := range n {
		for j := range t {
			x.Float32s()[i*t+j] = float32(r.NormFloat64())
		}
		if x.Float32s()[i*t]*x.Float32s()[i*t+1] > 0 {
			y.Int64s()[i] = 1
		}
	}
	return x, y
}

// TestSSMBlocksTrain trains a one-block model of each kind on the recall task, checks
// that it learns it, and that a saved and loaded copy predicts identically.
func TestSSMBlocksTrain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block func() Layer
	}{
		{"mamba", func() Layer { return MambaBlock(4, 4, 2) }},
		{"rwkv6", func() Layer { return RWKVBlock(6, Heads(2), FeedForward(16)) }},
		{"rwkv7", func() Layer { return RWKVBlock(7, Heads(2), FeedForward(16)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			SetSeed(3)
			x, y := recallTask(512, 8, 1)
			m := Sequential(Dense(8, InputShape(8, 1)), tc.block(), Flatten(), Dense(16, Activation("relu")), Dense(2, Activation("softmax")))
			compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"), Metrics("accuracy"))
			if _, err := m.Fit(x, y, Epochs(12), BatchSize(32), Verbose(0)); err != nil {
				t.Fatal(err)
			}
			xt, yt := recallTask(256, 8, 2)
			res, err := m.Evaluate(xt, yt)
			if err != nil {
				t.Fatal(err)
			}
			if acc := res["accuracy"]; acc < 0.9 {
				t.Errorf("accuracy %.3f on the recall task after training, want at least 0.9", acc)
			}
			samePredictions(t, m, reloaded(t, m), xt)
		})
	}
}
