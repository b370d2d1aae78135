package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/gml-dev/gml/nn"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

func init() {
	registerBench("nn", "nn training step time (ms) per workload against PyTorch eager on the H200", benchNN)
}

// nnWorkload is one model of the PyTorch anchor file: its builder and one batch of data.
type nnWorkload struct {
	name  string
	build func() *nn.Net
	data  func(r *rand.Rand) (x, y *tensor.Tensor)
}

// nnWorkloads mirror the train_step workloads of pytorch_h200.jsonl: adam 1e-3,
// sparse categorical cross-entropy over 10 classes, one batch fed repeatedly.
var nnWorkloads = []nnWorkload{
	{"mlp784_b32", mlp784, images(32, 784)},
	{"mlp784_b256", mlp784, images(256, 784)},
	{"mlp4096x4_b1024", func() *nn.Net {
		layers := []nn.Layer{nn.Dense(4096, nn.Activation("relu"), nn.InputShape(4096))}
		for i := 0; i < 3; i++ {
			layers = append(layers, nn.Dense(4096, nn.Activation("relu")))
		}
		return nn.Sequential(append(layers, nn.Dense(10, nn.Activation("softmax")))...)
	}, images(1024, 4096)},
	{"cnn28_b64", func() *nn.Net {
		return nn.Sequential(
			nn.Conv2D(32, 3, nn.Activation("relu"), nn.InputShape(1, 28, 28)), nn.MaxPooling2D(2),
			nn.Conv2D(64, 3, nn.Activation("relu")), nn.MaxPooling2D(2), nn.Flatten(),
			nn.Dense(128, nn.Activation("relu")), nn.Dropout(0.3), nn.Dense(10, nn.Activation("softmax")))
	}, images(64, 1, 28, 28)},
	{"transformer_d128_h8_L4_seq64_b32", func() *nn.Net {
		layers := []nn.Layer{nn.Embedding(1000, 128, nn.InputShape(64)), nn.PositionalEmbedding()}
		for i := 0; i < 4; i++ {
			layers = append(layers, nn.TransformerBlock(nn.Heads(8), nn.FeedForward(512)))
		}
		return nn.Sequential(append(layers, nn.SequencePooling(), nn.Dense(10, nn.Activation("softmax")))...)
	}, tokens(32, 64, 1000)},
}

// mlp784 is the Fashion-MNIST MLP: 784-128(relu)-dropout 0.3-10.
func mlp784() *nn.Net {
	return nn.Sequential(nn.Dense(128, nn.Activation("relu"), nn.InputShape(784)), nn.Dropout(0.3), nn.Dense(10, nn.Activation("softmax")))
}

// images returns a generator of a random F32 batch of the shape and class labels.
func images(shape ...int) func(r *rand.Rand) (*tensor.Tensor, *tensor.Tensor) {
	return func(r *rand.Rand) (*tensor.Tensor, *tensor.Tensor) {
		x := tensor.New(tensor.F32, shape...)
		for i := range x.Float32s() {
			x.Float32s()[i] = r.Float32()
		}
		return x, labels(r, shape[0])
	}
}

// tokens returns a generator of random token ids (batch, seq) below vocab.
func tokens(batch, seq, vocab int) func(r *rand.Rand) (*tensor.Tensor, *tensor.Tensor) {
	return func(r *rand.Rand) (*tensor.Tensor, *tensor.Tensor) {
		x := tensor.New(tensor.I64, batch, seq)
		for i := range x.Int64s() {
			x.Int64s()[i] = int64(r.IntN(vocab))
		}
		return x, labels(r, batch)
	}
}

func labels(r *rand.Rand, n int) *tensor.Tensor {
	y := tensor.New(tensor.I64, n)
	for i := range y.Int64s() {
		y.Int64s()[i] = int64(r.IntN(10))
	}
	return y
}

