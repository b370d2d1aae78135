package gpu

import (
	"encoding/binary"
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// Index ops: Gather, TakeAlong, Scatter and OneHot on shaders/src/index.comp, ScatterAdd
// on index_add.comp. Scatters are computed per output element (Scatter) or output row
// (ScatterAdd), each invocation looping over the updates that can land on it, so they
// need no float atomics (not universal in Vulkan) and add in the CPU's order: results
// are deterministic and equal to the CPU's.
// An index outside its axis reads as zero (Gather, TakeAlong) or is skipped (scatters),
// and the shader reports it through the device's error word (Recorder.addCheck): the
// run fails with the CPU backend's error, naming the node, the index and the axis size.
// OneHot leaves a row whose label lies outside [0, depth) zero, as the CPU does.

// numCodes are index.comp's codes for the types it adds.
var numCodes = map[tensor.DType]uint32{tensor.F32: 0, tensor.I32: 1, tensor.I64: 2}

func init() {
	ops[tensor.OpGather] = opImpl{typed: true, record: recordIndex, supports: func(_ *Device, n *tensor.Node) bool {
		return isIndex(n.Input(1)) && wordSized(n)
	}}
	ops[tensor.OpTakeAlong] = opImpl{typed: true, record: recordIndex, supports: func(_ *Device, n *tensor.Node) bool {
		return isIndex(n.Input(1)) && len(n.Shape()) <= maxRank && wordSized(n)
	}}
	ops[tensor.OpScatter] = opImpl{typed: true, record: recordIndex, supports: func(_ *Device, n *tensor.Node) bool {
		_, numeric := numCodes[n.DType()]
		add := n.Attr().(tensor.ScatterAttr).Reduce == tensor.ScatterReduceAdd
		return isIndex(n.Input(1)) && n.Input(2).DType() == n.DType() && (numeric || !add) &&
			len(n.Shape()) <= maxRank && wordSized(n)
	}}
	ops[tensor.OpScatterAdd] = opImpl{typed: true, record: recordScatterAdd, supports: func(_ *Device, n *tensor.Node) bool {
		_, numeric := numCodes[n.DType()]
		return numeric && isIndex(n.Input(1)) && n.Input(2).DType() == n.DType() && wordSized(n)
	}}
	ops[tensor.OpOneHot] = opImpl{typed: true, record: recordIndex, supports: func(_ *Device, n *tensor.Node) bool {
		return isIndex(n.Input(0)) && wordSized(n)
	}}
}

func isIndex(n *tensor.Node) bool { return n.DType() == tensor.I32 || n.DType() == tensor.I64 }

// indexPush holds one index.comp dispatch's buffers, push constants and constants.
type indexPush struct {
	m, inner, d, axis uint32
	a, b              [maxRank]uint32
	mode, num         uint32
	idx64, add        bool
	x, idx, upd       *Buffer
	esize, count      int
}

// rightAligned puts s into six slots, leading slots 1.
func rightAligned(s []int) (r [maxRank]uint32) {
	for i := range r {
		r[i] = 1
	}
	for i, v := range s {
		r[maxRank-len(s)+i] = uint32(v)
	}
	return r
}

func recordIndex(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	p := indexPush{esize: n.DType().Size(), count: n.Shape().Size()}
	x := n.Input(0).Shape()
	var check dataCheck
	switch n.Op() {
	case tensor.OpGather:
		axis := n.Attr().(tensor.AxisAttr).Axis
		p.mode, p.x, p.idx, p.upd = indexGather, in[0], in[1], in[0]
		p.m, p.inner, p.d = uint32(n.Input(1).Shape().Size()), uint32(x[axis+1:].Size()), uint32(x[axis])
		check = indexCheck(n, x[axis])
	case tensor.OpTakeAlong:
		axis := n.Attr().(tensor.AxisAttr).Axis
		p.mode, p.x, p.idx, p.upd = indexTakeAlong, in[0], in[1], in[0]
		p.a, p.b = rightAligned(n.Input(1).Shape()), rightAligned(x.Strides())
		p.axis, p.d = uint32(maxRank-len(x)+axis), uint32(x[axis])
		check = indexCheck(n, x[axis])
	case tensor.OpScatter:
		at := n.Attr().(tensor.ScatterAttr)
		p.mode, p.x, p.idx, p.upd = indexScatter, in[0], in[1], in[2]
		p.a, p.b = rightAligned(x), rightAligned(n.Input(1).Shape())
		p.axis = uint32(maxRank - len(x) + at.Axis)
		p.add, p.num = at.Reduce == tensor.ScatterReduceAdd, numCodes[n.DType()]
		check = indexCheck(n, x[at.Axis])
	case tensor.OpOneHot:
		p.mode, p.x, p.idx, p.upd = indexOneHot, in[0], in[0], in[0]
		p.d = uint32(n.Attr().(tensor.OneHotAttr).Depth)
		var one [8]byte
		copy(one[:], tensor.Scalar(n.DType(), 1).Bytes())
		p.a[0], p.a[1] = binary.LittleEndian.Uint32(one[:4]), binary.LittleEndian.Uint32(one[4:])
	}
	idxInput := 1
	if n.Op() == tensor.OpOneHot {
		idxInput = 0
	}
	p.idx64 = n.Input(idxInput).DType() == tensor.I64
	u0, units := unitSpan(p.esize, 0, p.count)
	if units == 0 {
		return nil
	}
	k, err := r.d.Kernel("index", 5, groupSize, uint32(p.esize), p.mode, b32(p.idx64), b32(p.add), p.num)
	if err != nil {
		return err
	}
	tag, errs := r.addCheck(check)
	w := []uint32{units, u0, uint32(p.count), f32Off(p.x), f32Off(p.idx), f32Off(p.upd), f32Off(out), p.m, p.inner, p.d, p.axis}
	w = append(append(append(w, p.a[:]...), p.b[:]...), tag)
	return r.Dispatch(k, gridFor(int(units)), words(w), n.Op().String(), In(p.x), In(p.idx), In(p.upd), Out(out), errs)
}

// indexCheck reports an index of node n outside an axis of size dim with the CPU
// backend's words.
func indexCheck(n *tensor.Node, dim int) dataCheck {
	return func(v int64) error {
		return fmt.Errorf("gpu: %v: index %d out of range for an axis of size %d", n, v, dim)
	}
}

// recordScatterAdd dispatches index_add.comp, one workgroup per output row.
func recordScatterAdd(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	axis := n.Attr().(tensor.AxisAttr).Axis
	x := n.Input(0).Shape()
	rows, inner := x[:axis+1].Size(), x[axis+1:].Size()
	if rows*inner == 0 {
		return nil
	}
	k, err := r.d.Kernel("index_add", 5, groupSize, numCodes[n.DType()], b32(n.Input(1).DType() == tensor.I64))
	if err != nil {
		return err
	}
	tag, errs := r.addCheck(indexCheck(n, x[axis]))
	w := []uint32{uint32(rows), uint32(n.Input(1).Shape().Size()), uint32(inner), uint32(x[axis]),
		f32Off(in[0]), f32Off(in[1]), f32Off(in[2]), f32Off(out), tag}
	return r.Dispatch(k, rowGrid(rows), words(w), "scatter_add", In(in[0]), In(in[1]), In(in[2]), Out(out), errs)
}
