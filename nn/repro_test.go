package nn

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestFitIsReproducible trains the same CNN several times from the same seeds and checks
// that the losses and the weights are bit-identical, on the CPU (whose reductions sum
// in an order fixed by the thread count, never by which goroutine ran first) and on the
// GPU when there is one (no shader adds floats atomically). The model has every layer
// kind whose gradient sums over the batch (dense, convolution, batch norm) and dropout.
func TestFitIsReproducible(t *testing.T) {
	for _, device := range []string{"cpu", "gpu"} {
		t.Run(device, func(t *testing.T) { fitTwice(t, device) })
	}
}

func fitTwice(t *testing.T, device string) {
	if device == "gpu" {
		rt, err := runtime.New(runtime.Device("gpu"))
		if err != nil {
			t.Skipf("no GPU: %v", err)
		}
		rt.Close()
	}
	x := tensor.New(tensor.F32, 96, 1, 12, 12)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(math.Sin(float64(i)*0.113) + math.Cos(float64(i%144)*0.7))
	}
	_, y := blobs(96, 2, 4, 8)
	run := func() (*History, map[string]*tensor.Tensor) {
		SetSeed(21)
		m := Sequential( // named, so that the runs' weights have the same names
			Conv2D(8, 3, Activation("relu"), InputShape(1, 12, 12), Name("c1")), BatchNorm(Name("bn")), MaxPooling2D(2),
			Conv2D(8, 3, Activation("relu"), Name("c2")), Flatten(), Dropout(0.3), Dense(4, Activation("softmax"), Name("out")))
		if err := m.Compile(Adam(1e-2), Loss("sparse_categorical_crossentropy"), Metrics("accuracy"), Device(device), Seed(5)); err != nil {
			t.Fatal(err)
		}
		h, err := m.Fit(x, y, Epochs(3), BatchSize(32), Verbose(0))
		if err != nil {
			t.Fatal(err)
		}
		w, err := m.Weights()
		if err != nil {
			t.Fatal(err)
		}
		m.Free()
		return h, w
	}
	h1, w1 := run()
	repeats := 3 // the CPU's timing varies with the machine's load: try a few times
	if device == "gpu" {
		repeats = 1 // lavapipe is slow, and a GPU's order is fixed by the shaders
	}
	for range repeats {
		h2, w2 := run()
		for i, l := range h1.Values["loss"] {
			if h2.Values["loss"][i] != l {
				t.Fatalf("epoch %d loss %v, then %v", i+1, l, h2.Values["loss"][i])
			}
		}
		for name, a := range w1 {
			if b, ok := w2[name]; !ok || !a.AllClose(b, 0, 0) {
				t.Fatalf("weights %s differ between runs", name)
			}
		}
	}
}
