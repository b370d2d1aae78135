package nn

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// wantErr fails unless err mentions every one of parts.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("err = %v\nwant it to mention %q", err, p)
		}
	}
}

// TestLabelsOutsideTheHead feeds class ids 0..9 to a 3-class head: Fit, Evaluate,
// validation data and Trainer.Step reject them with the value, its index and the
// head's size, rather than training on them.
func TestLabelsOutsideTheHead(t *testing.T) {
	x, _ := blobs(40, 4, 3, 1)
	y := tensor.New(tensor.I64, 40)
	for i := range y.Int64s() {
		y.Int64s()[i] = int64(i % 10)
	}
	m := Sequential(Dense(3, Activation("softmax"), InputShape(4), Name("head")))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"), Metrics("accuracy"))
	parts := []string{"output head", "label 3 at index 3", "3 classes (ids 0 to 2)"}
	_, err := m.Fit(x, y, Verbose(0))
	wantErr(t, err, parts...)
	_, err = m.Evaluate(x, y)
	wantErr(t, err, parts...)
	_, ok := blobs(40, 4, 3, 2)
	_, err = m.Fit(x, ok, Verbose(0), ValidationData(x, y))
	wantErr(t, err, append(parts, "validation")...)
	tr, err := m.NewTrainer()
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Step(x, y)
	wantErr(t, err, parts...)
	neg := tensor.New(tensor.F32, 40)
	neg.Float32s()[7] = -1
	_, err = m.Evaluate(x, neg)
	wantErr(t, err, "label -1 at index 7")
	if m.comp.opt.Steps() != 0 {
		t.Fatalf("%d steps trained on bad labels", m.comp.opt.Steps())
	}
}

// TestNonFiniteData checks that NaN or infinite inputs or labels stop Fit before it
// trains, naming the sample, unless CheckFinite(false) says to train anyway.
func TestNonFiniteData(t *testing.T) {
	x, y := blobs(32, 4, 3, 3)
	bad := x.Clone()
	bad.Float32s()[4*7+2] = float32(math.NaN())
	m := Sequential(Dense(3, Activation("softmax"), InputShape(4)))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"))
	_, err := m.Fit(bad, y, Verbose(0))
	wantErr(t, err, "NaN in the inputs at sample 7 (value 2 of the sample)", "CheckFinite(false)")
	_, err = m.Fit(x, y, Verbose(0), ValidationData(bad, y))
	wantErr(t, err, "NaN in the validation inputs at sample 7")

	reg := Sequential(Dense(1, InputShape(4), Name("out")))
	compileOrFatal(t, reg, Loss("mse"))
	target := tensor.New(tensor.F32, 32, 1)
	target.Float32s()[5] = float32(math.Inf(-1))
	_, err = reg.Fit(x, target, Verbose(0))
	wantErr(t, err, "-Inf in the labels of output out at sample 5")
	if m.comp.opt.Steps() != 0 || reg.comp.opt.Steps() != 0 {
		t.Fatal("a model trained on non-finite data")
	}
	// Told to, Fit trains: the loss is NaN, and no check stops it.
	h, err := m.Fit(bad, y, Verbose(0), CheckFinite(false))
	if err != nil || !math.IsNaN(h.Last("loss")) {
		t.Fatalf("CheckFinite(false): loss %v, err %v", h.Last("loss"), err)
	}
}

// TestDivergenceStops makes training diverge in the second epoch (the learning rate
// jumps to 1e12) and checks that Fit stops with an error naming the epoch and batch.
func TestDivergenceStops(t *testing.T) {
	SetSeed(3)
	x, _ := blobs(64, 4, 3, 4)
	target := tensor.New(tensor.F32, 64, 1)
	m := Sequential(Dense(1, InputShape(4)))
	if err := m.Compile(SGD(0.01), Loss("mse"), Device("cpu")); err != nil {
		t.Fatal(err)
	}
	jump := LRSchedule(func(epoch int, lr float64) float64 {
		if epoch == 1 {
			return 1e12
		}
		return lr
	})
	h, err := m.Fit(x, target, Epochs(5), BatchSize(16), Verbose(0), Shuffle(false), Callbacks(jump))
	wantErr(t, err, "the loss became", "at epoch 2, batch", "of 4", "lower the learning rate")
	if len(h.Epochs) != 2 {
		t.Fatalf("history has %d epochs after a divergence in the second", len(h.Epochs))
	}
}

