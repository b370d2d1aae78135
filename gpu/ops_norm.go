package gpu

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Softmax and log-softmax (norm_softmax.comp), layer and RMS norm (norm.comp).

func init() {
	softmaxOK := func(_ *Device, n *tensor.Node) bool { return planSoftmax(n).feasible }
	ops[tensor.OpSoftmax] = opImpl{record: recordSoftmax, supports: softmaxOK}
	ops[tensor.OpLogSoftmax] = opImpl{record: recordSoftmax, supports: softmaxOK}
	normOK := func(_ *Device, n *tensor.Node) bool { _, _, ok := normRows(n); return ok }
	ops[tensor.OpLayerNorm] = opImpl{record: recordNorm, supports: normOK}
	ops[tensor.OpRMSNorm] = opImpl{record: recordNorm, supports: normOK}
}

// softmaxPlan is the [outer, n, inner] view of a softmax and, with a mask, the mask's
// strides: along the axis, over the collapsed inner axes, and over up to four collapsed
// outer axes.
type softmaxPlan struct {
	outer, n, inner  int
	mstep, minner    int
	odims, ostr      [4]uint32
	masked, feasible bool
}

func planSoftmax(n *tensor.Node) softmaxPlan {
	s := n.Input(0).Shape()
	axis := n.Attr().(tensor.SoftmaxAttr).Axis
	if axis < 0 {
		axis += len(s)
	}
	if axis < 0 || axis >= len(s) || s[axis] == 0 {
		return softmaxPlan{}
	}
	p := softmaxPlan{outer: s[:axis].Size(), n: s[axis], inner: s[axis+1:].Size(), feasible: true}
	for i := range p.odims {
		p.odims[i] = 1
	}
	if len(n.Inputs()) == 1 {
		return p
	}
	p.masked = true
	st := axisStrides(s, n.Input(1).Shape())
	p.mstep = st[axis]
	// The inner axes must collapse to one stride: x is dense there, so the mask must be
	// dense (or broadcast) over them as one block.
	var innerDims, innerSt []int
	for j := axis + 1; j < len(s); j++ {
		if s[j] != 1 {
			innerDims, innerSt = append(innerDims, s[j]), append(innerSt, st[j])
		}
	}
	for j := 0; j+1 < len(innerDims); j++ {
		if innerSt[j] != innerSt[j+1]*innerDims[j+1] {
			p.feasible = false
		}
	}
	if len(innerSt) > 0 {
		p.minner = innerSt[len(innerSt)-1]
	}
	var dims, strides []int
	for j := 0; j < axis; j++ {
		if s[j] == 1 {
			continue
		}
		if k := len(dims) - 1; k >= 0 && strides[k] == st[j]*s[j] {
			dims[k] *= s[j]
			strides[k] = st[j]
			continue
		}
		dims, strides = append(dims, s[j]), append(strides, st[j])
	}
	if len(dims) > 4 {
		p.feasible = false
		return p
	}
	for i := range dims {
		j := 4 - len(dims) + i
		p.odims[j], p.ostr[j] = uint32(dims[i]), uint32(strides[i])
	}
	return p
}

func recordSoftmax(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	p := planSoftmax(n)
	scale := n.Attr().(tensor.SoftmaxAttr).Scale
	if scale == 0 {
		scale = 1
	}
	mask := in[0]
	if p.masked {
		mask = in[1]
	}
	k, err := r.d.Kernel("norm_softmax", 3, groupSize, b32(n.Op() == tensor.OpLogSoftmax), b32(p.masked))
	if err != nil {
		return err
	}
	w := []uint32{uint32(p.outer * p.inner), uint32(p.n), uint32(p.inner), f32Off(in[0]), f32Off(out), f32Off(mask),
		math.Float32bits(scale), uint32(p.mstep), uint32(p.minner)}
	w = append(w, p.odims[:]...)
	w = append(w, p.ostr[:]...)
	return r.Dispatch(k, rowGrid(p.outer*p.inner), words(w), n.Op().String(), In(in[0]), In(mask), Out(out))
}

// normRows views a normalisation as rows over its trailing axes.
func normRows(n *tensor.Node) (rows, length int, ok bool) {
	s := n.Input(0).Shape()
	axes := n.Attr().(tensor.NormAttr).Axes
	if len(axes) == 0 {
		return 0, 0, false
	}
	for i, a := range axes {
		if a != len(s)-len(axes)+i {
			return 0, 0, false
		}
	}
	length = s[len(s)-len(axes):].Size()
	if length == 0 {
		return 0, 0, false
	}
	for _, g := range n.Inputs()[1:] {
		if g.Shape().Size() != length {
			return 0, 0, false
		}
	}
	return s.Size() / length, length, true
}

func recordNorm(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	rows, length, _ := normRows(n)
	gamma, beta := in[0], in[0]
	if len(in) > 1 {
		gamma = in[1]
	}
	if len(in) > 2 {
		beta = in[2]
	}
	k, err := r.d.Kernel("norm", 4, groupSize, b32(n.Op() == tensor.OpRMSNorm), b32(len(in) > 1), b32(len(in) > 2))
	if err != nil {
		return err
	}
	eps := n.Attr().(tensor.NormAttr).Eps
	push := words([]uint32{uint32(rows), uint32(length), f32Off(in[0]), f32Off(gamma), f32Off(beta), f32Off(out), math.Float32bits(eps)})
	return r.Dispatch(k, rowGrid(rows), push, n.Op().String(), In(in[0]), In(gamma), In(beta), Out(out))
}
