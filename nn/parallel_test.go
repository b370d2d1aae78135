package nn

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestDataParallelFit: Fit over replicas of one device (the CPU, and the Vulkan device
// where there is one) follows Fit on the device alone: the same losses and metrics per
// epoch and the same weights within float32 rounding, with the replicas identical to
// each other; Evaluate afterwards sees the trained weights.
func TestDataParallelFit(t *testing.T) {
	devices := [][2]string{{"cpu", "cpu"}} // nn's device, the replicas' device
	if d, err := runtime.FindDevice("gpu"); err == nil && d.Info().Backend == "vulkan" {
		devices = append(devices, [2]string{"gpu", d.ID()})
	} else {
		t.Logf("no Vulkan device: CPU replicas only (%v)", err)
	}
	x, y := blobs(96, 6, 3, 5)
	build := func() *Net {
		SetSeed(7)
		return Sequential(Dense(16, Activation("relu"), InputShape(6)), BatchNorm(), Dense(3, Activation("softmax")))
	}
	for _, devs := range devices {
		dev := devs[0]
		for _, parts := range []int{2, 3} {
			t.Run(devs[1], func(t *testing.T) {
				one := build()
				if err := one.Compile(Adam(1e-2), Loss("sparse_categorical_crossentropy"), Metrics("accuracy"), Device(dev)); err != nil {
					t.Fatal(err)
				}
				defer one.Free()
				group := make([]string, parts)
				for i := range group {
					group[i] = devs[1]
				}
				dp := build()
				if err := dp.Compile(Adam(1e-2), Loss("sparse_categorical_crossentropy"), Metrics("accuracy"), Device(dev), DataParallel(group...)); err != nil {
					t.Fatal(err)
				}
				defer dp.Free()
				fit := []FitOption{Epochs(3), BatchSize(24), Verbose(0), Shuffle(false)}
				h1, err := one.Fit(x, y, fit...)
				if err != nil {
					t.Fatal(err)
				}
				h2, err := dp.Fit(x, y, fit...)
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"loss", "accuracy"} {
					for e := range h1.Values[k] {
						if a, b := h1.Values[k][e], h2.Values[k][e]; math.Abs(a-b) > 1e-4*(1+math.Abs(a)) {
							t.Errorf("epoch %d %s: %g on one device, %g over %d replicas", e, k, a, b, parts)
						}
					}
				}
				for i, v := range dp.Params() {
					reps, err := dp.Replicas(v.Name())
					if err != nil {
						t.Fatal(err)
					}
					if len(reps) != parts {
						t.Fatalf("%d replicas of %s", len(reps), v.Name())
					}
					for k := range reps {
						if !bytes.Equal(reps[k].Bytes(), reps[0].Bytes()) {
							t.Fatalf("%s differs between replicas 0 and %d", v.Name(), k)
						}
					}
					w1, _ := one.Weights()
					w2, _ := dp.Weights()
					a, b := w1[one.Params()[i].Name()], w2[v.Name()]
					for j := range a.Len() {
						if math.Abs(a.Float(j)-b.Float(j)) > 1e-4*(1+math.Abs(a.Float(j))) {
							t.Fatalf("%s[%d]: %g on one device, %g over replicas", v.Name(), j, a.Float(j), b.Float(j))
						}
					}
				}
				l1, err := one.Evaluate(x, y)
				if err != nil {
					t.Fatal(err)
				}
				l2, err := dp.Evaluate(x, y)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(l1["loss"]-l2["loss"]) > 1e-4 {
					t.Errorf("Evaluate after Fit: %v on one device, %v over replicas", l1, l2)
				}
				// Weights set on the model reach the replicas before the next step.
				w, _ := dp.Weights()
				zeroed := map[string]*tensor.Tensor{}
				for name, v := range w {
					zeroed[name] = tensor.New(v.DType(), v.Shape()...)
				}
				if err := dp.SetWeights(zeroed); err != nil {
					t.Fatal(err)
				}
				tr, err := dp.NewTrainer()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tr.Step(x, y); err != nil {
					t.Fatal(err)
				}
				first := dp.Params()[0].Name()
				reps, _ := dp.Replicas(first)
				if reps[0].Float(0) == w[first].Float(0) || math.Abs(reps[0].Float(0)) > 0.1 {
					t.Errorf("after SetWeights to zero and a step, %s[0] is %g on the replicas", first, reps[0].Float(0))
				}
			})
		}
	}
	m := build()
	if err := m.Compile(Adam(1e-2), Loss("sparse_categorical_crossentropy"), DataParallel("cpu", "cpu")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.NewTrainer(GradientAccumulation(2)); err == nil || !strings.Contains(err.Error(), "DataParallel") {
		t.Errorf("gradient accumulation with DataParallel: %v", err)
	}
	if err := m.Compile(Adam(1e-2), Loss("mse"), DataParallel()); err == nil {
		t.Errorf("DataParallel of no devices: no error")
	}
	if err := m.Compile(Adam(1e-2), Loss("mse"), DataParallel("no-such-device")); err == nil {
		t.Errorf("DataParallel of an unknown device: no error")
	}
}

// TestDataParallelModels: models of other layer kinds (a transformer classifier with
// embedding, attention, layer norms and pooling; a CNN with convolution and pooling)
// train over two CPU replicas with one device's losses; so does a model with dropout
// (the batch gathered for it), its replicas identical.
func TestDataParallelModels(t *testing.T) {
	tokens := tensor.New(tensor.I64, 16, 6)
	images := tensor.New(tensor.F32, 16, 1, 8, 8)
	y := tensor.New(tensor.I64, 16)
	for i := range 16 {
		for j := range 6 {
			tokens.Int64s()[i*6+j] = int64((i*7 + j*3) % 20)
		}
		for j := range 64 {
			images.Float32s()[i*64+j] = float32((i*j)%11) / 11
		}
		y.Int64s()[i] = int64(i % 3)
	}
	cases := []struct {
		name  string
		x     *tensor.Tensor
		build func() *Net
	}{
		{"transformer", tokens, func() *Net {
			return Sequential(Embedding(20, 8, InputShape(6)), PositionalEmbedding(), TransformerBlock(Heads(2), FeedForward(16)),
				SequencePooling(), Dense(3, Activation("softmax")))
		}},
		{"cnn", images, func() *Net {
			return Sequential(Conv2D(4, 3, Activation("relu"), InputShape(1, 8, 8)), MaxPooling2D(2), Flatten(), Dense(3, Activation("softmax")))
		}},
		{"dropout", images, func() *Net {
			return Sequential(Flatten(InputShape(1, 8, 8)), Dense(16, Activation("relu")), Dropout(0.3), Dense(3, Activation("softmax")))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var losses [2][]float64
			for k, par := range [][]string{nil, {"cpu", "cpu"}} {
				SetSeed(11)
				m := c.build()
				opts := []CompileOption{Loss("sparse_categorical_crossentropy"), Device("cpu")}
				if par != nil {
					opts = append(opts, DataParallel(par...))
				}
				if err := m.Compile(Adam(1e-2), opts...); err != nil {
					t.Fatal(err)
				}
				h, err := m.Fit(c.x, y, Epochs(3), BatchSize(8), Verbose(0), Shuffle(false))
				if err != nil {
					t.Fatal(err)
				}
				losses[k] = h.Values["loss"]
				if par != nil {
					for _, v := range m.Params() {
						reps, err := m.Replicas(v.Name())
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(reps[0].Bytes(), reps[1].Bytes()) {
							t.Fatalf("%s differs between the replicas", v.Name())
						}
					}
				}
				m.Free()
			}
			for e := range losses[0] {
				if a, b := losses[0][e], losses[1][e]; math.Abs(a-b) > 1e-4*(1+math.Abs(a)) {
					t.Errorf("epoch %d loss: %g on one device, %g over two replicas", e, a, b)
				}
			}
		})
	}
}
