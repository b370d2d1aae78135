package gpu

import (
	"encoding/binary"

	"github.com/gml-dev/gml/tensor"
)

// Layout ops of every dtype on shaders/src/layout.comp: Slice, Pad, Tile, Concat and
// DepthToSpace (and Assign's copy, registered in ops_training.go). Their shaders store whole 32-bit words (layout_common.glsl),
// so Bool and half types need no 8- or 16-bit storage feature.

// Modes of layout.comp.
const (
	layoutAffine uint32 = iota
	layoutPadConstant
	layoutPadReflect
	layoutPadEdge
	layoutTile
	layoutWindow
	layoutPlace
)

func init() {
	ops[tensor.OpSlice] = opImpl{typed: true, record: recordLayout, supports: layoutSupported}
	ops[tensor.OpPad] = opImpl{typed: true, record: recordLayout, supports: layoutSupported}
	ops[tensor.OpTile] = opImpl{typed: true, record: recordLayout, supports: layoutSupported}
	ops[tensor.OpDepthToSpace] = opImpl{typed: true, record: recordLayout, supports: layoutSupported}
	ops[tensor.OpConcat] = opImpl{typed: true, record: recordConcat, supports: func(_ *Device, n *tensor.Node) bool {
		for _, x := range n.Inputs() {
			if x.DType() != n.DType() {
				return false
			}
		}
		return wordSized(n)
	}}
	// Reshape (a copy, when the runtime does not alias it), Expand and Permute are
	// strided copies on elementwise.comp's copy code.
	ops[tensor.OpReshape] = opImpl{typed: true, record: recordReshape, supports: func(_ *Device, n *tensor.Node) bool { return wordSized(n) }}
	ops[tensor.OpExpand] = opImpl{record: recordExpand, supports: func(_ *Device, n *tensor.Node) bool {
		_, _, ok := broadcastStrides(n.Shape(), n.Input(0).Shape())
		return ok
	}}
	ops[tensor.OpPermute] = opImpl{record: recordPermute, supports: func(_ *Device, n *tensor.Node) bool {
		_, _, ok := permuteStrides(n)
		return ok
	}}
}

// wordSized reports whether a node's element counts fit the shaders' 32-bit indices.
func wordSized(n *tensor.Node) bool {
	if n.Shape().Size() >= 1<<31 {
		return false
	}
	for _, x := range n.Inputs() {
		if x.Shape().Size() >= 1<<31 {
			return false
		}
	}
	return true
}

// layoutAxis is one axis of a layout.comp copy: the output extent, the input's element
// stride, and (pad, tile, window modes) the input extent and the leading pad.
type layoutAxis struct {
	dim, stride, inDim, before int
}

// layoutPlan is one layout.comp dispatch: src[base + sum s_d*stride_d] to the output.
type layoutPlan struct {
	mode uint32
	base int
	fill uint64 // constant pad: the fill value's bits in the output dtype
	axes []layoutAxis
}

func layoutSupported(_ *Device, n *tensor.Node) bool {
	p, ok := layoutPlanOf(n)
	return ok && len(p.axes) <= maxRank && wordSized(n)
}

