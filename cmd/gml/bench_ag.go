package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/nn"
	"github.com/gml-dev/gml/tensor"
)

func init() {
	registerBench("ag", "ag training step time (ms): plain loop, warm trace cache and CaptureStep, against nn's compiled step", benchAG)
}

// agWorkload is an MLP trained with Adam 1e-3 on cross-entropy over 10 classes, the
// same model built in ag and in nn, with dropout after the first hidden layer where the
// nn workload of that name has it.
type agWorkload struct {
	name    string
	batch   int
	sizes   []int // input, hidden..., classes
	dropout float64
}

// agWorkloads mirror pytorch_h200.jsonl: mlp784_b32 is nn's Fashion-MNIST MLP
// (784-128 relu, dropout 0.3, 10); mlp64_b64_small is 64-64 relu-64 relu-10 at batch 64.
var agWorkloads = []agWorkload{
	{"mlp64_b64_small", 64, []int{64, 64, 64, 10}, 0},
	{"mlp784_b32", 32, []int{784, 128, 10}, 0.3},
}

// agMLP is the workload's model in ag.
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
	minTime := fs.Duration("time", 2*time.Second, "least time measured per workload and mode")
	only := fs.String("case", "", "run only this workload")
	anchors := fs.String("anchors", defaultAnchors(), "PyTorch anchor file (JSON lines)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	refs, err := nnAnchors(*anchors)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gml bench ag: no PyTorch anchors (%v)\n", err)
	}
	for _, w := range agWorkloads {
		if *only != "" && w.name != *only {
			continue
		}
		nnMS, steps, err := timeNNStep(w, *device, *minTime)
		if err != nil {
			return fmt.Errorf("%s (nn): %w", w.name, err)
		}
		emit(benchResult{Bench: "ag", Case: w.name + "_nn_compiled", Device: *device, Value: nnMS, Unit: "ms/step"})
		for _, mode := range []string{"loop", "cached", "capture"} {
			ms, err := timeAGSteps(w, *device, mode, steps)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", w.name, mode, err)
			}
			r := benchResult{Bench: "ag", Case: w.name + "_" + mode, Device: *device, Value: ms, Unit: "ms/step",
				Ref: "nn_compiled", RefValue: nnMS, Ratio: ms / nnMS}
			if ref, ok := refs[w.name]; ok && *device == "gpu" {
				r.Ref, r.RefValue, r.Ratio = "pytorch_eager_h200", ref, ms/ref
			}
			emit(r)
		}
	}
	return nil
}

// agBatch is one random batch of the workload, kept on the device as PyTorch's
// figures keep theirs.
func agBatch(w agWorkload) (x, y *tensor.Tensor) {
	return images(w.batch, w.sizes[0])(rand.New(rand.NewPCG(1, 2)))
}

// timeAGSteps times one training step (zero_grad, forward, loss, backward, Adam step,
// loss read) of the ag model, over as many steps as nn's reference ran: the batch is
// the same every step, so the loss falls towards zero and gradients become tiny, and
// subnormal arithmetic slows the CPU's updates as training goes on; equal step counts
// keep the comparison fair. "loop" compiles every step (the trace cache off),
// "cached" reuses the compiled step, "capture" replays a CaptureStep.
func timeAGSteps(w agWorkload, device, mode string, steps int) (ms float64, err error) {
	err = ag.Catch(func() {
		tp, err := ag.NewTape(ag.Device(device), ag.TraceCache(mode != "loop"))
		if err != nil {
			panic(&ag.Error{Op: "tape", Err: err})
		}
		defer tp.Free()
		ag.WithTape(tp, func() {
			ag.SetSeed(1)
			m := newAgMLP(w)
			opt := ag.Adam(ag.Parameters(m), 1e-3)
			xt, yt := agBatch(w)
			ag.KeepOnDevice(xt, yt)
			x, y := ag.Const(xt), ag.Const(yt)
			var step func() float64
			if mode == "capture" {
				cs := ag.CaptureStep(func(in ...*ag.Tensor) *ag.Tensor { return ag.CrossEntropy(m.Forward(in[0]), in[1]) }, opt)
				defer cs.Free()
				step = func() float64 { return cs.Step(x, y) }
			} else {
				step = func() float64 {
					opt.ZeroGrad()
					loss := ag.CrossEntropy(m.Forward(x), y)
					loss.Backward()
					opt.Step()
					return loss.Item()
				}
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

// timeNNStep times the same model's compiled training step in nn (Trainer.Step) over at
// least minTime and returns the time per step and the number of steps timed.
func timeNNStep(w agWorkload, device string, minTime time.Duration) (float64, int, error) {
	nn.SetSeed(1)
	var layers []nn.Layer
	for i := 1; i < len(w.sizes); i++ {
		var opts []nn.Option
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
	// nn.Adam's epsilon is Keras's 1e-7; ag's is PyTorch's 1e-8: the same arithmetic.
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
