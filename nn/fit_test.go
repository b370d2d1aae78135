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
