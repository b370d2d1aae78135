package cpu_test

import (
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestRandomBroadcasts checks the broadcast walk on random shape pairs of ranks 0 to 5
// with size-1 and missing axes, including tensors large enough to split across workers.
func TestRandomBroadcasts(t *testing.T) {
	e := newEnv(t)
	for trial := 0; trial < 60; trial++ {
		rank := e.rng.IntN(6)
		out := make(tensor.Shape, rank)
		for i := range out {
			out[i] = 1 + e.rng.IntN(5)
		}
		if trial%10 == 0 && rank > 0 {
			out[rank-1] = 5000 // large rows
		}
		pick := func() tensor.Shape {
			drop := e.rng.IntN(rank + 1)
			s := out[drop:].Clone()
			for i := range s {
				if e.rng.IntN(3) == 0 {
					s[i] = 1
				}
			}
			return s
		}
		sa, sb, sc := pick(), pick(), pick()
		ee := newEnv(t)
		a, av := ee.f32(sa...)
		b, bv := ee.f32(sb...)
		c, cv := ee.f32(sc...)
		full := broadcastShape(broadcastShape(sa, sb), sc)
		res := ee.run(tensor.Sub(a, b), tensor.Where(tensor.Greater(c, tensor.Full(ee.g, tensor.F32, nil, 0)), a, b))
		sub := make([]float64, full.Size())
		where := make([]float64, full.Size())
		ab := broadcastShape(sa, sb)
		for i := range where {
			if i < ab.Size() {
				sub[i] = av[bcast(i, sa, ab)] - bv[bcast(i, sb, ab)]
			}
			x, y := av[bcast(i, sa, full)], bv[bcast(i, sb, full)]
			where[i] = y
			if cv[bcast(i, sc, full)] > 0 {
				where[i] = x
			}
		}
		name := sa.String() + sb.String() + sc.String()
		check(t, "sub "+name, res[0], ab, sub[:ab.Size()], 1e-6)
		check(t, "where "+name, res[1], full, where, 0)
	}
}

// TestRepeatedRows checks binary ops where one operand is a row repeated down a batch
// (a bias: the vec.ArithRows path for rows of 16 or more, the walk for shorter ones),
// in both operand orders, on ragged batch sizes large enough to split across workers.
func TestRepeatedRows(t *testing.T) {
	for _, n := range []int{1, 7, 33, 257, 1100} {
		for _, c := range []struct{ full, row tensor.Shape }{
			{tensor.Shape{n, 3, 40}, tensor.Shape{40}},
			{tensor.Shape{n, 3, 40}, tensor.Shape{3, 40}},
			{tensor.Shape{n, 33}, tensor.Shape{1, 33}},
			{tensor.Shape{n, 7}, tensor.Shape{7}},
		} {
			e := newEnv(t)
			x, xv := e.f32(c.full...)
			r, rv := e.f32(c.row...)
			res := e.run(tensor.Add(x, r), tensor.Sub(r, x), tensor.Mul(x, r), tensor.Div(r, x))
			want := make([][]float64, 4)
			for i, v := range xv {
				w := rv[i%len(rv)]
				want[0] = append(want[0], float64(float32(v)+float32(w)))
				want[1] = append(want[1], float64(float32(w)-float32(v)))
				want[2] = append(want[2], float64(float32(v)*float32(w)))
				want[3] = append(want[3], float64(float32(w)/float32(v)))
			}
			for k, op := range []string{"add", "sub", "mul", "div"} {
				check(t, op+c.full.String()+c.row.String(), res[k], c.full, want[k], 0)
			}
		}
	}
}
