package gpu

import (
	"github.com/gml-dev/gml/tensor"
)

// Comparisons, logical ops, Not and Where on compare.comp, for every dtype.

func init() {
	for op := tensor.Op(1); int(op) < tensor.NumOps; op++ {
		if op.GPU().Shader == "compare" {
			ops[op] = opImpl{typed: true, record: recordCompare, supports: compareSupported}
		}
	}
}

// compareSupported accepts comparisons of numeric inputs, logical ops on Bool and Where
// of any dtype, when broadcasting collapses to six axes.
func compareSupported(_ *Device, n *tensor.Node) bool {
	in := n.Inputs()
	shapes := make([]tensor.Shape, len(in))
	for i, x := range in {
		shapes[i] = x.Shape()
	}
	if _, _, ok := broadcastStrides(n.Shape(), shapes...); !ok || !wordSized(n) {
		return false
	}
	switch {
	case n.Op() == tensor.OpWhere:
		return in[0].DType() == tensor.Bool && in[1].DType() == n.DType() && in[2].DType() == n.DType()
	case n.Op().DTypes() == tensor.BoolType: // and, or, xor, not
		for _, x := range in {
			if x.DType() != tensor.Bool {
				return false
			}
		}
		return true
	}
	return in[0].DType() != tensor.Bool && in[1].DType() == in[0].DType()
}

func recordCompare(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	count := n.Shape().Size()
	esize := n.DType().Size()
	u0, units := unitSpan(esize, 0, count)
	if units == 0 {
		return nil
	}
	shapes := make([]tensor.Shape, len(in))
	for i, x := range n.Inputs() {
		shapes[i] = x.Shape()
	}
	dims, st, _ := broadcastStrides(n.Shape(), shapes...)
	var sl [3][maxRank]uint32
	bufs := [3]*Buffer{in[0], in[0], in[0]}
	for k := range st {
		bufs[k] = in[k]
		for i := range dims {
			sl[k][maxRank-len(dims)+i] = uint32(st[k][i])
		}
	}
	w := []uint32{units, u0, uint32(count), f32Off(bufs[0]), f32Off(bufs[1]), f32Off(bufs[2]), f32Off(out)}
	dl := rightAligned(dims)
	w = append(w, dl[:]...)
	for k := range sl {
		w = append(w, sl[k][:]...)
	}
	k, err := r.d.Kernel("compare", 4, groupSize, uint32(esize), opCode[n.Op()], uint32(n.Input(0).DType()), usedAxes(dl))
	if err != nil {
		return err
	}
	return r.Dispatch(k, gridFor(int(units)), words(w), n.Op().String(), In(bufs[0]), In(bufs[1]), In(bufs[2]), Out(out))
}
