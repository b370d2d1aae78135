package backendtest

import "github.com/gml-dev/gml/tensor"

// References of the layout and index ops: each output element is an input element (or
// a fill value) at coordinates the op computes.

func init() {
	defRef(func(n *tensor.Node, in []*Array) *Array {
		out := in[0].clone()
		out.Shape = n.Shape().Clone()
		return out
	}, tensor.OpReshape)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		perm := n.Attr().(tensor.PermuteAttr).Perm
		x := in[0]
		return mapInto(n, func(c []int) float64 {
			src := make([]int, len(c))
			for i, p := range perm {
				src[p] = c[i]
			}
			return x.Data[flat(src, x.Shape)]
		})
	}, tensor.OpPermute)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		x := in[0]
		return mapInto(n, func(c []int) float64 { return x.Data[broadcastIndex(c, x.Shape, n.Shape())] })
	}, tensor.OpExpand)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		axis := n.Attr().(tensor.AxisAttr).Axis
		return mapInto(n, func(c []int) float64 {
			k := c[axis]
			for _, x := range in {
				if k < x.Shape[axis] {
					src := append([]int(nil), c...)
					src[axis] = k
					return x.Data[flat(src, x.Shape)]
				}
				k -= x.Shape[axis]
			}
			panic("concat: coordinate past the inputs")
		})
	}, tensor.OpConcat)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.SliceAttr)
		x := in[0]
		return mapInto(n, func(c []int) float64 {
			src := make([]int, len(c))
			for a := range c {
				src[a] = at.Starts[a] + c[a]*at.Steps[a]
			}
			return x.Data[flat(src, x.Shape)]
		})
	}, tensor.OpSlice)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.PadAttr)
		x := in[0]
		return mapInto(n, func(c []int) float64 {
			src := make([]int, len(c))
			for a := range c {
				j, d := c[a]-at.Before[a], x.Shape[a]
				switch {
				case j >= 0 && j < d:
				case at.Mode == tensor.PadConstant:
					return float64(at.Value)
				case at.Mode == tensor.PadReflect:
					if j < 0 {
						j = -j
					}
					if j >= d {
						j = 2*(d-1) - j
					}
				default: // edge
					j = min(max(j, 0), d-1)
				}
				src[a] = j
			}
			return x.Data[flat(src, x.Shape)]
		})
	}, tensor.OpPad)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		x := in[0]
		return mapInto(n, func(c []int) float64 {
			src := make([]int, len(c))
			for a := range c {
				src[a] = c[a] % x.Shape[a]
			}
			return x.Data[flat(src, x.Shape)]
		})
	}, tensor.OpTile)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.DepthToSpaceAttr)
		x, b := in[0], at.Block
		cOut := n.Shape()[1]
		return mapInto(n, func(c []int) float64 {
			h, w := c[2]/b, c[3]/b
			i, j := c[2]%b, c[3]%b
			ch := (i*b+j)*cOut + c[1] // DCR: depth, then column, then row
			if at.Mode == "CRD" {
				ch = (c[1]*b+i)*b + j
			}
			return x.Data[flat([]int{c[0], ch, h, w}, x.Shape)]
		})
	}, tensor.OpDepthToSpace)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		axis := n.Attr().(tensor.AxisAttr).Axis
		x, idx := in[0], in[1]
		r := len(idx.Shape)
		return mapInto(n, func(c []int) float64 {
			k := index(idx.Data[flat(c[axis:axis+r], idx.Shape)], x.Shape[axis])
			src := append(append(append([]int(nil), c[:axis]...), k), c[axis+r:]...)
			return x.Data[flat(src, x.Shape)]
		})
	}, tensor.OpGather)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		axis := n.Attr().(tensor.AxisAttr).Axis
		x, idx := in[0], in[1]
		return mapInto(n, func(c []int) float64 {
			src := append([]int(nil), c...)
			src[axis] = index(idx.Data[flat(c, idx.Shape)], x.Shape[axis])
			return x.Data[flat(src, x.Shape)]
		})
	}, tensor.OpTakeAlong)
	// Scatter: updates in index order, so a later one replaces an earlier.
	defRef(func(n *tensor.Node, in []*Array) *Array {
		at := n.Attr().(tensor.ScatterAttr)
		x, idx, upd := in[0], in[1], in[2]
		out := x.clone()
		for i, v := range upd.Data {
			c := unflat(i, idx.Shape)
			c[at.Axis] = index(idx.Data[i], x.Shape[at.Axis])
			o := flat(c, x.Shape)
			if at.Reduce == tensor.ScatterReduceAdd {
				out.Data[o] += v
			} else {
				out.Data[o] = v
			}
		}
		return out
	}, tensor.OpScatter)
	defRef(func(n *tensor.Node, in []*Array) *Array {
		axis := n.Attr().(tensor.AxisAttr).Axis
		x, idx, upd := in[0], in[1], in[2]
		out := x.clone()
		r := len(idx.Shape)
		for i, v := range upd.Data {
			c := unflat(i, upd.Shape)
			k := index(idx.Data[flat(c[axis:axis+r], idx.Shape)], x.Shape[axis])
			dst := append(append(append([]int(nil), c[:axis]...), k), c[axis+r:]...)
			out.Data[flat(dst, x.Shape)] += v
		}
		return out
	}, tensor.OpScatterAdd)
	// OneHot leaves a row whose label is outside [0, depth) zero.
	defRef(func(n *tensor.Node, in []*Array) *Array {
		return mapInto(n, func(c []int) float64 {
			return b2f(in[0].Data[flat(c[:len(c)-1], in[0].Shape)] == float64(c[len(c)-1]))
		})
	}, tensor.OpOneHot)
}

// index resolves an index into an axis of size d: negative ones count from the end. An
// index outside the axis is a programming error of the case (the backends fail the run
// on it, which their own tests check).
func index(v float64, d int) int {
	k := int(v)
	if k < 0 {
		k += d
	}
	if k < 0 || k >= d {
		panic("index out of range")
	}
	return k
}
