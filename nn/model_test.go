package nn

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

func compileOrFatal(t *testing.T, m *Net, opts ...CompileOption) {
	t.Helper()
	if err := m.Compile(Adam(1e-2), append([]CompileOption{Device("cpu")}, opts...)...); err != nil {
		t.Fatal(err)
	}
}

// reloaded saves m to a temporary file and loads it back.
func reloaded(t *testing.T, m *Net) *Net {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.gml")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	m2, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m2
}

// samePredictions fails t unless models a and b predict bit-identical outputs for x.
func samePredictions(t *testing.T, a, b *Net, x any) {
	t.Helper()
	p1, err := a.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := b.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	if !p1.AllClose(p2, 0, 0) {
		t.Fatalf("predictions differ after load:\n%v\n%v", p1, p2)
	}
}

// TestFunctionalMultiIO trains a two-input, two-output model with a shared layer, a
// residual Add and a Concatenate, with per-head losses and weights by name.
func TestFunctionalMultiIO(t *testing.T) {
	SetSeed(2)
	x, y := blobs(256, 6, 3, 2)
	target := tensor.New(tensor.F32, 256, 1)
	for i := range target.Float32s() {
		target.Float32s()[i] = float32(x.Float(i*6)) * 0.5
	}
	a, b := Input([]int{6}, Name("a")), Input([]int{6}, Name("b"))
	shared := Dense(8, Activation("tanh"))
	ha, hb := shared.Apply(a), shared.Apply(b)
	h := Add().Apply(ha, hb)
	h = Concatenate().Apply(h, Dense(4, Activation("relu")).Apply(a))
	cls := Dense(3, Activation("softmax"), Name("cls")).Apply(h)
	reg := Dense(1, Name("reg")).Apply(h)
	m, err := Model([]*Node{a, b}, []*Node{cls, reg})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Layers()); got != 6 {
		t.Fatalf("%d distinct layers, want 6 (the shared one once)", got)
	}
	compileOrFatal(t, m, LossByName(map[string]string{"cls": "sparse_categorical_crossentropy", "reg": "mse"}),
		LossWeightsByName(map[string]float64{"reg": 0.5}), MetricsByName(map[string][]string{"cls": {"accuracy"}, "reg": {"mae"}}))
	h1, err := m.Fit([]*tensor.Tensor{x, x}, []*tensor.Tensor{y, target}, Epochs(4), Verbose(0), ValidationSplit(0.25))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"loss", "cls_loss", "reg_loss", "reg_mae", "cls_accuracy", "val_reg_loss"} {
		if _, ok := h1.Values[k]; !ok {
			t.Fatalf("history lacks %q: %v", k, h1.Keys())
		}
	}
	// The total is the weighted sum of the heads.
	last := func(k string) float64 { return h1.Last(k) }
	if d := last("loss") - (last("cls_loss") + 0.5*last("reg_loss")); !(d <= 1e-3 && d >= -1e-3) {
		t.Fatalf("loss %v != cls %v + 0.5 reg %v", last("loss"), last("cls_loss"), last("reg_loss"))
	}
	outs, err := m.PredictOutputs([]*tensor.Tensor{x, x})
	if err != nil || len(outs) != 2 || !outs[1].Shape().Equal(tensor.Shape{256, 1}) {
		t.Fatalf("PredictOutputs = %v, %v", outs, err)
	}
	if _, err := m.Predict([]*tensor.Tensor{x, x}); err == nil || !strings.Contains(err.Error(), "PredictOutputs") {
		t.Fatalf("Predict on two outputs: err = %v", err)
	}
}