// TestErrorsWhereMade checks that mistakes in building a model are reported by Compile,
// before any data is seen, and with the fix.
func TestErrorsWhereMade(t *testing.T) {
	adam := Adam(1e-3)
	scce := Loss("sparse_categorical_crossentropy")
	wantErr(t, Sequential(Dense(8), Dense(3, Activation("relu6"))).Compile(adam, scce), "unknown activation \"relu6\"")
	wantErr(t, Sequential(Dense(3, Heads(2))).Compile(adam, scce), "dense does not take option Heads")
	wantErr(t, Sequential(Dense(3), nil).Compile(adam, scce), "layer 1 is nil")

	// Dense after Conv2D without Flatten: the head is not flat. Compile says so when
	// the input shape is known, Fit when the data gives it.
	notFlat := []string{"output dense", "is not flat", "(None, 4, 8, 3)", "Dense acts on the last axis only", "nn.Flatten()", "nn.GlobalAveragePooling2D()"}
	cnn := func(opts ...LayerOption) *Net {
		return Sequential(Conv2D(4, 3, append(opts, Activation("relu"))...), Dense(3, Activation("softmax")))
	}
	wantErr(t, cnn(InputShape(1, 10, 10)).Compile(adam, scce), notFlat...)
	m := cnn()
	if err := m.Compile(adam, scce, Device("cpu")); err != nil {
		t.Fatal(err)
	}
	_, y := blobs(8, 2, 3, 5)
	_, err := m.Fit(tensor.New(tensor.F32, 8, 1, 10, 10), y, Verbose(0))
	wantErr(t, err, notFlat...)
}

// TestReshapeNote feeds (N, 4, 4) samples to a model whose input is 16 features: the
// data is reshaped, and the log says so once.
func TestReshapeNote(t *testing.T) {
	var log bytes.Buffer
	old := notes
	defer func() { notes = old }()
	notes = &log
	x := tensor.New(tensor.F32, 8, 4, 4)
	_, y := blobs(8, 2, 3, 6)
	m := Sequential(Dense(3, Activation("softmax"), InputShape(16)))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"))
	for range 2 {
		if _, err := m.Fit(x, y, Verbose(0)); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Predict(x); err != nil {
			t.Fatal(err)
		}
	}
	want := "nn: input samples of shape [4 4] are reshaped to the model's input shape [16] (same values, row-major order)\n"
	if log.String() != want {
		t.Fatalf("log:\n%q\nwant once:\n%q", log.String(), want)
	}
}

// TestCopiesRunWhereTheSourceRuns checks that a loaded model, a clone and a Trainer's
// snapshot of a model pinned to the CPU run on the CPU, whatever the default device
// (the GPU with GML_DEVICE=gpu), and that Load's Device option moves a model.
func TestCopiesRunWhereTheSourceRuns(t *testing.T) {
	x, y := blobs(16, 4, 3, 7)
	m := Sequential(Dense(3, Activation("softmax"), InputShape(4)))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"))
	if _, err := m.Fit(x, y, Verbose(0)); err != nil {
		t.Fatal(err)
	}
	tr, err := m.NewTrainer()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tr.Model()
	if err != nil {
		t.Fatal(err)
	}
	loaded := reloaded(t, m)
	for name, c := range map[string]*Net{"Trainer.Model": snap, "Load": loaded} {
		if _, err := c.Predict(x); err != nil {
			t.Fatal(err)
		}
		if got, want := c.Summary().Device, m.Summary().Device; got != want || c.comp.device != "cpu" {
			t.Fatalf("%s: the copy runs on %s (device %q), the source on %s", name, got, c.comp.device, want)
		}
	}
	if snap.comp.rt != m.comp.rt {
		t.Fatal("Trainer.Model's copy opened a runtime of its own")
	}
	path := filepath.Join(t.TempDir(), "m.gml")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	moved, err := Load(path, Device("auto"))
	if err != nil {
		t.Fatal(err)
	}
	if moved.comp.device != "auto" {
		t.Fatalf("Load with Device(\"auto\"): device %q", moved.comp.device)
	}
}
