package test

import (
	"math"
	"os"
	"testing"

	"github.com/gml-dev/gml/data"
	"github.com/gml-dev/gml/nn"
)

// The Fashion-MNIST quality checks of the nn issue, against the PyTorch anchors in
// ../shared/anchors/pytorch_h200.jsonl (adam 1e-3, batch 32): the MLP
// 784-128(relu)-dropout0.3-10 reaches >= 86.5% test accuracy after 5 epochs (PyTorch
// 86.95%, 86.99%); the CNN conv32-pool-conv64-pool-flatten-dense128-dropout-10 >= 90.0%
// (PyTorch 90.63%). The MLP runs its full schedule here. The CNN's five epochs take too
// long on a 2-core CI machine, so by default it trains one epoch and must match
// PyTorch's first-epoch accuracy (85.68%); GML_NN_FULL=1 runs all five against 90.0%.

// fashion loads the dataset; it is a Debian dependency (dataset-fashion-mnist), so a
// missing file fails the test with the loader's message naming the package.
func fashion(t *testing.T) *data.Dataset {
	t.Helper()
	ds, err := data.FashionMNIST("")
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// fitFashion trains m for epochs and returns its test accuracy.
func fitFashion(t *testing.T, m *nn.Net, ds *data.Dataset, epochs int) float64 {
	t.Helper()
	if err := m.Compile(nn.Adam(1e-3), nn.Loss("sparse_categorical_crossentropy"), nn.Metrics("accuracy"), nn.Device("cpu"), nn.Seed(0)); err != nil {
		t.Fatal(err)
	}
	hist, err := m.Fit(ds.TrainX, ds.TrainY, nn.Epochs(epochs), nn.BatchSize(32), nn.Verbose(0), nn.Seed(0))
	if err != nil {
		t.Fatal(err)
	}
	logs, err := m.Evaluate(ds.TestX, ds.TestY, nn.BatchSize(500))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train loss per epoch %v; test %v", hist.Values["loss"], logs)
	checkAccuracy(t, m, ds, logs["accuracy"])
	return logs["accuracy"]
}

// checkAccuracy counts the test images whose most probable class in Predict's output is
// the label and fails when Evaluate's accuracy says otherwise: the bars above would pass
// a metric that counts too many right answers.
func checkAccuracy(t *testing.T, m *nn.Net, ds *data.Dataset, evaluated float64) {
	t.Helper()
	probs, err := m.Predict(ds.TestX, nn.BatchSize(500))
	if err != nil {
		t.Fatal(err)
	}
	p, labels := probs.Float32s(), ds.TestY.Int64s()
	hits := 0
	for i, label := range labels {
		row := p[i*10 : i*10+10]
		best := 0
		for c, v := range row {
			if v > row[best] {
				best = c
			}
		}
		if int64(best) == label {
			hits++
		}
	}
	// Evaluate takes the argmax of the logits, Predict gives probabilities: a tie after
	// rounding may flip an image or two.
	if counted := float64(hits) / float64(len(labels)); math.Abs(counted-evaluated) > 2.5/float64(len(labels)) {
		t.Errorf("Evaluate's accuracy %.4f, counted from Predict %.4f (%d of %d)", evaluated, counted, hits, len(labels))
	}
}

func TestNNFashionMNISTMLP(t *testing.T) {
	ds := fashion(t)
	nn.SetSeed(0)
	m := nn.Sequential(nn.Flatten(nn.InputShape(28, 28)), nn.Dense(128, nn.Activation("relu")), nn.Dropout(0.3), nn.Dense(10, nn.Activation("softmax")))
	if acc := fitFashion(t, m, ds, 5); acc < 0.865 {
		t.Fatalf("MLP test accuracy %.4f after 5 epochs, want >= 0.865 (PyTorch 0.8695)", acc)
	}
}

func TestNNFashionMNISTCNN(t *testing.T) {
	ds := fashion(t)
	epochs, want := 1, 0.8568
	if os.Getenv("GML_NN_FULL") == "1" {
		epochs, want = 5, 0.90
	}
	nn.SetSeed(0)
	m := nn.Sequential(
		nn.Conv2D(32, 3, nn.Activation("relu"), nn.InputShape(1, 28, 28)), nn.MaxPooling2D(2),
		nn.Conv2D(64, 3, nn.Activation("relu")), nn.MaxPooling2D(2), nn.Flatten(),
		nn.Dense(128, nn.Activation("relu")), nn.Dropout(0.3), nn.Dense(10, nn.Activation("softmax")))
	if acc := fitFashion(t, m, ds, epochs); acc < want {
		t.Fatalf("CNN test accuracy %.4f after %d epoch(s), want >= %.4f", acc, epochs, want)
	}
}
