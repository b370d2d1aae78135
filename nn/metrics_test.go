package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// testDevices are the devices the reference tests run on: the CPU, and the GPU backend
// where one opens (lavapipe in CI, the H200 there).
func testDevices(t *testing.T) []string {
	t.Helper()
	devices := []string{"cpu"}
	if rt, err := runtime.New(runtime.Device("gpu")); err == nil {
		rt.Close()
		devices = append(devices, "gpu")
	} else {
		t.Logf("GPU not tested: %v", err)
	}
	return devices
}

// TestMetricsMatchPredictions checks every metric nn offers, and the loss, against a
// float64 reference computed here from Predict's output and the labels: accuracy is
// argmax of the prediction against the class (or the 0.5 threshold for binary heads),
// mae and mse the mean absolute and squared differences. The models are untrained, so
// the predictions are wrong often enough that a metric counting the wrong thing shows.
// 100 samples in batches of 32 check that Evaluate weights its last, smaller batch.
func TestMetricsMatchPredictions(t *testing.T) {
	const n, dim = 100, 6
	r := rand.New(rand.NewPCG(5, 6))
	x := tensor.New(tensor.F32, n, dim)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(r.NormFloat64())
	}
	ids := tensor.New(tensor.I64, n)
	onehot := tensor.New(tensor.F32, n, 4)
	multi := tensor.New(tensor.F32, n, 3) // independent binary labels
	target := tensor.New(tensor.F32, n, 3)
	for i := 0; i < n; i++ {
		c := r.IntN(4)
		ids.Int64s()[i] = int64(c)
		onehot.Float32s()[i*4+c] = 1
		for j := 0; j < 3; j++ {
			multi.Float32s()[i*3+j] = float32(r.IntN(2))
			target.Float32s()[i*3+j] = float32(r.NormFloat64())
		}
	}
	argmax := func(row []float32) int {
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		return best
	}
	// Each case returns the float64 reference of every logged value from the
	// prediction p (n rows of k values) and the labels.
	cases := []struct {
		name    string
		act     string
		units   int
		loss    string
		metrics []string
		y       *tensor.Tensor
		ref     func(p [][]float64) map[string]float64
	}{
		{"sparse_categorical", "softmax", 4, "sparse_categorical_crossentropy", []string{"accuracy"}, ids, func(p [][]float64) map[string]float64 {
			var hits, loss float64
			for i, row := range p {
				c := int(ids.Int64s()[i])
				if argmax(f32row(row)) == c {
					hits++
				}
				loss -= math.Log(row[c])
			}
			return map[string]float64{"accuracy": hits / n, "loss": loss / n}
		}},
		{"categorical", "softmax", 4, "categorical_crossentropy", []string{"acc"}, onehot, func(p [][]float64) map[string]float64 {
			var hits, loss float64
			for i, row := range p {
				c := argmax(onehot.Float32s()[i*4 : i*4+4])
				if argmax(f32row(row)) == c {
					hits++
				}
				loss -= math.Log(row[c])
			}
			return map[string]float64{"accuracy": hits / n, "loss": loss / n}
		}},
		{"binary_sigmoid", "sigmoid", 3, "binary_crossentropy", []string{"accuracy"}, multi, binaryRef(multi, 0.5)},
		{"binary_linear", "linear", 3, "binary_crossentropy", []string{"accuracy"}, multi, binaryRef(multi, 0.5)},
		{"regression_mse", "linear", 3, "mse", []string{"mae", "mse"}, target, regressionRef(target, "mse")},
		{"regression_mae", "tanh", 3, "mean_absolute_error", []string{"mean_absolute_error", "mean_squared_error"}, target, regressionRef(target, "mae")},
	}
	for _, device := range testDevices(t) {
		for _, c := range cases {
			t.Run(device+"/"+c.name, func(t *testing.T) {
				SetSeed(3)
				m := Sequential(Dense(8, Activation("tanh"), InputShape(dim)), Dense(c.units, Activation(c.act)))
				if err := m.Compile(Adam(1e-3), Loss(c.loss), Metrics(c.metrics...), Device(device)); err != nil {
					t.Fatal(err)
				}
				defer m.Free()
				logs, err := m.Evaluate(x, c.y)
				if err != nil {
					t.Fatal(err)
				}
				pred, err := m.Predict(x)
				if err != nil {
					t.Fatal(err)
				}
				p := make([][]float64, n)
				for i := range p {
					p[i] = make([]float64, c.units)
					for j := range p[i] {
						p[i][j] = float64(pred.Float32s()[i*c.units+j])
					}
				}
				want := c.ref(p)
				if len(logs) != len(want) {
					t.Errorf("Evaluate logged %v, want the keys of %v", logs, want)
				}
				for k, w := range want {
					got, ok := logs[k]
					if !ok || !(math.Abs(got-w) <= 1e-4*max(1, math.Abs(w))) {
						t.Errorf("%s = %v (logged: %v), float64 reference from Predict %v", k, got, ok, w)
					}
				}
				if a, ok := want["accuracy"]; ok && (a == 0 || a == 1) {
					t.Errorf("accuracy %v: the case cannot tell right from wrong counting", a)
				}
			})
		}
	}
}