// TestErrors checks that misuse is reported with the reason.
func TestErrors(t *testing.T) {
	x, y := blobs(16, 4, 10, 3)
	yf, _ := tensor.FromFloat32s(tensor.Shape{16}, make([]float32, 16))
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"mse on int labels", func() error {
			m := Sequential(Dense(1, InputShape(4)))
			compileOrFatal(t, m, Loss("mse"))
			_, err := m.Fit(x, y, Verbose(0))
			return err
		}, "int labels"},
		{"bce on softmax over 10 classes", func() error {
			m := Sequential(Dense(10, Activation("softmax"), InputShape(4)))
			compileOrFatal(t, m, Loss("binary_crossentropy"))
			oh := tensor.New(tensor.F32, 16, 10)
			_, err := m.Fit(x, oh, Verbose(0))
			return err
		}, "softmax head over 10 classes"},
		{"accuracy on regression", func() error {
			m := Sequential(Dense(1, InputShape(4)))
			return m.Compile(Adam(1e-3), Loss("mse"), Metrics("accuracy"))
		}, "classification loss"},
		{"one-hot with sparse", func() error {
			m := Sequential(Dense(10, Activation("softmax"), InputShape(4)))
			compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"))
			_, err := m.Fit(x, tensor.New(tensor.F32, 16, 10), Verbose(0))
			return err
		}, "look one-hot"},
		{"another layer's option", func() error {
			_, err := Model([]*Node{Input([]int{4})}, []*Node{Dense(3, Heads(3)).Apply(Input([]int{4}))})
			return err
		}, "does not take option Heads"},
		{"unknown activation", func() error {
			return Dense(3, Activation("relu6")).Apply(Input([]int{4})).Err()
		}, "unknown activation"},
		{"shape mismatch", func() error {
			a, b := Input([]int{3}), Input([]int{4})
			_, err := Model([]*Node{a, b}, []*Node{Add().Apply(a, b)})
			return err
		}, "add"},
		{"shared layer on another shape", func() error {
			d := Dense(2)
			d.Apply(Input([]int{3}))
			return d.Apply(Input([]int{5})).Err()
		}, "shared layer"},
		{"not compiled", func() error {
			_, err := Sequential(Dense(2)).Fit(x, yf)
			return err
		}, "Compile"},
		{"unknown loss", func() error {
			return Sequential(Dense(2)).Compile(Adam(1e-3), Loss("hinge"))
		}, "unknown loss"},
		{"embedding on floats", func() error {
			return Embedding(5, 2).Apply(Input([]int{3})).Err()
		}, "int ids"},
		{"wrong input size", func() error {
			m := Sequential(Dense(2, InputShape(5)))
			_, err := m.Predict(x)
			return err
		}, "do not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestSaveLoadPredictsIdentically saves a trained model with batch norm, dropout and a
// conv layer, loads it, and compares predictions and the resumed optimizer state.
func TestSaveLoadPredictsIdentically(t *testing.T) {
	SetSeed(3)
	x := tensor.New(tensor.F32, 32, 1, 6, 6)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(i%7) / 7
	}
	_, y := blobs(32, 2, 3, 4)
	m := Sequential(Conv2D(2, 3, Activation("relu"), InputShape(1, 6, 6)), BatchNorm(), Flatten(), Dropout(0.2), Dense(3, Activation("softmax")))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"), Metrics("accuracy"))
	if _, err := m.Fit(x, y, Epochs(2), Verbose(0)); err != nil {
		t.Fatal(err)
	}
	m2 := reloaded(t, m)
	samePredictions(t, m, m2, x)
	if m2.comp.opt.Steps() != m.comp.opt.Steps() || m2.comp.opt.Name() != "adam" {
		t.Fatalf("optimizer after load: %s with %d steps, want adam with %d", m2.comp.opt.Name(), m2.comp.opt.Steps(), m.comp.opt.Steps())
	}
	// Training resumes from the loaded state identically in both copies.
	l1, err := m.Evaluate(x, y)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := m2.Evaluate(x, y)
	if err != nil || l1["loss"] != l2["loss"] {
		t.Fatalf("evaluate after load: %v vs %v (%v)", l1, l2, err)
	}
}

// TestCallbacks checks early stopping with restored weights, a learning-rate schedule,
// reduce-on-plateau, checkpoints and user functions.
func TestCallbacks(t *testing.T) {
	SetSeed(4)
	x, y := blobs(128, 4, 3, 5)
	m := Sequential(Dense(8, Activation("relu"), InputShape(4)), Dense(3, Activation("softmax")))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"))
	var epochs, batches int
	var rates []float64
	dir := t.TempDir()
	// The monitored value is the training loss of a model whose learning rate goes
	// to a huge value, so it stops improving and early stopping restores the best.
	hist, err := m.Fit(x, y, Epochs(30), Verbose(0), BatchSize(64), Callbacks(
		LRSchedule(func(epoch int, lr float64) float64 {
			if epoch >= 3 {
				return 50
			}
			return 0.05
		}),
		EarlyStopping(Monitor("loss"), Patience(1), RestoreBest()),
		ModelCheckpoint(filepath.Join(dir, "ckpt-{epoch}.gml")),
		EpochFunc(func(epoch int, logs Logs) error {
			epochs++
			o, _ := m.optimizer()
			rates = append(rates, o.LR())
			return nil
		}),
		BatchFunc(func(int, Logs) error { batches++; return nil }),
	))
	if err != nil {
		t.Fatal(err)
	}
	if epochs >= 30 || epochs != len(hist.Epochs) || batches != 2*epochs {
		t.Fatalf("ran %d epochs, %d batches; history %d epochs", epochs, batches, len(hist.Epochs))
	}
	if rates[0] != 0.05 || rates[len(rates)-1] != 50 {
		t.Fatalf("learning rates %v", rates)
	}
	best := hist.Values["loss"][0]
	for _, v := range hist.Values["loss"] {
		best = min(best, v)
	}
	logs, err := m.Evaluate(x, y, BatchSize(128))
	if err != nil {
		t.Fatal(err)
	}
	// Evaluated without dropout on the restored weights: close to the best epoch's loss.
	if logs["loss"] > best*1.5 {
		t.Fatalf("restored loss %v, best epoch %v", logs["loss"], best)
	}
	if _, err := Load(filepath.Join(dir, "ckpt-1.gml")); err != nil {
		t.Fatalf("checkpoint: %v", err)
	}

	plateau := ReduceLROnPlateau(Monitor("loss"), Factor(0.5), Patience(0))
	tr := &Training{Model: m}
	for i, v := range []float64{1, 2, 3} {
		if err := plateau.OnEpochEnd(tr, i, Logs{"loss": v}); err != nil {
			t.Fatal(err)
		}
	}
	if o, _ := m.optimizer(); o.LR() != 50*0.25 {
		t.Fatalf("after two stalled epochs lr = %v, want %v", o.LR(), 50*0.25)
	}
}