// layoutPlanOf maps Slice, Pad, Tile and DepthToSpace onto layout.comp.
func layoutPlanOf(n *tensor.Node) (layoutPlan, bool) {
	x, o := n.Input(0).Shape(), n.Shape()
	xs := x.Strides()
	var p layoutPlan
	switch at := n.Attr().(type) {
	case tensor.SliceAttr:
		for i := range o {
			if o[i] > 0 {
				p.base += at.Starts[i] * xs[i]
			}
			p.axes = append(p.axes, layoutAxis{dim: o[i], stride: xs[i] * at.Steps[i], inDim: o[i]})
		}
	case tensor.PadAttr:
		p.mode = map[tensor.PadMode]uint32{tensor.PadConstant: layoutPadConstant, tensor.PadReflect: layoutPadReflect, tensor.PadEdge: layoutPadEdge}[at.Mode]
		var fill [8]byte
		copy(fill[:], tensor.Scalar(n.DType(), float64(at.Value)).Bytes())
		p.fill = binary.LittleEndian.Uint64(fill[:])
		for i := range o {
			p.axes = append(p.axes, layoutAxis{dim: o[i], stride: xs[i], inDim: x[i], before: at.Before[i]})
		}
	case tensor.TileAttr:
		p.mode = layoutTile
		for i := range o {
			p.axes = append(p.axes, layoutAxis{dim: o[i], stride: xs[i], inDim: x[i]})
		}
	case tensor.DepthToSpaceAttr:
		// (N, C*b*b, H, W) read as (N, C, H, b, W, b), the CPU backend's view.
		b := at.Block
		nn, c, h, w := o[0], o[1], o[2]/b, o[3]/b
		hw := h * w
		sC, sB1, sB2 := hw, b*c*hw, c*hw
		if at.Mode == "CRD" {
			sC, sB1, sB2 = b*b*hw, b*hw, hw
		}
		dims := []int{nn, c, h, b, w, b}
		for i, st := range []int{c * b * b * hw, sC, w, sB1, 1, sB2} {
			p.axes = append(p.axes, layoutAxis{dim: dims[i], stride: st, inDim: dims[i]})
		}
	default:
		return p, false
	}
	// An output axis of extent 1 that reads input coordinate 0 adds nothing.
	kept := p.axes[:0]
	for _, a := range p.axes {
		if a.dim != 1 || a.before != 0 || (p.mode != layoutAffine && p.mode != layoutTile && a.inDim != 1) {
			kept = append(kept, a)
		}
	}
	p.axes = kept
	return p, true
}

func recordLayout(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	p, _ := layoutPlanOf(n)
	count := n.Shape().Size()
	return r.layoutCopy(n.Op().String(), p, n.DType().Size(), count, 0, count, in[0], out)
}

// recordConcat writes each input into its part of the output. Inputs of 4- and 8-byte
// elements are placed element by element; with 1- and 2-byte elements one word may hold
// elements of two inputs, so each input's dispatch rewrites the words of its window,
// keeping the bits outside it (the recorder orders the dispatches' writes).
func recordConcat(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	axis := n.Attr().(tensor.AxisAttr).Axis
	s := n.Shape()
	outer, along, inner := s[:axis].Size(), s[axis], s[axis+1:].Size()
	count, esize := s.Size(), n.DType().Size()
	at := 0
	for k, x := range n.Inputs() {
		size := x.Shape()[axis]
		if size == 0 || outer*inner == 0 {
			continue
		}
		var err error
		if esize >= 4 {
			p := layoutPlan{mode: layoutPlace, base: at * inner, axes: []layoutAxis{
				{dim: outer, stride: along * inner}, {dim: size, stride: inner}, {dim: inner, stride: 1},
			}}
			m := x.Shape().Size()
			err = r.layoutCopy("concat", p, esize, m, 0, m, in[k], out)
		} else {
			p := layoutPlan{mode: layoutWindow, axes: []layoutAxis{
				{dim: outer, stride: size * inner, inDim: outer},
				{dim: along, stride: inner, inDim: size, before: at},
				{dim: inner, stride: 1, inDim: inner},
			}}
			lo, hi := at*inner, (outer-1)*along*inner+(at+size)*inner
			err = r.layoutCopy("concat", p, esize, count, lo, hi, in[k], out)
		}
		if err != nil {
			return err
		}
		at += size
	}
	return nil
}

// unitSpan returns the first unit and the unit count covering elements [lo, hi) of
// elements of esize bytes (layout_common.glsl stores 4/esize small elements per word).
func unitSpan(esize, lo, hi int) (u0, units uint32) {
	per := 1
	if esize < 4 {
		per = 4 / esize
	}
	first, end := lo/per, (hi+per-1)/per
	return uint32(first), uint32(max(end-first, 0))
}

