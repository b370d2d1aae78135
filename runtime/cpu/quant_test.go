package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// quantWeights returns a random quantised matrix and its decoded values.
func (e *env) quantWeights(dt tensor.DType, rows, k int) (*tensor.Tensor, []float64) {
	x := make([]float32, rows*k)
	for i := range x {
		x[i] = float32(e.rng.NormFloat64())
	}
	f, _ := tensor.FromFloat32s(tensor.Shape{rows, k}, x)
	q, err := f.Quantize(dt)
	if err != nil {
		e.t.Fatal(err)
	}
	return q, q.Float64s()
}

// refProduct is the float64 product of op(a) @ op(b) for rank-2 a and b of any batch
// (b broadcast when it has none), from their values.
func refProduct(a, b []float64, as, bs tensor.Shape, transA, transB bool) []float64 {
	am, ak := as[len(as)-2], as[len(as)-1]
	bk, bn := bs[len(bs)-2], bs[len(bs)-1]
	m, k, n := am, ak, bn
	if transA {
		m, k = ak, am
	}
	if transB {
		n = bk
	}
	batch := max(as.Size()/(am*ak), bs.Size()/(bk*bn))
	out := make([]float64, 0, batch*m*n)
	for t := range batch {
		ao, bo := 0, 0
		if as.Size() > am*ak {
			ao = t * am * ak
		}
		if bs.Size() > bk*bn {
			bo = t * bk * bn
		}
		for i := range m {
			for j := range n {
				var s float64
				for p := range k {
					ai, bi := ao+i*ak+p, bo+p*bn+j
					if transA {
						ai = ao + p*ak + i
					}
					if transB {
						bi = bo + j*bn + p
					}
					av, bv := a[ai], b[bi]
					s += av * bv
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// TestQuantMatMul checks products with a quantised operand against the float64
// product of the decoded weights: matrix-vector and few-row products (fused dots),
// many rows (decoded panels and the SGEMM), batches, and the transposes the shape rule
// allows.
func TestQuantMatMul(t *testing.T) {
	cases := []struct {
		name     string
		xShape   []int // the f32 operand
		rows, k  int   // the quantised matrix
		qOnB     bool
		tA, tB   bool
		xIsTrans bool
	}{
		{"matvec", []int{1, 256}, 37, 256, true, false, true, false},
		{"few rows", []int{3, 512}, 20, 512, true, false, true, false},
		{"batch of rows", []int{2, 5, 256}, 33, 256, true, false, true, false},
		{"panel", []int{40, 256}, 70, 256, true, false, true, false},
		{"x transposed", []int{2, 256, 6}, 9, 256, true, true, true, false},
		{"w @ y vector", []int{256, 1}, 21, 256, false, false, false, false},
		{"w @ y", []int{256, 7}, 21, 256, false, false, false, false},
		{"w @ yT", []int{7, 256}, 21, 256, false, false, true, false},
		{"w @ batched y", []int{3, 256, 9}, 18, 256, false, false, false, false},
	}
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%v/%s", dt, c.name), func(t *testing.T) {
				e := newEnv(t)
				w, wv := e.quantWeights(dt, c.rows, c.k)
				x, xv := e.f32(c.xShape...)
				wn := e.g.Const(w)
				var out *tensor.Node
				var want []float64
				if c.qOnB {
					out = tensor.MatMulT(x, wn, c.tA, true)
					want = refProduct(xv, wv, x.Shape(), w.Shape(), c.tA, true)
				} else {
					out = tensor.MatMulT(wn, x, false, c.tB)
					want = refProduct(wv, xv, w.Shape(), x.Shape(), false, c.tB)
				}
				if out.DType() != tensor.F32 {
					t.Fatalf("product dtype %v", out.DType())
				}
				got := e.run(out)[0]
				check(t, c.name, got, out.Shape(), want, 2e-5*math.Sqrt(float64(c.k)))
			})
		}
	}
}

// TestQuantCast decodes quantised tensors to f32 and f16 and encodes f32 and bf16 ones,
// matching the host conversions (which package quant checks against its references).
func TestQuantCast(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Q4_0, tensor.Q8_0, tensor.Q4_K} {
		e := newEnv(t)
		w, wv := e.quantWeights(dt, 3, 512)
		wn := e.g.Const(w)
		x, xv := e.f32(2, 256)
		xh := tensor.Cast(x, tensor.BF16)
		outs := e.run(tensor.Cast(wn, tensor.F32), tensor.Cast(wn, tensor.F16), tensor.Cast(x, dt), tensor.Cast(xh, dt))
		check(t, dt.String()+" to f32", outs[0], w.Shape(), wv, 0)
		check(t, dt.String()+" to f16", outs[1], w.Shape(), wv, 1e-3)
		xt, _ := tensor.FromFloat64s(tensor.Shape{2, 256}, xv)
		want := xt.Convert(dt)
		if outs[2].DType() != dt || string(outs[2].Bytes()) != string(want.Bytes()) {
			t.Errorf("f32 to %v: blocks differ from the host encoder's", dt)
		}
		wantH := xt.Convert(tensor.BF16).Convert(dt)
		if string(outs[3].Bytes()) != string(wantH.Bytes()) {
			t.Errorf("bf16 to %v: blocks differ from the host encoder's", dt)
		}
	}
}
