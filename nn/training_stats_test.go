package nn

import (
	"math"
	"strings"
	"testing"

	"github.com/gml-dev/gml/data"
	"github.com/gml-dev/gml/tensor"
)

// weightBySuffix returns the model variable whose name ends in suffix.
func weightBySuffix(t *testing.T, m *Net, suffix string) []float32 {
	t.Helper()
	w, err := m.Weights()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range w {
		if strings.HasSuffix(name, suffix) {
			return v.Float32s()
		}
	}
	t.Fatalf("no variable named *%s among %d", suffix, len(w))
	return nil
}

// Dropout zeroes a rate of the elements while training and scales the rest by
// 1/(1-rate), so the mean square of dropout(1) is 1/(1-rate); Predict passes x as it
// is. Measured through the loss of an identity layer against 0 on every device.
func TestDropoutTrainingStatistics(t *testing.T) {
	const n, batch, rate = 512, 16, 0.2
	x, y := tensor.New(tensor.F32, batch, n), tensor.New(tensor.F32, batch, n)
	for i := range x.Float32s() {
		x.Float32s()[i] = 1
	}
	for _, device := range testDevices(t) {
		t.Run(device, func(t *testing.T) {
			SetSeed(4)
			m := Sequential(Dropout(rate), Dense(n, NoBias()))
			if err := m.Compile(SGD(1e-9), Loss("mse"), Device(device)); err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			if _, err := m.Predict(x); err != nil { // builds the model from the data
				t.Fatal(err)
			}
			eye := tensor.New(tensor.F32, n, n)
			for i := 0; i < n; i++ {
				eye.Float32s()[i*n+i] = 1
			}
			name := m.Params()[0].Name()
			if err := m.SetWeights(map[string]*tensor.Tensor{name: eye}); err != nil {
				t.Fatal(err)
			}
			tr, err := m.NewTrainer()
			if err != nil {
				t.Fatal(err)
			}
			// 8192 elements: the kept share is 0.8 ± 0.0045, the loss 1.25 ± 0.007.
			loss, err := tr.Step(x, y)
			if err != nil {
				t.Fatal(err)
			}
			if want := 1 / (1 - rate); math.Abs(loss-want) > 0.04 {
				t.Errorf("mean square of dropout(1) at rate %v: %v, want %v", rate, loss, want)
			}
			p, err := m.Predict(x)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range p.Float32s() {
				if math.Abs(float64(v)-1) > 1e-6 {
					t.Fatalf("Predict changed element %d to %v: dropout must be the identity outside training", i, v)
				}
			}
		})
	}
}

// BatchNorm's moving averages move a (1-momentum) step towards the batch's mean and
// (population) variance per channel on each training step.
func TestBatchNormMovingAverages(t *testing.T) {
	const batch, ch, momentum = 8, 3, 0.9
	x, y := tensor.New(tensor.F32, batch, ch), tensor.New(tensor.F32, batch, 1)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(math.Sin(float64(i)*1.3)*2 + float64(i%ch))
	}
	mean, variance := make([]float64, ch), make([]float64, ch)
	for c := 0; c < ch; c++ {
		for b := 0; b < batch; b++ {
			mean[c] += float64(x.Float32s()[b*ch+c]) / batch
		}
		for b := 0; b < batch; b++ {
			d := float64(x.Float32s()[b*ch+c]) - mean[c]
			variance[c] += d * d / batch
		}
	}
	for _, device := range testDevices(t) {
		t.Run(device, func(t *testing.T) {
			SetSeed(5)
			m := Sequential(BatchNorm(Momentum(momentum), InputShape(ch)), Dense(1))
			if err := m.Compile(SGD(1e-3), Loss("mse"), Device(device)); err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			tr, err := m.NewTrainer()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Step(x, y); err != nil {
				t.Fatal(err)
			}
			gotMean, gotVar := weightBySuffix(t, m, "/moving_mean"), weightBySuffix(t, m, "/moving_variance")
			for c := 0; c < ch; c++ {
				wantMean := momentum*0 + (1-momentum)*mean[c]
				wantVar := momentum*1 + (1-momentum)*variance[c]
				if math.Abs(float64(gotMean[c])-wantMean) > 1e-5 || math.Abs(float64(gotVar[c])-wantVar) > 1e-5 {
					t.Errorf("channel %d: moving mean %v, variance %v; want %v, %v", c, gotMean[c], gotVar[c], wantMean, wantVar)
				}
			}
		})
	}
}

// ValidationSplit holds out the last fraction of the samples: training takes the
// optimizer steps of the rest only, and val_loss is the loss on the held-out samples.
func TestValidationSplitHoldsOut(t *testing.T) {
	x, y := blobs(100, 4, 3, 8)
	SetSeed(6)
	m := Sequential(Dense(3, Activation("softmax"), InputShape(4)))
	opt := SGD(0.05)
	if err := m.Compile(opt, Loss("sparse_categorical_crossentropy"), Device("cpu")); err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	h, err := m.Fit(x, y, Epochs(1), BatchSize(20), ValidationSplit(0.2), Shuffle(false), Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if opt.Steps() != 4 {
		t.Errorf("%d optimizer steps for 80 training samples in batches of 20, want 4", opt.Steps())
	}
	vx, err := data.Rows(x, 80, 100)
	if err != nil {
		t.Fatal(err)
	}
	vy, err := data.Rows(y, 80, 100)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := m.Evaluate(vx, vy)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Last("val_loss"); math.Abs(got-logs["loss"]) > 1e-5 {
		t.Errorf("val_loss %v, loss on the last 20 samples %v", got, logs["loss"])
	}
}