// zero sets count elements of esize bytes in out to zero bits: a constant pad of an
// empty input, so that nothing is read.
func (r *Recorder) zero(label string, esize, count int, out *Buffer) error {
	p := layoutPlan{mode: 1, axes: []layoutAxis{{dim: count}}}
	return r.layoutCopy(label, p, esize, count, 0, count, out, out)
}

// layoutCopy records one layout.comp dispatch over output elements [lo, hi) of count
// (in place mode: over input elements [lo, hi) of count).
func (r *Recorder) layoutCopy(label string, p layoutPlan, esize, count, lo, hi int, src, out *Buffer) error {
	u0, units := unitSpan(esize, lo, hi)
	if units == 0 {
		return nil
	}
	var dims, stride, inDim, before [maxRank]uint32
	for i := range dims {
		dims[i], inDim[i] = 1, 1
	}
	for i, a := range p.axes {
		j := maxRank - len(p.axes) + i
		dims[j], stride[j], inDim[j], before[j] = uint32(a.dim), uint32(int32(a.stride)), uint32(a.inDim), uint32(a.before)
	}
	w := []uint32{units, u0, uint32(count), f32Off(src), f32Off(out), uint32(int32(p.base)), uint32(p.fill), uint32(p.fill >> 32)}
	w = append(append(append(append(w, dims[:]...), stride[:]...), inDim[:]...), before[:]...)
	// The shader walks only the plan's axes when they cover exactly count elements.
	axes, covered := uint32(max(len(p.axes), 1)), 1
	for _, a := range p.axes {
		covered *= a.dim
	}
	if covered != count {
		axes = maxRank
	}
	k, err := r.d.Kernel("layout", 2, groupSize, uint32(esize), p.mode, axes)
	if err != nil {
		return err
	}
	return r.Dispatch(k, gridFor(int(units)), words(w), label, In(src), Out(out))
}

// recordReshape copies only when the runtime gave the result its own buffer (it
// normally aliases the input's).
func recordReshape(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	count := n.Shape().Size()
	if out == in[0] || count == 0 {
		return nil
	}
	if n.DType() != tensor.F32 {
		p := layoutPlan{axes: []layoutAxis{{dim: count, stride: 1, inDim: count}}}
		return r.layoutCopy("reshape", p, n.DType().Size(), count, 0, count, in[0], out)
	}
	push := eltPush{n: uint32(count), offA: f32Off(in[0]), offB: f32Off(in[0]), offC: f32Off(out)}
	return r.elementwise(elementwiseCopy, true, push, "reshape", in[0], in[0], out)
}

// recordExpand broadcasts its input to the output shape (a strided copy).
func recordExpand(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	dims, st, _ := broadcastStrides(n.Shape(), n.Input(0).Shape())
	return r.stridedCopy(n, dims, st[0], out, in[0])
}

// recordPermute reorders axes: output axis i walks input axis Perm[i].
func recordPermute(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	dims, strides, _ := permuteStrides(n)
	return r.stridedCopy(n, dims, strides, out, in[0])
}

// permuteStrides gives the output's axes (size-1 axes dropped) with the input's element
// stride along each.
func permuteStrides(n *tensor.Node) ([]int, []int, bool) {
	s := n.Input(0).Shape()
	perm := n.Attr().(tensor.PermuteAttr).Perm
	dense := make([]int, len(s))
	stride := 1
	for i := len(s) - 1; i >= 0; i-- {
		dense[i] = stride
		stride *= s[i]
	}
	var dims, st []int
	for _, p := range perm {
		if s[p] != 1 {
			dims, st = append(dims, s[p]), append(st, dense[p])
		}
	}
	return dims, st, len(dims) <= maxRank
}

func (r *Recorder) stridedCopy(n *tensor.Node, dims, strides []int, out, src *Buffer) error {
	push := eltPush{n: uint32(n.Shape().Size()), offA: f32Off(src), offB: f32Off(src), offC: f32Off(out)}
	if push.n == 0 {
		return nil
	}
	push.setShape(dims, [][]int{strides})
	return r.elementwise(elementwiseCopy, false, push, n.Op().String(), src, src, out)
}
