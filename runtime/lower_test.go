package runtime_test

import (
	"math"
	"slices"
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// lacking is a device without kernels for some ops: a CPU backend of its own that
// declines them. Registered as "gpu" in this test binary (which links no real GPU
// backend), it plays a GPU that lacks fused kernels.
type lacking struct {
	runtime.Backend
	without []tensor.Op
}

func (l *lacking) Name() string { return "lacking" }

func (l *lacking) Supports(n *tensor.Node) bool {
	return !slices.Contains(l.without, n.Op()) && l.Backend.Supports(n)
}

// without is what the registered device lacks; each test sets it before opening one.
var without []tensor.Op

func init() {
	runtime.Register("gpu", 1, func() (runtime.Backend, error) { return &lacking{cpu.New(), without}, nil })
}

// open returns a runtime on a device lacking ops.
func open(t *testing.T, ops ...tensor.Op) *runtime.Runtime {
	t.Helper()
	if err := runtime.Shutdown(); err != nil { // forget the device of the previous test
		t.Fatal(err)
	}
	without = ops
	rt, err := runtime.New(runtime.Device("gpu"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func feed(t *testing.T, n *tensor.Node) *tensor.Tensor {
	t.Helper()
	v := make([]float64, n.Shape().Size())
	for i := range v {
		v[i] = math.Sin(float64(3*i+1)) * 3
	}
	x, err := tensor.FromFloat64sAs(n.DType(), n.Shape(), v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// runOn compiles outputs on rt with profiling and returns the results, the fallbacks
// and the ops that ran.
func runOn(t *testing.T, rt *runtime.Runtime, outputs []*tensor.Node, feeds map[*tensor.Node]*tensor.Tensor) ([]*tensor.Tensor, []*tensor.Node, []tensor.Op) {
	t.Helper()
	rt.Profile(true)
	exe, err := rt.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Free()
	res, err := exe.Run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	var ran []tensor.Op
	for _, row := range rt.ProfileReport().Rows {
		ran = append(ran, row.Op)
	}
	return res, exe.Fallbacks(), ran
}

func checkClose(t *testing.T, what string, got, want *tensor.Tensor) {
	t.Helper()
	if !got.AllClose(want, 1e-5, 1e-6) {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

// TestLowerRunsDecompositionOnTheDevice: a device without a softmax kernel computes
// softmax through its decomposition rather than leaving it to the CPU.
func TestLowerRunsDecompositionOnTheDevice(t *testing.T) {
	rt := open(t, tensor.OpSoftmax, tensor.OpLayerNorm)
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 3, 5)
	s := tensor.Softmax(x, 1)
	y := tensor.Sum(tensor.LayerNorm(s, nil, nil, nil, 1e-5), []int{1}, false)
	feeds := map[*tensor.Node]*tensor.Tensor{x: feed(t, x)}
	got, fallbacks, ran := runOn(t, rt, []*tensor.Node{s, y}, feeds)
	if len(fallbacks) != 0 {
		t.Errorf("fallbacks %v: the device runs the decompositions' primitives", fallbacks)
	}
	if slices.Contains(ran, tensor.OpSoftmax) || slices.Contains(ran, tensor.OpLayerNorm) || !slices.Contains(ran, tensor.OpExp) {
		t.Errorf("ops run %v: want exp and no softmax or layer_norm kernel", ran)
	}
	want, err := cputest.Run([]*tensor.Node{s, y}, feeds)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "softmax, fetched", got[0], want[0])
	checkClose(t, "sum of its layer norm", got[1], want[1])
}

// TestLowerRecursesIntoDecompositions: attention's decomposition holds a softmax, which
// the device lacks too: both are lowered.
func TestLowerRecursesIntoDecompositions(t *testing.T) {
	rt := open(t, tensor.OpAttention, tensor.OpSoftmax)
	g := tensor.NewGraph()
	q, k, v := g.Input("q", tensor.F32, 2, 3, 4), g.Input("k", tensor.F32, 2, 5, 4), g.Input("v", tensor.F32, 2, 5, 2)
	y := tensor.Attention(q, k, v, nil, tensor.AttentionAttr{Causal: true})
	feeds := map[*tensor.Node]*tensor.Tensor{q: feed(t, q), k: feed(t, k), v: feed(t, v)}
	got, fallbacks, ran := runOn(t, rt, []*tensor.Node{y}, feeds)
	if len(fallbacks) != 0 || slices.Contains(ran, tensor.OpAttention) || slices.Contains(ran, tensor.OpSoftmax) {
		t.Errorf("fallbacks %v, ops run %v: want attention and its softmax decomposed on the device", fallbacks, ran)
	}
	want, err := cputest.Run([]*tensor.Node{y}, feeds)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "attention", got[0], want[0])
}

// TestLowerFallsBackWithoutThePrimitives: without exp the device cannot run softmax's
// decomposition either, so softmax falls back to the CPU whole; and a lowered node read
// on the CPU (by a relu the device lacks) is copied there like any value.
func TestLowerFallsBackWithoutThePrimitives(t *testing.T) {
	rt := open(t, tensor.OpSoftmax, tensor.OpExp, tensor.OpRelu)
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 4, 6)
	s := tensor.Softmax(x, 0)
	feeds := map[*tensor.Node]*tensor.Tensor{x: feed(t, x)}
	got, fallbacks, _ := runOn(t, rt, []*tensor.Node{s}, feeds)
	if len(fallbacks) != 1 || fallbacks[0] != s {
		t.Errorf("fallbacks %v, want the softmax", fallbacks)
	}
	want, err := cputest.Run([]*tensor.Node{s}, feeds)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "softmax on the CPU", got[0], want[0])

	rt = open(t, tensor.OpLayerNorm, tensor.OpRelu)
	n := tensor.LayerNorm(x, nil, nil, nil, 1e-5)
	r := tensor.Relu(n)
	got, fallbacks, _ = runOn(t, rt, []*tensor.Node{r}, feeds)
	if len(fallbacks) != 1 || fallbacks[0] != r {
		t.Errorf("fallbacks %v, want only the relu", fallbacks)
	}
	want, err = cputest.Run([]*tensor.Node{r}, feeds)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "relu of a decomposed layer norm", got[0], want[0])
}

// TestLowerResultReadThroughTheFusedNode: the readers of a lowered layer norm name the
// layer norm, not the last node of its decomposition, so a backend that leaves values
// only its segment reads unwritten (the CPU's fusion) must learn from Segment.Escapes
// that the decomposition's result is read.
func TestLowerResultReadThroughTheFusedNode(t *testing.T) {
	rt := open(t, tensor.OpLayerNorm)
	g := tensor.NewGraph()
	x, gamma := g.Input("x", tensor.F32, 6, 40), g.Input("gamma", tensor.F32, 40)
	y := tensor.Sum(tensor.LayerNorm(tensor.Exp(x), gamma, nil, nil, 1e-5), []int{0}, false)
	feeds := map[*tensor.Node]*tensor.Tensor{x: feed(t, x), gamma: feed(t, gamma)}
	got, _, _ := runOn(t, rt, []*tensor.Node{y}, feeds)
	want, err := cputest.Run([]*tensor.Node{y}, feeds)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "sum over rows of a decomposed layer norm", got[0], want[0])
}
