package bench

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/nn"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

func init() {
	register("ag", "ag training step time (ms): plain loop, warm trace cache and CaptureStep, against nn's compiled step and PyTorch eager", benchAG)
}

// agWorkload is an MLP trained with Adam 1e-3 on cross-entropy over 10 classes, built
// alike in ag and in nn (whose compiled step is the reference measured in the same
// run), with dropout after the first hidden layer where nn's workload of that name has
// it.
type agWorkload struct {
	name    string
	batch   int
	sizes   []int // input, hidden..., classes
	dropout float64
}

// agWorkloads mirror the PyTorch anchors: mlp784_b32 is nn's Fashion-MNIST MLP
// (784-128 relu, dropout 0.3, 10); mlp64_b64_small is 64-64 relu-64 relu-10 at batch 64.
var agWorkloads = []agWorkload{
	{"mlp64_b64_small", 64, []int{64, 64, 64, 10}, 0},
	{"mlp784_b32", 32, []int{784, 128, 10}, 0.3},
}

// agModes are the ways an ag loop runs: "loop" records and compiles every step (the
// trace cache off), "cached" reuses the compiled step (the cache warm), "capture"
// replays a CaptureStep.
var agModes = []string{"loop", "cached", "capture"}

// agMLP is a workload's model in ag.
type agMLP struct {
	Layers  []*ag.Linear
	dropout float64
}

func newAgMLP(w agWorkload) *agMLP {
	m := &agMLP{dropout: w.dropout}
	for i := 0; i+1 < len(w.sizes); i++ {
		m.Layers = append(m.Layers, ag.NewLinear(w.sizes[i], w.sizes[i+1]))
	}
	return m
}

func (m *agMLP) Forward(x *ag.Tensor) *ag.Tensor {
	for i, l := range m.Layers {
		x = l.Forward(x)
		if i+1 < len(m.Layers) {
			x = ag.Relu(x)
			if i == 0 && m.dropout > 0 {
				x = ag.Dropout(x, m.dropout)
			}
		}
	}
	return x
}

func benchAG(args []string) error {
	fs := flag.NewFlagSet("bench ag", flag.ContinueOnError)
	device := fs.String("device", "cpu", "cpu or gpu")
	minTime := fs.Duration("time", 2*time.Second, "least time nn's reference is timed per workload; the ag modes run as many steps")
	only := fs.String("case", "", "run only this workload")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile (go tool pprof) of the timed ag steps to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *device != "cpu" && *device != "gpu" {
		return fmt.Errorf("-device %q: want cpu or gpu", *device)
	}
	if *only != "" && !slices.ContainsFunc(agWorkloads, func(w agWorkload) bool { return w.name == *only }) {
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
	var torch *references
	if *device == "gpu" {
		if torch, err = readReferences(anchorFile("pytorch_h200.jsonl")); err != nil {
			fmt.Fprintf(os.Stderr, "gml bench ag: no PyTorch figures (%v)\n", err)
		}
	}
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer stop()
	for _, w := range agWorkloads {
		if *only != "" && w.name != *only {
			continue
		}
		nnMS, steps, err := timeNNStep(w, *device, *minTime)
		if err != nil {
			return fmt.Errorf("%s (nn): %w", w.name, err)
		}
		nnRef := reference{name: "gml nn compiled step (same run)", threads: threads, value: round(nnMS, 3), unit: "ms/step"}
		emit(result{Bench: "ag", Case: w.name + "_nn", Device: *device, Threads: threads, Value: nnRef.value, Unit: "ms/step"})
		for _, mode := range agModes {
			ms, err := timeAGSteps(w, *device, mode, steps)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", w.name, mode, err)
			}
			r := result{Bench: "ag", Case: w.name + "_" + mode, Device: *device, Threads: threads, Value: round(ms, 3), Unit: "ms/step"}
			// On the H200, PyTorch eager (loss read back each step, as here) is the
			// reference; elsewhere nn's compiled step of this run.
			probe := r
			probe.Bench = "nn"
			if ref, err := torch.lookup(probe, w.name, hardware); err == nil {
				r.compare(ref)
			} else {
				r.compare(nnRef)
			}
			emit(r)
		}
	}
	return nil
}

