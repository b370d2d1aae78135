package nn

import "testing"

// Every improvement starts EarlyStopping's patience afresh: a loss that alternates
// between improving and stalling for one epoch never exhausts a patience of 2, which
// stops training only after two epochs in a row without improvement.
func TestEarlyStoppingPatienceResetsOnImprovement(t *testing.T) {
	losses := []float64{10, 11, 9, 10, 8, 9, 7, 8, 6, 6.5, 6.4, 6.3}
	m := tinyModel(t)
	stopper := EarlyStopping(Monitor("loss"), Patience(2))
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
	if stopped != 10 { // 6 at epoch 8, then 6.5 and 6.4 do not improve on it
		t.Fatalf("stopped at epoch %d, want 10 (two epochs without improvement after the best, 6)", stopped)
	}
}
