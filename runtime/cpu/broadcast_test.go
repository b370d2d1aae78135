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
