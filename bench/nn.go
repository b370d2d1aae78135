package bench

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/gml-dev/gml/nn"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

func init() {
	register("nn", "nn training step time (ms) per workload against PyTorch eager on the same device", benchNN)
}

// nnWorkload is one model of the PyTorch anchor file: its builder and one batch of data.
type nnWorkload struct {
	name  string
	build func() *nn.Net
	data  func(r *rand.Rand) (x, y *tensor.Tensor)
}

// nnWorkloads mirror the training-step workloads of the PyTorch anchors
// (pytorch_h200.jsonl, bench_torch_cpu.py): adam 1e-3,
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

// ssmWorkloads are sequence classifiers on the fused state-space recurrences. PyTorch
// has no such ops in eager mode, so they have no anchor and their figures stand alone.
var ssmWorkloads = []nnWorkload{
	{"mamba_d128_L2_seq256_b16", func() *nn.Net {
		return ssmNet(func() nn.Layer { return nn.MambaBlock(16, 4, 2) })
	}, tokens(16, 256, 1000)},
	{"rwkv7_d128_h4_L2_seq256_b16", func() *nn.Net {
		return ssmNet(func() nn.Layer { return nn.RWKVBlock(7, nn.Heads(4), nn.FeedForward(512)) })
	}, tokens(16, 256, 1000)},
}

// ssmNet is a two-block sequence classifier of width 128 over 256 tokens.
func ssmNet(block func() nn.Layer) *nn.Net {
	return nn.Sequential(nn.Embedding(1000, 128, nn.InputShape(256)), block(), block(),
		nn.SequencePooling(), nn.Dense(10, nn.Activation("softmax")))
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
	refFile := fs.String("ref", "", "reference file (JSON lines) matched by workload and, on the CPU, thread count: bench_torch_cpu.py's output or ../shared/anchors/pytorch_cpu_xeon.jsonl for the CPU, an earlier gml run; default for the GPU: ../shared/anchors/pytorch_h200.jsonl, compared only on an H200")
	profile := fs.Bool("profile", false, "print a per-op profile of the timed steps to stderr (profiling slows the steps)")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile (go tool pprof) of the timed steps to this file")
	precision := fs.String("precision", "float32", "nn.MixedPrecision policy: float32, or mixed_bfloat16 (not comparable with the f32 PyTorch figures, so printed without a ratio)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *device != "cpu" && *device != "gpu" {
		return fmt.Errorf("-device %q: want cpu or gpu", *device)
	}
	workloads := append(slices.Clone(nnWorkloads), ssmWorkloads...)
	if *only != "" && !slices.ContainsFunc(workloads, func(w nnWorkload) bool { return w.name == *only }) {
		return fmt.Errorf("-case %q: no such workload", *only)
	}
	hardware, err := deviceName(*device)
	if err != nil {
		return err
	}
	threads := 0
	if *device == "cpu" {
		threads = parallel.Workers()
	}
	path := *refFile
	if path == "" && *device == "gpu" {
		path = anchorFile("pytorch_h200.jsonl")
	}
	var refs *references
	if path == "" {
		fmt.Fprintln(os.Stderr, "gml bench nn: no reference for the CPU: pass -ref FILE with PyTorch's figures of this machine (../shared/anchors/bench_torch_cpu.py prints them; ../shared/anchors/pytorch_cpu_xeon.jsonl holds the H200 host's)")
	} else if refs, err = readReferences(path); err != nil {
		if *refFile != "" {
			return fmt.Errorf("-ref: %w", err)
		}
		fmt.Fprintf(os.Stderr, "gml bench nn: no reference figures (%v); printing times alone\n", err)
	}
	mixed := *precision != "float32" && *precision != "f32"
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer stop()
	for _, w := range workloads {
		if *only != "" && w.name != *only {
			continue
		}
		ms, err := timeSteps(w, *device, *precision, *minTime, *profile)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		r := result{Bench: "nn", Case: w.name, Device: *device, Threads: threads, Value: round(ms, 3), Unit: "ms/step"}
		switch ref, err := refs.lookup(r, w.name, hardware); {
		case mixed:
			r.Case += "_" + *precision
		case err != nil:
			if refs != nil {
				fmt.Fprintf(os.Stderr, "gml bench nn: %s: no ratio: %v\n", w.name, err)
			}
		default:
			ref.value = round(ref.value, 3)
			r.compare(ref)
		}
		emit(r)
	}
	return nil
}

// deviceName names the device the benchmark runs on ("NVIDIA H200", "AMD EPYC ..."), so
// that a reference measured on another device is not compared with it.
func deviceName(device string) (string, error) {
	r, err := runtime.New(runtime.Device(device))
	if err != nil {
		return "", err
	}
	defer r.Close()
	return r.DeviceInfo().Name, nil
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
