package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// blobs returns n samples of dim features in classes Gaussian clusters and their labels.
func blobs(n, dim, classes int, seed uint64) (*tensor.Tensor, *tensor.Tensor) {
	r := rand.New(rand.NewPCG(seed, 7))
	centers := make([][]float64, classes)
	for c := range centers {
		centers[c] = make([]float64, dim)
		for j := range centers[c] {
			centers[c][j] = r.NormFloat64() * 2
		}
	}
	x := tensor.New(tensor.F32, n, dim)
	y := tensor.New(tensor.I64, n)
	for i := 0; i < n; i++ {
		c := r.IntN(classes)
		y.Int64s()[i] = int64(c)
		for j := 0; j < dim; j++ {
			x.Float32s()[i*dim+j] = float32(centers[c][j] + r.NormFloat64()*0.5)
		}
	}
	return x, y
}

func TestFitMLPBlobs(t *testing.T) {
	SetSeed(1)
	x, y := blobs(512, 8, 3, 1)
	m := Sequential(Dense(16, Activation("relu")), Dropout(0.1), Dense(3, Activation("softmax")))
	if err := m.Compile(Adam(1e-2), Loss("sparse_categorical_crossentropy"), Metrics("accuracy"), Device("cpu")); err != nil {
		t.Fatal(err)
	}
	h, err := m.Fit(x, y, Epochs(5), BatchSize(50), Verbose(0), Seed(3))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Epochs) != 5 || h.Last("loss") >= h.Values["loss"][0] {
		t.Fatalf("loss did not fall:\n%v", h)
	}
	logs, err := m.Evaluate(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if logs["accuracy"] < 0.95 {
		t.Fatalf("accuracy %v on separable blobs", logs)
	}
	p, err := m.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Shape().Equal(tensor.Shape{512, 3}) {
		t.Fatalf("predict shape %v", p.Shape())
	}
}

// TestWeightsAndBinaryHeads checks sample weights, per-element masks, class weights and
// binary accuracy on a sigmoid head.
func TestWeightsAndBinaryHeads(t *testing.T) {
	SetSeed(7)
	x, y := blobs(64, 4, 2, 8)
	yb := y.Convert(tensor.F32)
	yb, _ = yb.Reshape(64, 1)
	bin := Sequential(Dense(1, Activation("sigmoid"), InputShape(4)))
	compileOrFatal(t, bin, Loss("binary_crossentropy"), Metrics("accuracy"))
	if _, err := bin.Fit(x, yb, Epochs(20), BatchSize(8), Verbose(0)); err != nil {
		t.Fatal(err)
	}
	logs, err := bin.Evaluate(x, yb)
	if err != nil || logs["accuracy"] < 0.9 {
		t.Fatalf("binary accuracy %v (%v)", logs, err)
	}
	zero := tensor.New(tensor.F32, 64)
	if l, err := bin.Evaluate(x, yb, SampleWeights(zero)); err != nil || l["loss"] != 0 {
		t.Fatalf("zero sample weights: loss %v (%v)", l, err)
	}
	// Class weights of 0 for both classes zero the loss as well.
	if l, err := bin.Evaluate(x, yb, ClassWeights(map[int]float64{0: 0, 1: 0})); err != nil || l["loss"] != 0 {
		t.Fatalf("zero class weights: loss %v (%v)", l, err)
	}

	reg := Sequential(Dense(2, InputShape(4)))
	compileOrFatal(t, reg, Loss("mse"))
	target := tensor.New(tensor.F32, 64, 2)
	mask := tensor.New(tensor.F32, 64, 2)
	for i := 0; i < 64; i++ {
		target.Float32s()[2*i+1] = 1000 // masked out: must not matter
		mask.Float32s()[2*i] = 1
	}
	full, _ := reg.Evaluate(x, target)
	masked, err := reg.Evaluate(x, target, SampleWeights(mask))
	if err != nil || masked["loss"] >= full["loss"]/100 {
		t.Fatalf("masked mse %v, unmasked %v (%v)", masked, full, err)
	}
	if _, err := reg.Fit(x, target, SampleWeights(mask), Epochs(2), Verbose(0)); err != nil {
		t.Fatal(err)
	}
}
