package cpu

import (
	"math"
	"slices"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// GELU's backward as one kernel. The gradient tensor.Gelu's erf form builds is ten
// elementwise nodes, gy·(Scale(erf(x·c1)) + x·(exp(x²·c2)·c3)); fused as a group they
// still make ten passes over each block, two of them transcendental. A group that is
// exactly those nodes, with only the product read outside it, runs instead as
// vec.GeluGrad: one pass that reads x and gy once and keeps every intermediate value in
// registers, rounding each operation as its node does, so the bits are the group's.

// geluGradStep returns the step of group g when g is GELU's backward, else nil.
func (f *ewFuser) geluGradStep(g *ewGroup, steps map[*tensor.Node]func() error) func() error {
	if len(g.members) != 10 {
		return nil
	}
	in := make(map[int]bool, len(g.members))
	for _, m := range g.members {
		in[m] = true
	}
	last := g.members[len(g.members)-1]
	final := f.nodes[last]
	member := func(n *tensor.Node, op tensor.Op) bool {
		i, ok := f.index[n]
		return ok && in[i] && n.Op() == op && n.Shape().Equal(final.Shape())
	}
	outside := func(n *tensor.Node) bool {
		i, ok := f.index[n]
		return !(ok && in[i]) && n.DType() == tensor.F32 && n.Shape().Equal(final.Shape())
	}
	// split returns the inputs of a binary node as (the one ok accepts, the other).
	split := func(n *tensor.Node, ok func(*tensor.Node) bool) (*tensor.Node, *tensor.Node) {
		a, b := n.Input(0), n.Input(1)
		if ok(a) {
			return a, b
		}
		if ok(b) {
			return b, a
		}
		return nil, nil
	}
	if final.Op() != tensor.OpMul {
		return nil
	}
	sum, gy := split(final, func(n *tensor.Node) bool { return member(n, tensor.OpAdd) })
	if sum == nil || !outside(gy) {
		return nil
	}
	cdf, xp := split(sum, func(n *tensor.Node) bool { return member(n, tensor.OpScale) })
	if cdf == nil || !member(xp, tensor.OpMul) {
		return nil
	}
	pdf, x := split(xp, func(n *tensor.Node) bool { return member(n, tensor.OpMul) })
	if pdf == nil || !outside(x) {
		return nil
	}
	erf := cdf.Input(0)
	if !member(erf, tensor.OpErf) || !member(erf.Input(0), tensor.OpMul) {
		return nil
	}
	var c vec.GeluGradConsts
	var ok [3]bool
	c.C1, ok[0] = scaledBy(erf.Input(0), x)
	ex, k3 := split(pdf, func(n *tensor.Node) bool { return member(n, tensor.OpExp) })
	if ex == nil || !member(ex.Input(0), tensor.OpMul) {
		return nil
	}
	c.C3, ok[1] = scalarConst(k3)
	sq, k2 := split(ex.Input(0), func(n *tensor.Node) bool { return member(n, tensor.OpSquare) })
	if sq == nil || sq.Input(0) != x {
		return nil
	}
	c.C2, ok[2] = scalarConst(k2)
	at := cdf.Attr().(tensor.ScaleAttr)
	c.Scale, c.Bias = at.Scale, at.Bias
	// vec.GeluGrad's preconditions: its assembly tests x, not x·C1, for NaN, and clamps
	// a NaN x·C1 as a number where Erf's NaN check would give NaN.
	if !ok[0] || !ok[1] || !ok[2] || c.C1 == 0 || math.IsInf(float64(c.C1), 0) || math.IsNaN(float64(c.C1)) ||
		!(c.C2 < 0) || math.IsInf(float64(c.C2), 0) {
		return nil
	}
	// The ten nodes are the group's members, and only the product leaves it.
	for _, m := range g.members {
		if m != last && f.escaping(m, in) {
			return nil
		}
	}
	dx := f32s(f.mem[last].out)
	xs := f32s(f.mem[f.index[sq]].in[0])
	gys := f32s(f.mem[last].in[slices.Index(final.Inputs(), gy)])
	produce := func(lo, hi int) { vec.GeluGrad(&c, dx[lo:hi], xs[lo:hi], gys[lo:hi]) }
	busy := [][]byte{f.mem[last].out, f.mem[f.index[sq]].in[0], f.mem[last].in[0], f.mem[last].in[1]}
	shape := final.Shape()
	blk := 0
	if len(shape) > 0 {
		blk = blockRows(shape[len(shape)-1]) * shape[len(shape)-1]
	}
	if sums := f.takeColumnSums(last, []*tensor.Node{final}, shape, blk, busy, steps); sums != nil {
		// The bias gradient folded as dx is written: items of the sums' blocks of
		// rows, each in stretches of whole rows (and vectors) that stay in cache.
		items := func(lo, hi int) {
			for it := lo; it < hi; it++ {
				sums.item(it, blk, produce)
			}
		}
		return func() error { parallel.For(sums.items(), 1, items); sums.merge(); return nil }
	}
	units := (len(dx) + vecUnit - 1) / vecUnit
	body := func(lo, hi int) { produce(lo*vecUnit, min(hi*vecUnit, len(dx))) }
	return func() error { parallel.For(units, elemGrain/4/vecUnit, body); return nil }
}

// scaledBy returns c where n is x·c or c·x for a scalar constant c.
func scaledBy(n, x *tensor.Node) (float32, bool) {
	switch {
	case n.Input(0) == x:
		return scalarConst(n.Input(1))
	case n.Input(1) == x:
		return scalarConst(n.Input(0))
	}
	return 0, false
}

// scalarConst returns the value of an F32 constant of one element.
func scalarConst(n *tensor.Node) (float32, bool) {
	if n.Op() != tensor.OpConst || n.DType() != tensor.F32 || n.Shape().Size() != 1 || n.Value() == nil {
		return 0, false
	}
	return n.Value().Float32s()[0], true
}
