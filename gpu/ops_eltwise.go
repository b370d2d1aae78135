package gpu

import (
	"encoding/binary"
	"math"

	"github.com/gml-dev/gml/tensor"
)

const (
	maxRank   = 6
	groupSize = 256
	maxGroups = 65535
)

func init() {
	// Every unary and binary op the op table puts on elementwise.comp; the shader's op
	// codes are generated (opcodes.go).
	for op := tensor.Op(1); int(op) < tensor.NumOps; op++ {
		if op.GPU().Shader != "elementwise" {
			continue
		}
		switch op.Kind() {
		case tensor.KindUnary:
			ops[op] = opImpl{record: recordUnary}
		case tensor.KindBinary:
			ops[op] = opImpl{record: recordBinary, supports: func(_ *Device, n *tensor.Node) bool {
				_, _, ok := broadcastStrides(n.Shape(), n.Input(0).Shape(), n.Input(1).Shape())
				return ok
			}}
		}
	}

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

// eltPush is the push-constant block of elementwise.comp.
type eltPush struct {
	n, offA, offB, offC uint32
	p0, p1              float32
	dims, sa, sb        [maxRank]uint32
}

func (p eltPush) bytes() []byte {
	w := []uint32{p.n, p.offA, p.offB, p.offC, math.Float32bits(p.p0), math.Float32bits(p.p1)}
	w = append(w, p.dims[:]...)
	w = append(w, p.sa[:]...)
	w = append(w, p.sb[:]...)
	return words(w)
}

// setShape places collapsed axes right-aligned in the six slots (unused slots have
// extent 1) with the strides of one or two operands.
func (p *eltPush) setShape(dims []int, st [][]int) {
	for i := range p.dims {
		p.dims[i] = 1
	}
	for i := range dims {
		j := maxRank - len(dims) + i
		p.dims[j] = uint32(dims[i])
		for k, dst := range []*[maxRank]uint32{&p.sa, &p.sb}[:len(st)] {
			dst[j] = uint32(st[k][i])
		}
	}
}

func words(w []uint32) []byte {
	b := make([]byte, 4*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func f32Off(b *Buffer) uint32 { return uint32(b.off / 4) }

// gridFor returns the workgroup count of a grid-stride loop over n elements.
func gridFor(n int) [3]uint32 {
	g := (n + groupSize - 1) / groupSize
	return [3]uint32{uint32(max(1, min(g, maxGroups))), 1, 1}
}

// usedAxes counts the right-aligned axes in use (at least one): the broadcasting
// shaders are specialised for it, so that they divide by the inner axes only.
func usedAxes(dims [maxRank]uint32) uint32 {
	for i, d := range dims {
		if d != 1 {
			return uint32(maxRank - i)
		}
	}
	return 1
}

// elementwise dispatches elementwise.comp over push.n elements.
func (r *Recorder) elementwise(code uint32, contig bool, push eltPush, label string, a, b, c *Buffer) error {
	k, err := r.d.Kernel("elementwise", 3, groupSize, code, b32(contig), usedAxes(push.dims))
	if err != nil {
		return err
	}
	return r.Dispatch(k, gridFor(int(push.n)), push.bytes(), label, In(a), In(b), Out(c))
}

func recordUnary(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	code := opCode[n.Op()]
	push := eltPush{n: uint32(n.Shape().Size()), offA: f32Off(in[0]), offB: f32Off(in[0]), offC: f32Off(out)}
	switch at := n.Attr().(type) {
	case tensor.AlphaAttr:
		push.p0 = at.Alpha
	case tensor.GeluAttr:
		if at.Form != tensor.GeluErf {
			code = elementwiseGeluTanh
		}
	case tensor.HardSigmoidAttr:
		push.p0, push.p1 = at.Alpha, at.Beta
	case tensor.ClampAttr:
		push.p0, push.p1 = at.Min, at.Max
	case tensor.ScaleAttr:
		push.p0, push.p1 = at.Scale, at.Bias
	}
	if push.n == 0 {
		return nil
	}
	return r.elementwise(code, true, push, n.Op().String(), in[0], in[0], out)
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

func recordBinary(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	dims, st, ok := broadcastStrides(n.Shape(), n.Input(0).Shape(), n.Input(1).Shape())
	if !ok {
		return ErrUnsupported
	}
	push := eltPush{n: uint32(n.Shape().Size()), offA: f32Off(in[0]), offB: f32Off(in[1]), offC: f32Off(out)}
	if push.n == 0 {
		return nil
	}
	contig := len(dims) <= 1 && st[0][0] == 1 && st[1][0] == 1
	push.setShape(dims, st)
	return r.elementwise(opCode[n.Op()], contig, push, n.Op().String(), in[0], in[1], out)
}

// axisStrides gives, per axis of the output shape out, the element stride of a dense
// tensor of shape s broadcast to it (0 on broadcast and missing leading axes).
func axisStrides(out, s tensor.Shape) []int {
	st := make([]int, len(out))
	stride := 1
	for i := len(out) - 1; i >= 0; i-- {
		j := i - (len(out) - len(s))
		if j < 0 || s[j] == 1 {
			continue
		}
		st[i] = stride
		stride *= s[j]
	}
	return st
}

// broadcastStrides collapses an elementwise op's output shape with its inputs' element
// strides (0 on broadcast axes), merging neighbouring axes that stay contiguous in every
// operand. It reports false when more than six axes remain.
func broadcastStrides(out tensor.Shape, ins ...tensor.Shape) ([]int, [][]int, bool) {
	r := len(out)
	st := make([][]int, len(ins))
	for k, s := range ins {
		st[k] = axisStrides(out, s)
	}
	var dims []int
	merged := make([][]int, len(ins))
	for i := 0; i < r; i++ {
		if out[i] == 1 {
			continue
		}
		last := len(dims) - 1
		canMerge := last >= 0
		for k := range ins {
			if canMerge && merged[k][last] != st[k][i]*out[i] {
				canMerge = false
			}
		}
		if canMerge {
			dims[last] *= out[i]
			for k := range ins {
				merged[k][last] = st[k][i]
			}
			continue
		}
		dims = append(dims, out[i])
		for k := range ins {
			merged[k] = append(merged[k], st[k][i])
		}
	}
	if len(dims) == 0 {
		dims = []int{1}
		for k := range ins {
			merged[k] = []int{1}
		}
	}
	return dims, merged, len(dims) <= maxRank
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
