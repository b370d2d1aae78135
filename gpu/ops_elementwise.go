package gpu

import (
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
