package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/internal/backendtest"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// env builds one test graph with random inputs and remembers their values in float64.
type env struct {
	t     *testing.T
	g     *tensor.Graph
	feeds map[*tensor.Node]*tensor.Tensor
	rng   *rand.Rand
}

func newEnv(t *testing.T) *env {
	return &env{t: t, g: tensor.NewGraph(), feeds: map[*tensor.Node]*tensor.Tensor{}, rng: rand.New(rand.NewPCG(1, 2))}
}

// input adds an input of dtype dt with values drawn uniformly from [lo, hi) (integers
// truncated) and returns the node and the values as stored.
func (e *env) input(dt tensor.DType, lo, hi float64, shape ...int) (*tensor.Node, []float64) {
	n := e.g.Input("x", dt, shape...)
	t := tensor.New(dt, shape...)
	for i := 0; i < t.Len(); i++ {
		t.SetFloat(i, lo+(hi-lo)*e.rng.Float64())
	}
	e.feeds[n] = t
	return n, t.Float64s()
}

// f32 adds an F32 input with values in [-2, 2).
func (e *env) f32(shape ...int) (*tensor.Node, []float64) {
	return e.input(tensor.F32, -2, 2, shape...)
}

// feed adds an input holding exactly vals.
func (e *env) feed(dt tensor.DType, vals []float64, shape ...int) *tensor.Node {
	n := e.g.Input("x", dt, shape...)
	t, err := tensor.FromFloat64sAs(dt, tensor.Shape(shape), vals)
	if err != nil {
		e.t.Fatal(err)
	}
	e.feeds[n] = t
	return n
}

// run computes outs on the CPU backend and fails the test on error.
func (e *env) run(outs ...*tensor.Node) []*tensor.Tensor {
	e.t.Helper()
	res, err := cputest.Run(outs, e.feeds)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// check compares got with want elementwise within atol + rtol·|want| (NaN matches NaN).
func check(t *testing.T, name string, got *tensor.Tensor, shape tensor.Shape, want []float64, tol float64) {
	t.Helper()
	if !got.Shape().Equal(shape) {
		t.Errorf("%s: shape %v, want %v", name, got.Shape(), shape)
		return
	}
	if got.Len() != len(want) {
		t.Errorf("%s: %d values, want %d", name, got.Len(), len(want))
		return
	}
	for i, w := range want {
		g := got.Float(i)
		if math.IsNaN(w) && math.IsNaN(g) {
			continue
		}
		if math.IsInf(w, 0) && g == w {
			continue
		}
		if !(math.Abs(g-w) <= tol+tol*math.Abs(w)) {
			t.Errorf("%s: element %d = %v, want %v (tolerance %g)", name, i, g, w, tol)
			return
		}
	}
}

// unflat converts a row-major flat index into coordinates of shape s.
func unflat(i int, s tensor.Shape) []int {
	c := make([]int, len(s))
	for a := len(s) - 1; a >= 0; a-- {
		c[a] = i % s[a]
		i /= s[a]
	}
	return c
}

// flat converts coordinates into a row-major flat index of shape s.
func flat(c []int, s tensor.Shape) int {
	i := 0
	for a := range s {
		i = i*s[a] + c[a]
	}
	return i
}

// bcast returns the flat index into src (broadcast to out) of output element i.
func bcast(i int, src, out tensor.Shape) int {
	c := unflat(i, out)
	sc := c[len(out)-len(src):]
	sc2 := make([]int, len(src))
	for a := range src {
		if src[a] != 1 {
			sc2[a] = sc[a]
		}
	}
	return flat(sc2, src)
}

// broadcastShape is the NumPy broadcast of a and b (the test cases always broadcast).
func broadcastShape(a, b tensor.Shape) tensor.Shape {
	s, _ := tensor.Broadcast(a, b)
	return s
}

// reference evaluates outs from the env's feeds with internal/backendtest's float64
// interpreter (unrounded f32, as a sum of exact products), the references every backend
// is checked against.
func (e *env) reference(outs ...*tensor.Node) [][]float64 {
	e.t.Helper()
	feeds := map[*tensor.Node]*backendtest.Array{}
	for n, t := range e.feeds {
		feeds[n] = backendtest.FromTensor(t)
	}
	ip := backendtest.NewInterpreter()
	ip.ExactF32 = true
	res, err := ip.Eval(outs, feeds)
	if err != nil {
		e.t.Fatal(err)
	}
	want := make([][]float64, len(res))
	for i, r := range res {
		want[i] = r.Data
	}
	return want
}