func f32row(row []float64) []float32 {
	out := make([]float32, len(row))
	for i, v := range row {
		out[i] = float32(v)
	}
	return out
}

// binaryRef is the reference of a binary cross-entropy head: a prediction counts as
// class 1 above threshold; the loss is computed from the clamped probabilities, as nn
// does for heads without a sigmoid (a
// sigmoid head's exact loss from its logits differs from it only for saturated
// outputs, which these untrained models do not have).
func binaryRef(y *tensor.Tensor, threshold float64) func(p [][]float64) map[string]float64 {
	return func(p [][]float64) map[string]float64 {
		var hits, loss, count float64
		for i, row := range p {
			for j, v := range row {
				label := float64(y.Float32s()[i*len(row)+j])
				if (v > threshold) == (label > 0.5) {
					hits++
				}
				q := min(max(v, float64(float32(1e-7))), float64(float32(1-1e-7))) // nn clamps in float32
				loss -= label*math.Log(q) + (1-label)*math.Log(1-q)
				count++
			}
		}
		return map[string]float64{"accuracy": hits / count, "loss": loss / count}
	}
}

// regressionRef is the reference of a regression head whose loss is mse or mae.
func regressionRef(y *tensor.Tensor, loss string) func(p [][]float64) map[string]float64 {
	return func(p [][]float64) map[string]float64 {
		var abs, sq, count float64
		for i, row := range p {
			for j, v := range row {
				d := v - float64(y.Float32s()[i*len(row)+j])
				abs += math.Abs(d)
				sq += d * d
				count++
			}
		}
		out := map[string]float64{"mae": abs / count, "mse": sq / count}
		out["loss"] = out[loss]
		return out
	}
}

// The argmax of the prediction equals the labels exactly as often as Evaluate's
// accuracy says, after training too (when most predictions are right).
func TestAccuracyAfterTraining(t *testing.T) {
	SetSeed(1)
	x, y := blobs(300, 4, 5, 2)
	m := Sequential(Dense(16, Activation("relu")), Dense(5, Activation("softmax")))
	if err := m.Compile(Adam(1e-2), Loss("sparse_categorical_crossentropy"), Metrics("accuracy"), Device("cpu")); err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	if _, err := m.Fit(x, y, Epochs(1), BatchSize(64), Verbose(0)); err != nil {
		t.Fatal(err)
	}
	logs, err := m.Evaluate(x, y, BatchSize(64))
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for i := 0; i < 300; i++ {
		row := p.Float32s()[i*5 : i*5+5]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if int64(best) == y.Int64s()[i] {
			hits++
		}
	}
	if want := float64(hits) / 300; math.Abs(logs["accuracy"]-want) > 1e-6 || want == 1 {
		t.Fatalf("accuracy %v, argmax of Predict gives %v (%s)", logs["accuracy"], want, fmt.Sprint(hits, "/300"))
	}
}
