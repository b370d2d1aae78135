package backendtest

import (
	"math"
	"slices"
	"sort"

	"github.com/gml-dev/gml/tensor"
)

// References of the reductions, the arg-reductions, cumulative sums and top-k.

func init() {
	fold := func(f func(g []float64, at tensor.ReduceAttr) float64) refFunc {
		return func(n *tensor.Node, in []*Array) *Array {
			at := n.Attr().(tensor.ReduceAttr)
			return reduceGroups(n, in[0], at.Axes, func(g []float64) float64 { return f(g, at) })
		}
	}
	defRef(fold(func(g []float64, _ tensor.ReduceAttr) float64 { return sum(g) }), tensor.OpSum)
	defRef(fold(func(g []float64, _ tensor.ReduceAttr) float64 { return sum(g) / float64(len(g)) }), tensor.OpMean)
	// Max and Min propagate NaN, as NumPy does.
	defRef(fold(func(g []float64, _ tensor.ReduceAttr) float64 { return extremum(g, 1) }), tensor.OpMax)
	defRef(fold(func(g []float64, _ tensor.ReduceAttr) float64 { return extremum(g, -1) }), tensor.OpMin)
	defRef(fold(func(g []float64, _ tensor.ReduceAttr) float64 {
		p := 1.0
		for _, v := range g {
			p *= v
		}
		return p
	}), tensor.OpProd)
	defRef(fold(func(g []float64, at tensor.ReduceAttr) float64 {
		mean := sum(g) / float64(len(g))
		ss := 0.0
		for _, v := range g {
			ss += (v - mean) * (v - mean)
		}
		return ss / float64(len(g)-at.Correction)
	}), tensor.OpVar)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.ArgReduceAttr)
		sign := 1.0
		if n.Op() == tensor.OpArgMin {
			sign = -1
		}
		return reduceGroups(n, in[0], []int{at.Axis}, func(g []float64) float64 {
			// The first extremum; a NaN counts as the extreme and the first one wins.
			best := 0
			for i, v := range g {
				if math.IsNaN(g[best]) {
					break
				}
				if math.IsNaN(v) || sign*v > sign*g[best] {
					best = i
				}
			}
			return float64(best)
		})
	}, tensor.OpArgMax, tensor.OpArgMin)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.CumSumAttr)
		out := newArray(n.DType(), n.Shape())
		eachLine(in[0].Shape, at.Axis, func(idx []int) {
			if at.Reverse {
				slices.Reverse(idx)
			}
			s := 0.0
			for _, i := range idx {
				v := in[0].Data[i]
				if !at.Exclusive {
					s += v
				}
				out.Data[i] = s
				if at.Exclusive {
					s += v
				}
			}
		})
		return out
	}, tensor.OpCumSum)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.TopKAttr)
		out := newArray(n.DType(), n.Shape())
		// Sorted descending (ascending when !Largest), ties by lower index, NaN largest.
		eachLine(in[0].Shape, at.Axis, func(idx []int) {
			order := make([]int, len(idx))
			for j := range order {
				order[j] = j
			}
			key := func(j int) float64 {
				v := in[0].Data[idx[j]]
				if math.IsNaN(v) {
					v = math.Inf(1)
				}
				if !at.Largest {
					v = -v
				}
				return v
			}
			sort.SliceStable(order, func(a, b int) bool { return key(order[a]) > key(order[b]) })
			s := in[0].Shape.Clone()
			s[at.Axis] = at.K
			for r := 0; r < at.K; r++ {
				c := unflat(idx[0], in[0].Shape)
				c[at.Axis] = r
				out.Data[flat(c, s)] = float64(order[r])
			}
		})
		return out
	}, tensor.OpTopK)
}

func sum(g []float64) float64 {
	s := 0.0
	for _, v := range g {
		s += v
	}
	return s
}

// extremum is the largest (sign 1) or smallest (sign -1) element, NaN if any is.
func extremum(g []float64, sign float64) float64 {
	best := math.Inf(-int(sign))
	for _, v := range g {
		if math.IsNaN(v) {
			return v
		}
		if sign*v > sign*best {
			best = v
		}
	}
	return best
}

// reduceGroups folds, with f, the elements of x that share their coordinates off axes
// (every axis when axes is empty) into node n's output, kept dims or not.
func reduceGroups(n *tensor.Node, x *Array, axes []int, f func([]float64) float64) *Array {
	if len(axes) == 0 {
		for a := range x.Shape {
			axes = append(axes, a)
		}
	}
	var kept tensor.Shape
	for a, d := range x.Shape {
		if !slices.Contains(axes, a) {
			kept = append(kept, d)
		}
	}
	groups := make([][]float64, kept.Size())
	for i, v := range x.Data {
		c := unflat(i, x.Shape)
		var k []int
		for a := range x.Shape {
			if !slices.Contains(axes, a) {
				k = append(k, c[a])
			}
		}
		g := flat(k, kept)
		groups[g] = append(groups[g], v)
	}
	out := newArray(n.DType(), n.Shape())
	for i := range out.Data {
		out.Data[i] = f(groups[i])
	}
	return out
}

// eachLine calls f with the flat indices of every line of shape s along axis, in order.
func eachLine(s tensor.Shape, axis int, f func(idx []int)) {
	if len(s) == 0 {
		f([]int{0})
		return
	}
	outer, d, inner := s[:axis].Size(), s[axis], s[axis+1:].Size()
	for o := 0; o < outer; o++ {
		for q := 0; q < inner; q++ {
			idx := make([]int, d)
			for j := range idx {
				idx[j] = (o*d+j)*inner + q
			}
			if d > 0 {
				f(idx)
			}
		}
	}
}
