package nn

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// The tests of this file are Keras's own examples and tests of EarlyStopping and
// ReduceLROnPlateau (keras/src/callbacks/*_test.py and the class docs), with Keras's
// expected results.

// tinyModel is a compiled one-layer model whose only weight is a scalar-like kernel,
// for callbacks driven by hand.
func tinyModel(t *testing.T) *Net {
	t.Helper()
	m := Sequential(Dense(1, NoBias(), InputShape(1), Name("w")))
	compileOrFatal(t, m, Loss("mse"))
	return m
}

// TestEarlyStoppingPatienceKeras is Keras's test_early_stopping_patience: the loss
// improves for three epochs, then stalls; patience p stops at epoch max(p, 1) + 2.
func TestEarlyStoppingPatienceKeras(t *testing.T) {
	losses := []float64{10, 9, 8, 9, 8.9, 8.8, 8.7, 8.6, 8.5}
	m := tinyModel(t)
	for patience := range 4 {
		stopper := EarlyStopping(Monitor("loss"), Patience(patience))
		for run := range 2 { // a second Fit with the same callback starts afresh
			tr := &Training{Model: m}
			if err := stopper.(TrainBeginCallback).OnTrainBegin(tr); err != nil {
				t.Fatal(err)
			}
			stopped := -1
			for epoch, loss := range losses {
				if err := stopper.OnEpochEnd(tr, epoch, Logs{"loss": loss}); err != nil {
					t.Fatal(err)
				}
				if tr.StopTraining {
					stopped = epoch
					break
				}
			}
			if want := max(patience, 1) + 2; stopped != want {
				t.Fatalf("patience %d, run %d: stopped at epoch %d, Keras stops at %d", patience, run+1, stopped, want)
			}
		}
	}
}

// TestEarlyStoppingDocExample is the example of Keras's EarlyStopping docs: a Dense(10)
// trained by SGD on np.arange(100).reshape(5, 20) diverges, and patience 3 on the loss
// runs 4 epochs of 10. The loss overflows to infinity along the way, so the example
// needs CheckFinite(false) here (Keras does not stop on a non-finite loss by default).
func TestEarlyStoppingDocExample(t *testing.T) {
	SetSeed(1)
	x := tensor.New(tensor.F32, 5, 20)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(i)
	}
	y := tensor.New(tensor.F32, 5, 10)
	m := Sequential(Dense(10))
	if err := m.Compile(SGD(0.01), Loss("mse"), Device("cpu")); err != nil {
		t.Fatal(err)
	}
	h, err := m.Fit(x, y, Epochs(10), BatchSize(1), Verbose(0), CheckFinite(false),
		Callbacks(EarlyStopping(Monitor("loss"), Patience(3))))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Values["loss"]) != 4 {
		t.Fatalf("ran %d epochs, Keras's example runs 4:\n%v", len(h.Values["loss"]), h)
	}
}

// TestEarlyStoppingRestoresBestKeras is Keras's
// test_early_stopping_final_weights_when_restoring_model_weights: the weights are set
// to the epoch number each epoch; patience 2 stops after epoch 4 and puts back the
// weights of epoch 2, the best.
func TestEarlyStoppingRestoresBestKeras(t *testing.T) {
	m := tinyModel(t)
	stopper := EarlyStopping(Monitor("val_loss"), Patience(2), RestoreBest())
	tr := &Training{Model: m}
	if err := stopper.(TrainBeginCallback).OnTrainBegin(tr); err != nil {
		t.Fatal(err)
	}
	trained := 0
	for epoch, loss := range []float64{0.2, 0.15, 0.1, 0.11, 0.12} {
		trained++
		k, _ := tensor.FromFloat32s(tensor.Shape{1, 1}, []float32{float32(epoch)})
		if err := m.SetWeights(map[string]*tensor.Tensor{"w/kernel": k}); err != nil {
			t.Fatal(err)
		}
		if err := stopper.OnEpochEnd(tr, epoch, Logs{"val_loss": loss}); err != nil {
			t.Fatal(err)
		}
		if tr.StopTraining {
			break
		}
	}
	if err := stopper.(TrainEndCallback).OnTrainEnd(tr); err != nil {
		t.Fatal(err)
	}
	w, err := m.Weights()
	if err != nil {
		t.Fatal(err)
	}
	if trained != 5 || w["w/kernel"].Float(0) != 2 {
		t.Fatalf("trained %d epochs, weights of epoch %v; Keras trains 5 and restores epoch 2", trained, w["w/kernel"].Float(0))
	}
}

// TestReduceLROnPlateauKeras runs Keras's ReduceLROnPlateau tests: a Dense(5), Dense(2)
// model trained with Adam(0.1) on 10 samples, validation loss monitored with a
// min_delta so large that only the first epoch counts as an improvement. It also checks
// that History records the rate of each epoch as "lr".
func TestReduceLROnPlateauKeras(t *testing.T) {
	x, ids := blobs(10, 3, 2, 3)
	vx, vids := blobs(10, 3, 2, 4)
	oneHot := func(ids *tensor.Tensor) *tensor.Tensor {
		y := tensor.New(tensor.F32, ids.Len(), 2)
		for i, c := range ids.Int64s() {
			y.Float32s()[2*i+int(c)] = 1
		}
		return y
	}
	y, vy := oneHot(ids), oneHot(vids)
	cases := []struct {
		name    string
		opts    []CallbackOption
		epochs  int
		wantLR  float64
		history []float64
	}{
		{"test_reduces_lr_with_model_fit", []CallbackOption{Patience(1), Factor(0.1), MinDelta(100)}, 2, 0.01, []float64{0.1, 0.1}},
		{"test_honors_min_lr", []CallbackOption{Patience(1), Factor(0.1), MinDelta(10), MinLR(0.005)}, 4, 0.005, []float64{0.1, 0.1, 0.01, 0.005}},
		{"test_cooldown", []CallbackOption{Patience(1), Factor(0.1), MinDelta(100), Cooldown(2)}, 4, 0.001, []float64{0.1, 0.1, 0.01, 0.01}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			SetSeed(2)
			m := Sequential(Dense(5), Dense(2))
			if err := m.Compile(Adam(0.1), Loss("mse"), Device("cpu")); err != nil {
				t.Fatal(err)
			}
			h, err := m.Fit(x, y, Epochs(tc.epochs), Verbose(0), ValidationData(vx, vy),
				Callbacks(ReduceLROnPlateau(append([]CallbackOption{Monitor("val_loss")}, tc.opts...)...)))
			if err != nil {
				t.Fatal(err)
			}
			o, _ := m.optimizer()
			if math.Abs(o.LR()-tc.wantLR) > 1e-12 {
				t.Fatalf("learning rate %v after %d epochs, Keras has %v", o.LR(), tc.epochs, tc.wantLR)
			}
			for i, want := range tc.history {
				if got := h.Values["lr"][i]; math.Abs(got-want) > 1e-12 {
					t.Fatalf("History lr = %v, want %v", h.Values["lr"], tc.history)
				}
			}
		})
	}
}