// TestInterruptKeepsWeights interrupts Fit from a batch callback and checks that the
// model trained so far is kept and the error says so.
func TestInterruptKeepsWeights(t *testing.T) {
	SetSeed(5)
	x, y := blobs(256, 4, 3, 6)
	m := Sequential(Dense(8, Activation("relu"), InputShape(4)), Dense(3, Activation("softmax")))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"))
	ctx, cancel := context.WithCancel(context.Background())
	defer runtime.BindInterrupt(ctx)()
	hist, err := m.Fit(x, y, Epochs(10), BatchSize(16), Verbose(0), Callbacks(BatchFunc(func(b int, _ Logs) error {
		if b == 4 {
			cancel()
		}
		return nil
	})))
	if !errors.Is(err, runtime.ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if m.comp.opt.Steps() != 5 || len(hist.Epochs) != 1 {
		t.Fatalf("%d steps and %d epochs recorded after interrupting at batch 5", m.comp.opt.Steps(), len(hist.Epochs))
	}
}

// TestGeneratorAndTrainer fits from a generator and steps a Trainer with gradient
// accumulation.
func TestGeneratorAndTrainer(t *testing.T) {
	SetSeed(6)
	x, y := blobs(64, 4, 3, 7)
	m := Sequential(Dense(8, Activation("relu"), InputShape(4)), Dense(3, Activation("softmax")))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"), Metrics("accuracy"))
	calls := 0
	gen := func() *Batch {
		calls++
		if calls%5 == 0 {
			return nil
		}
		return &Batch{X: []*tensor.Tensor{x}, Y: []*tensor.Tensor{y}}
	}
	hist, err := m.FitGenerator(gen, Epochs(2), Verbose(0))
	if err != nil || len(hist.Epochs) != 2 || m.comp.opt.Steps() != 8 {
		t.Fatalf("FitGenerator: %v, %d steps", err, m.comp.opt.Steps())
	}
	_, err = m.FitGenerator(func() *Batch { calls++; return nil }, Epochs(1), StepsPerEpoch(3), Verbose(0))
	if err == nil {
		t.Fatal("a generator returning nothing: want an error")
	}
	if _, err := m.FitGenerator(gen, Epochs(1), StepsPerEpoch(10), Verbose(0)); err == nil || !strings.Contains(err.Error(), "short epoch") {
		t.Fatalf("generator ending early with StepsPerEpoch: err = %v", err)
	}

	tr, err := m.NewTrainer(GradientAccumulation(2))
	if err != nil {
		t.Fatal(err)
	}
	before := m.comp.opt.Steps()
	first, err := tr.Step(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if m.comp.opt.Steps() != before {
		t.Fatal("the optimizer ran after one of two accumulated steps")
	}
	if _, err := tr.Step(x, y); err != nil {
		t.Fatal(err)
	}
	if m.comp.opt.Steps() != before+1 {
		t.Fatal("the optimizer did not run after two accumulated steps")
	}
	snap, err := tr.Model()
	if err != nil {
		t.Fatal(err)
	}
	tr.SetLR(0.05)
	for i := 0; i < 10; i++ {
		if _, err := tr.Step(x, y); err != nil {
			t.Fatal(err)
		}
	}
	logs, err := tr.Eval(x, y)
	if err != nil || logs["loss"] >= first {
		t.Fatalf("trainer loss %v after 12 steps, first %v (%v)", logs, first, err)
	}
	sl, err := snap.Evaluate(x, y)
	if err != nil || sl["loss"] == logs["loss"] {
		t.Fatalf("snapshot changed with the trainer: %v vs %v (%v)", sl, logs, err)
	}
	tr.Free()
	if _, err := tr.Step(x, y); err == nil {
		t.Fatal("Step after Free: want an error")
	}
}

// TestSummaryAndHistoryRender checks the rich output of a model and a history.
func TestSummaryAndHistoryRender(t *testing.T) {
	m := Sequential(Flatten(InputShape(2, 3)), Dense(4, Activation("relu")), Dense(2))
	b := m.MIMEBundle()
	text, _ := b["text/plain"].(string)
	if !strings.Contains(text, "(None, 6)") || !strings.Contains(text, "38 trainable") || b["text/html"] == nil {
		t.Fatalf("summary bundle: %v", b)
	}
	h := newHistory()
	h.add(0, Logs{"loss": 1, "accuracy": 0.5, "val_loss": 1.2})
	h.add(1, Logs{"loss": 0.5, "accuracy": 0.7, "val_loss": 0.9})
	hb := h.MIMEBundle()
	if hb["image/png"] == nil || !strings.Contains(hb["text/plain"].(string), "val_loss") {
		t.Fatalf("history bundle keys %v", sortedKeys(hb))
	}
}