func benchNN(args []string) error {
	fs := flag.NewFlagSet("bench nn", flag.ContinueOnError)
	device := fs.String("device", "cpu", "cpu or gpu")
	minTime := fs.Duration("time", 2*time.Second, "least time measured per workload")
	only := fs.String("case", "", "run only this workload")
	anchors := fs.String("anchors", defaultAnchors(), "PyTorch anchor file (JSON lines)")
	profile := fs.Bool("profile", false, "print a per-op profile of the timed steps to stderr")
	precision := fs.String("precision", "float32", "nn.MixedPrecision policy: float32, or mixed_bfloat16 (not comparable with the f32 PyTorch figures, so printed without a ratio)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	refs, err := nnAnchors(*anchors)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gml bench nn: no PyTorch anchors (%v); printing times alone\n", err)
	}
	for _, w := range nnWorkloads {
		if *only != "" && w.name != *only {
			continue
		}
		ms, err := timeSteps(w, *device, *precision, *minTime, *profile)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		r := benchResult{Bench: "nn", Case: w.name, Device: *device, Value: ms, Unit: "ms/step"}
		mixed := *precision != "float32" && *precision != "f32"
		if mixed {
			r.Case += "_" + *precision
		}
		if ref, ok := refs[w.name]; ok && !mixed {
			r.Ref, r.RefValue, r.Ratio = "pytorch_eager_h200", ref, ms/ref
		}
		emit(r)
	}
	return nil
}

// timeSteps compiles a workload (products in precision's policy), warms it up and
// returns the mean wall time of one training step (one graph run on a batch kept on
// the device, loss downloaded) over at least minTime. With profile, the
// timed steps are profiled per op (which slows them) and the table goes to stderr.
func timeSteps(w nnWorkload, device, precision string, minTime time.Duration, profile bool) (float64, error) {
	nn.SetSeed(1)
	m := w.build()
	opts := []nn.CompileOption{nn.Loss("sparse_categorical_crossentropy"), nn.MixedPrecision(precision), nn.Device(device)}
	if profile {
		// The profile is read from the default runtime, so the model must run on it:
		// GML_DEVICE points the default runtime at the requested device.
		os.Setenv("GML_DEVICE", device)
		opts = opts[:2]
	}
	if err := m.Compile(nn.Adam(1e-3), opts...); err != nil {
		return 0, err
	}
	defer m.Free()
	tr, err := m.NewTrainer()
	if err != nil {
		return 0, err
	}
	x, y := w.data(rand.New(rand.NewPCG(1, 2)))
	// PyTorch's figures feed tensors already on the GPU: so does this.
	if err := m.KeepOnDevice(x, y); err != nil {
		return 0, err
	}
	for i := 0; i < 3; i++ {
		if _, err := tr.Step(x, y); err != nil {
			return 0, err
		}
	}
	if profile {
		r, err := runtime.Default()
		if err != nil {
			return 0, err
		}
		r.Profile(true)
		defer func() {
			fmt.Fprintf(os.Stderr, "%s on %s:\n%s\n", w.name, device, r.ProfileReport())
			r.Profile(false)
		}()
	}
	start := time.Now()
	steps := 0
	for time.Since(start) < minTime || steps < 5 {
		if _, err := tr.Step(x, y); err != nil {
			return 0, err
		}
		steps++
	}
	return float64(time.Since(start).Microseconds()) / 1000 / float64(steps), nil
}

// nnAnchors reads the train_step lines of the anchor file: workload to eager ms.
func nnAnchors(path string) (map[string]float64, error) {
	out := map[string]float64{}
	err := readAnchors(path, func(line []byte) {
		var a struct {
			Name     string  `json:"name"`
			Workload string  `json:"workload"`
			MS       float64 `json:"ms"`
		}
		if json.Unmarshal(line, &a) == nil && a.Name == "train_step" {
			out[a.Workload] = a.MS
		}
	})
	return out, err
}