// agBatch is one random batch of the workload, kept on the device as PyTorch's figures
// keep theirs.
func agBatch(w agWorkload) (x, y *tensor.Tensor) {
	return images(w.batch, w.sizes[0])(rand.New(rand.NewPCG(1, 2)))
}

// timeAGSteps returns the mean time of one training step (zero_grad, forward, loss,
// backward, Adam step, loss read back) of the ag model in a mode, over steps steps
// after three warm-up steps. The batch is the same every step, so the loss falls
// towards zero and tiny gradients slow the CPU's updates (subnormal arithmetic) as
// training goes on: running as many steps as nn's reference keeps them comparable.
func timeAGSteps(w agWorkload, device, mode string, steps int) (ms float64, err error) {
	tp, err := ag.NewTape(ag.Device(device), ag.TraceCache(mode != "loop"))
	if err != nil {
		return 0, err
	}
	defer tp.Free()
	err = ag.Catch(func() {
		ag.WithTape(tp, func() {
			ag.SetSeed(1)
			m := newAgMLP(w)
			opt := ag.Adam(ag.Parameters(m), 1e-3)
			xt, yt := agBatch(w)
			ag.KeepOnDevice(xt, yt)
			x, y := ag.Const(xt), ag.Const(yt)
			step := func() float64 {
				opt.ZeroGrad()
				loss := ag.CrossEntropy(m.Forward(x), y)
				loss.Backward()
				opt.Step()
				return loss.Item()
			}
			if mode == "capture" {
				cs := ag.CaptureStep(func(in ...*ag.Tensor) *ag.Tensor { return ag.CrossEntropy(m.Forward(in[0]), in[1]) }, opt)
				defer cs.Free()
				step = func() float64 { return cs.Step(x, y) }
			}
			for i := 0; i < 3; i++ {
				step()
			}
			start := time.Now()
			for i := 0; i < steps; i++ {
				step()
			}
			ms = float64(time.Since(start).Microseconds()) / 1000 / float64(steps)
		})
	})
	return ms, err
}

// timeNNStep times the same model's compiled training step in nn (Trainer.Step, loss
// read back) over at least minTime and returns the time per step and the steps timed.
func timeNNStep(w agWorkload, device string, minTime time.Duration) (float64, int, error) {
	nn.SetSeed(1)
	var layers []nn.Layer
	for i := 1; i < len(w.sizes); i++ {
		var opts []nn.LayerOption
		if i == 1 {
			opts = append(opts, nn.InputShape(w.sizes[0]))
		}
		if i+1 < len(w.sizes) {
			opts = append(opts, nn.Activation("relu"))
		} else {
			opts = append(opts, nn.Activation("softmax"))
		}
		layers = append(layers, nn.Dense(w.sizes[i], opts...))
		if i == 1 && w.dropout > 0 {
			layers = append(layers, nn.Dropout(w.dropout))
		}
	}
	m := nn.Sequential(layers...)
	// nn.Adam's epsilon is Keras's 1e-7, ag's PyTorch's 1e-8: the same arithmetic.
	if err := m.Compile(nn.Adam(1e-3), nn.Loss("sparse_categorical_crossentropy"), nn.Device(device)); err != nil {
		return 0, 0, err
	}
	defer m.Free()
	tr, err := m.NewTrainer()
	if err != nil {
		return 0, 0, err
	}
	x, y := agBatch(w)
	if err := m.KeepOnDevice(x, y); err != nil {
		return 0, 0, err
	}
	for i := 0; i < 3; i++ {
		if _, err := tr.Step(x, y); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	n := 0
	for time.Since(start) < minTime || n < 5 {
		if _, err := tr.Step(x, y); err != nil {
			return 0, 0, err
		}
		n++
	}
	return float64(time.Since(start).Microseconds()) / 1000 / float64(n), n, nil
}
