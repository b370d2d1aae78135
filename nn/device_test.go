package nn

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestGPUTrainingMatchesCPU trains the same model from the same weights on the CPU and
// on the GPU backend (lavapipe in CI) and compares losses and final predictions, for a
// channels-first CNN and for a channels-last one with a custom layer.
func TestGPUTrainingMatchesCPU(t *testing.T) {
	rt, err := runtime.New(runtime.Device("gpu"))
	if err != nil {
		t.Skipf("no GPU backend to compare with: %v", err)
	}
	rt.Close()
	cases := []struct {
		name  string
		shape []int // sample shape
		model func() *Net
	}{
		{"channels_first", []int{1, 8, 8}, func() *Net {
			return Sequential(Conv2D(4, 3, Activation("relu"), Padding("same"), InputShape(1, 8, 8)), MaxPooling2D(2), Flatten(),
				Dense(16, Activation("gelu")), LayerNorm(), Dense(3, Activation("softmax")))
		}},
		{"channels_last_custom", []int{8, 8, 1}, func() *Net {
			return Sequential(Conv2D(4, 3, Activation("relu"), Padding("same"), ChannelsLast(), InputShape(8, 8, 1)),
				MaxPooling2D(2, ChannelsLast()), Flatten(), Custom("gated_dense", gatedDense{Units: 16}), LayerNorm(),
				Dense(3, Activation("softmax")))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := tensor.New(tensor.F32, append([]int{64}, tc.shape...)...)
			for i := range x.Float32s() {
				x.Float32s()[i] = float32(math.Sin(float64(i) * 0.37))
			}
			_, y := blobs(64, 2, 3, 9)
			run := func(device string) (*History, *tensor.Tensor) {
				SetSeed(11)
				m := tc.model()
				if err := m.Compile(Adam(1e-2), Loss("sparse_categorical_crossentropy"), Metrics("accuracy"), Device(device)); err != nil {
					t.Fatal(err)
				}
				h, err := m.Fit(x, y, Epochs(3), BatchSize(16), Shuffle(false), Verbose(0))
				if err != nil {
					t.Fatalf("%s: %v", device, err)
				}
				p, err := m.Predict(x)
				if err != nil {
					t.Fatalf("%s: %v", device, err)
				}
				m.Free()
				return h, p
			}
			hc, pc := run("cpu")
			hg, pg := run("gpu")
			for i, l := range hc.Values["loss"] {
				if g := hg.Values["loss"][i]; !(math.Abs(g-l) <= 1e-3*(1+math.Abs(l))) {
					t.Fatalf("epoch %d loss: cpu %v, gpu %v", i+1, l, g)
				}
			}
			if !pc.AllClose(pg, 1e-3, 1e-4) {
				t.Fatalf("predictions differ:\ncpu %v\ngpu %v", pc, pg)
			}
		})
	}
}
