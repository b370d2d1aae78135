package cpu_test

import (
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestHalfTypesMatchF32 runs ops on F16 and BF16 data (through native byte-moving kernels
// or widening to F32) and compares with the same ops on F32 copies of the rounded data.
func TestHalfTypesMatchF32(t *testing.T) {
	type build func(e *env, x, y *tensor.Node) []*tensor.Node
	cases := []struct {
		name  string
		build build
	}{
		{"elementwise", func(e *env, x, y *tensor.Node) []*tensor.Node {
			return []*tensor.Node{tensor.Mul(tensor.Sigmoid(x), y), tensor.Maximum(x, y), tensor.Where(tensor.Less(x, y), x, y)}
		}},
		{"reductions", func(e *env, x, y *tensor.Node) []*tensor.Node {
			vals, idx := tensor.TopK(x, 2, 1, true)
			return []*tensor.Node{tensor.Mean(x, []int{0}, false), tensor.Variance(y, nil, false, 1),
				tensor.ArgMax(x, 1, false), tensor.CumSum(y, 1, false, false), vals, idx}
		}},
		{"layout", func(e *env, x, y *tensor.Node) []*tensor.Node {
			return []*tensor.Node{tensor.Concat(0, x, y), tensor.Pad(x, []int{1, 0}, []int{0, 2}, tensor.PadConstant, 0.5),
				tensor.Transpose(x, 0, 1), tensor.Tile(y, 2, 1), tensor.Slice(x, []int{3}, []int{0}, []int{-2})}
		}},
		{"index", func(e *env, x, y *tensor.Node) []*tensor.Node {
			idx := e.feed(tensor.I64, []float64{3, 0, 0}, 3)
			col := e.feed(tensor.I32, []float64{4, 1, 0, 2, 3, 3, 1, 0}, 4, 2)
			return []*tensor.Node{tensor.Gather(x, idx, 0), tensor.ScatterAdd(x, idx, tensor.Gather(y, idx, 0), 0),
				tensor.Scatter(x, col, tensor.TakeAlong(y, col, 1), 1, tensor.ScatterReduceAdd),
				tensor.OneHot(idx, 4, x.DType())}
		}},
		{"matmul", func(e *env, x, y *tensor.Node) []*tensor.Node {
			return []*tensor.Node{tensor.MatMulT(x, y, false, true), tensor.Cast(x, tensor.I32)}
		}},
		{"training", func(e *env, x, y *tensor.Node) []*tensor.Node {
			dt := x.DType()
			p := e.g.Var(tensor.NewVariable("p", tensor.New(dt, 4, 5)))
			v := e.g.Var(tensor.NewVariable("v", tensor.New(dt, 4, 5)))
			seed := e.feed(tensor.I32, []float64{7}, 1)
			lr := e.feed(dt, []float64{0.5}, 1)
			up := tensor.SGDUpdate(p, x, v, lr, tensor.SGDAttr{Momentum: 0.9, Nesterov: true})
			return []*tensor.Node{up, v, tensor.Dropout(y, seed, 0.5), tensor.DropoutMask(x, seed, 0.25)}
		}},
	}
	for _, c := range cases {
		ref := newEnv(t)
		xr := tensor.New(tensor.F32, 4, 5)
		yr := tensor.New(tensor.F32, 4, 5)
		for i := 0; i < 20; i++ {
			xr.SetFloat(i, ref.rng.Float64()*4-2)
			yr.SetFloat(i, ref.rng.Float64()*4-2)
		}
		for _, dt := range []tensor.DType{tensor.F16, tensor.BF16} {
			// Round the data to dt first, so both runs see the same values.
			xh, yh := xr.Convert(dt), yr.Convert(dt)
			ef := newEnv(t)
			xf, yf := ef.g.Input("x", tensor.F32, 4, 5), ef.g.Input("y", tensor.F32, 4, 5)
			ef.feeds[xf], ef.feeds[yf] = xh.Convert(tensor.F32), yh.Convert(tensor.F32)
			want := ef.run(c.build(ef, xf, yf)...)
			eh := newEnv(t)
			xn, yn := eh.g.Input("x", dt, 4, 5), eh.g.Input("y", dt, 4, 5)
			eh.feeds[xn], eh.feeds[yn] = xh, yh
			got := eh.run(c.build(eh, xn, yn)...)
			for i := range got {
				check(t, c.name+" "+dt.String(), got[i], want[i].Shape(), want[i].Float64s(), 2e-2)
			}
		}
	}
}
