// Package matrix multiplies plain matrices on any gml device, as ggmlR's helpers do:
// MatMul (a·b), Crossprod (aᵀ·a) and Tcrossprod (a·aᵀ), for gonum matrices and
// [][]float64 alike.
//
// Precision "f32" (the default), "f16" or "bf16" runs on the runtime's device (GPU when
// there is one, see Device) with float32 accumulation; "f64" runs on the CPU through
// gonum's BLAS and matches gonum exactly, since no gml device computes in float64.
package matrix

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/mat"

	_ "github.com/gml-dev/gml/backends" // link the CPU and GPU backends
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Option configures a multiplication.
type Option func(*config)

type config struct {
	device    string
	precision tensor.DType
	f64       bool
	err       error // an option's bad argument, reported by the call
}

// Device picks where to multiply: "auto" (the default: a GPU when there is one),
// "gpu" or "cpu".
func Device(name string) Option { return func(c *config) { c.device = name } }

// Precision picks the element type the device computes with: "f32" (default), "f16",
// "bf16" (float32 accumulation in both), or "f64" (gonum on the CPU).
func Precision(name string) Option {
	return func(c *config) {
		if name == "f64" || name == "float64" {
			c.f64 = true
			return
		}
		dt, err := tensor.ParseDType(name)
		if err != nil || !dt.IsFloat() {
			c.err = fmt.Errorf("unknown precision %q (want f32, f16, bf16 or f64)", name)
			return
		}
		c.precision = dt
	}
}

// MatMul returns a·b. Each operand may be a gonum mat.Matrix or a [][]float64.
func MatMul(a, b any, opts ...Option) (*mat.Dense, error) {
	return multiply("MatMul", a, b, false, false, false, opts)
}

// Crossprod returns aᵀ·a.
func Crossprod(a any, opts ...Option) (*mat.Dense, error) {
	return multiply("Crossprod", a, a, true, true, false, opts)
}

// Tcrossprod returns a·aᵀ.
func Tcrossprod(a any, opts ...Option) (*mat.Dense, error) {
	return multiply("Tcrossprod", a, a, true, false, true, opts)
}

// Rows converts a result back to [][]float64.
func Rows(m mat.Matrix) [][]float64 {
	r, c := m.Dims()
	out := make([][]float64, r)
	for i := range out {
		out[i] = make([]float64, c)
		for j := range out[i] {
			out[i][j] = m.At(i, j)
		}
	}
	return out
}

func asMatrix(fn, name string, v any) (mat.Matrix, error) {
	switch m := v.(type) {
	case mat.Matrix:
		return m, nil
	case [][]float64:
		if len(m) == 0 {
			return nil, fmt.Errorf("matrix: %s: %s has no rows", fn, name)
		}
		d := mat.NewDense(len(m), len(m[0]), nil)
		for i, row := range m {
			if len(row) != len(m[0]) {
				return nil, fmt.Errorf("matrix: %s: %s row %d has %d values, row 0 has %d", fn, name, i, len(row), len(m[0]))
			}
			d.SetRow(i, row)
		}
		return d, nil
	}
	return nil, fmt.Errorf("matrix: %s: %s is a %T; want a gonum mat.Matrix or [][]float64", fn, name, v)
}

// multiply computes op(a)·op(b); same says b is a, which is then uploaded once.
func multiply(fn string, av, bv any, same, transA, transB bool, opts []Option) (*mat.Dense, error) {
	c := config{device: "auto", precision: tensor.F32}
	for _, o := range opts {
		o(&c)
	}
	if c.err != nil {
		return nil, fmt.Errorf("matrix: %s: %w", fn, c.err)
	}
	a, err := asMatrix(fn, "a", av)
	if err != nil {
		return nil, err
	}
	b, err := asMatrix(fn, "b", bv)
	if err != nil {
		return nil, err
	}
	ar, ac := a.Dims()
	br, bc := b.Dims()
	ta, tb := a, b
	if transA {
		ta, ar, ac = a.T(), ac, ar
	}
	if transB {
		tb, br, bc = b.T(), bc, br
	}
	if ac != br {
		return nil, fmt.Errorf("matrix: %s: inner dimensions differ: %dx%d times %dx%d", fn, ar, ac, br, bc)
	}
	if c.f64 {
		var out mat.Dense
		out.Mul(ta, tb)
		return &out, nil
	}
	rt, err := runtimeFor(c.device)
	if err != nil {
		return nil, fmt.Errorf("matrix: %s: %w", fn, err)
	}
	g := tensor.NewGraph()
	at := tensor.FromDense(a).Convert(c.precision)
	bt := tensor.FromDense(b).Convert(c.precision)
	an := g.Input("a", c.precision, at.Shape()...)
	bn := an
	feeds := map[*tensor.Node]*tensor.Tensor{an: at}
	if !same {
		bn = g.Input("b", c.precision, bt.Shape()...)
		feeds[bn] = bt
	}
	prod := tensor.MatMulT(an, bn, transA, transB)
	if c.precision != tensor.F32 {
		prod = tensor.Cast(prod, tensor.F32)
	}
	exe, err := rt.Compile([]*tensor.Node{prod})
	if err != nil {
		return nil, fmt.Errorf("matrix: %s: %w", fn, err)
	}
	defer exe.Free()
	out, err := exe.Run(feeds)
	if err != nil {
		return nil, fmt.Errorf("matrix: %s: %w", fn, err)
	}
	return out[0].Dense()
}

var (
	runtimesMu sync.Mutex
	runtimes   = map[string]*runtime.Runtime{}
)

// runtimeFor returns one runtime per device name, made on first use.
func runtimeFor(device string) (*runtime.Runtime, error) {
	runtimesMu.Lock()
	defer runtimesMu.Unlock()
	if r, ok := runtimes[device]; ok {
		return r, nil
	}
	r, err := runtime.New(runtime.Device(device))
	if err != nil {
		return nil, err
	}
	runtimes[device] = r
	return r, nil
}
