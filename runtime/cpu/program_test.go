package cpu_test

import (
	"math"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// mlpStep builds one SGD training step of a small MLP with a softmax cross-entropy loss
// and returns the loss and the update nodes.
func mlpStep(e *env, batch, in, hidden, classes int) []*tensor.Node {
	x, _ := e.f32(batch, in)
	labels, _ := e.input(tensor.I64, 0, float64(classes), batch)
	w1, _ := e.variable("w1", in, hidden)
	b1, _ := e.variable("b1", hidden)
	w2, _ := e.variable("w2", hidden, classes)
	h := tensor.Relu(tensor.Add(tensor.MatMul(x, w1), b1))
	loss := tensor.SparseSoftmaxCrossEntropy(tensor.MatMul(h, w2), labels)
	params := []*tensor.Node{w1, b1, w2}
	grads := tensor.Grad(loss, params)
	lr := e.g.Scalar(tensor.F32, 0.5)
	outs := []*tensor.Node{loss}
	for i, p := range params {
		vel := e.g.Var(tensor.NewVariable("vel", tensor.New(tensor.F32, p.Shape()...)))
		outs = append(outs, tensor.SGDUpdate(p, grads[i], vel, lr, tensor.SGDAttr{Momentum: 0.5}))
	}
	return outs
}

// TestStepsAllocateNothing checks that running prepared small graphs (the batch-32
// sizes the closures are designed for) allocates no memory in this package's kernels.
func TestStepsAllocateNothing(t *testing.T) {
	e := newEnv(t)
	x, _ := e.f32(32, 64)
	b, _ := e.f32(64)
	idx, _ := e.input(tensor.I64, 0, 32, 8)
	w, _ := e.variable("w", 32, 64)
	vel, _ := e.variable("vel", 32, 64)
	h := tensor.Tanh(tensor.Relu(tensor.Add(x, b)))
	g := tensor.Where(tensor.Greater(h, tensor.ZerosLike(h)), tensor.Exp(h), h)
	col := tensor.Sum(g, []int{0}, true)
	t2 := tensor.Transpose(tensor.Concat(0, g, col), 0, 1)
	sl := tensor.Pad(tensor.Slice(t2, []int{1, 0}, []int{-1, 33}, []int{2, 3}), []int{1, 1}, []int{0, 2}, tensor.PadEdge, 0)
	rows := tensor.Gather(g, idx, 0)
	upd := tensor.SGDUpdate(w, g, vel, e.g.Scalar(tensor.F32, 0.1), tensor.SGDAttr{Momentum: 0.9})
	// Softmax over short contiguous rows, long strided ones and a log-softmax of those.
	soft := tensor.Add(tensor.LogSoftmax(g, 1), tensor.Transpose(tensor.Softmax(tensor.Transpose(g, 0, 1), 1), 0, 1))
	outs := []*tensor.Node{tensor.Mean(sl, nil, false), tensor.Max(rows, []int{1}, false), upd, tensor.Sum(soft, nil, false),
		tensor.Sum(tensor.LogSoftmax(g, 0), nil, false)}
	p, err := cputest.Prepare(outs, e.feeds)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	allocs := testing.AllocsPerRun(20, func() {
		if err := p.Run(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("a run allocates %v times", allocs)
	}
}

// TestThroughRuntime runs a training step through the runtime's scheduler on the CPU
// backend, which must agree with running the backend directly and keep the updated
// variables between runs.
func TestThroughRuntime(t *testing.T) {
	e := newEnv(t)
	outs := mlpStep(e, 8, 6, 5, 3)
	want, err := cputest.Run(outs[:1], e.feeds)
	if err != nil {
		t.Fatal(err)
	}
	r, err := runtime.New(runtime.Device("cpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	exe, err := r.Compile(outs)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Free()
	var losses []float64
	for range 3 {
		res, err := exe.Run(e.feeds)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, res[0].Float(0))
	}
	if !(math.Abs(losses[0]-want[0].Float(0)) <= 1e-6) {
		t.Errorf("first loss %v through the runtime, %v on the backend directly", losses[0], want[0].Float(0))
	}
	if !(losses[2] < losses[0]) {
		t.Errorf("losses %v do not fall: updates did not persist across runs", losses)
	}
}
