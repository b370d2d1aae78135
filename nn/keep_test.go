package nn

import "testing"

// TestKeepOnDevice trains with a Trainer on a kept batch: the losses equal those of
// the same model fed the batch afresh, the batch is not uploaded again after the first
// step, and after its data changes KeepOnDevice makes the next run see the change.
func TestKeepOnDevice(t *testing.T) {
	x, y := blobs(64, 6, 3, 9)
	model := func() *Net {
		SetSeed(4)
		m := Sequential(Dense(8, Activation("relu"), InputShape(6)), Dense(3, Activation("softmax")))
		compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"))
		return m
	}
	if err := Sequential(Dense(2)).KeepOnDevice(x); err == nil {
		t.Error("KeepOnDevice on an uncompiled model: no error")
	}
	kept, fresh := model(), model()
	if err := kept.KeepOnDevice(x, y); err != nil {
		t.Fatal(err)
	}
	tk, err := kept.NewTrainer()
	if err != nil {
		t.Fatal(err)
	}
	tf, err := fresh.NewTrainer()
	if err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 3; step++ {
		lk, err := tk.Step(x, y)
		if err != nil {
			t.Fatal(err)
		}
		lf, err := tf.Step(x.Clone(), y.Clone())
		if err != nil {
			t.Fatal(err)
		}
		if lk != lf {
			t.Fatalf("step %d: loss %v on the kept batch, %v fed afresh", step, lk, lf)
		}
	}
	if n := kept.comp.rt.Stats().KeptFeeds; n < 2 {
		t.Errorf("%d feeds skipped over three steps, want at least 2 (the batch after the first step)", n)
	}
	// Change the data: kept again, the next evaluation sees it.
	for i := range x.Float32s() {
		x.Float32s()[i] *= -1
	}
	if err := kept.KeepOnDevice(x); err != nil {
		t.Fatal(err)
	}
	lk, err := tk.Eval(x, y)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tk.Eval(x.Clone(), y.Clone())
	if err != nil {
		t.Fatal(err)
	}
	if lk["loss"] != want["loss"] {
		t.Errorf("after a change and KeepOnDevice: loss %v, want %v", lk["loss"], want["loss"])
	}
	kept.UnkeepOnDevice(x, y)
}
