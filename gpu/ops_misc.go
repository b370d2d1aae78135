package gpu

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Cast, comparisons, logical ops, Where, Dropout and the index-valued or multi-pass
// reductions (ArgMax, ArgMin, CumSum, TopK, Var).

func init() {
	for op := tensor.Op(1); int(op) < tensor.NumOps; op++ {
		if op.GPU().Shader == "compare" {
			ops[op] = opImpl{typed: true, record: recordCompare, supports: compareSupported}
		}
	}
	ops[tensor.OpCast] = opImpl{typed: true, record: recordCast, supports: func(_ *Device, n *tensor.Node) bool { return wordSized(n) }}
	dropoutOK := func(_ *Device, n *tensor.Node) bool {
		x := n.Input(0).DType()
		return n.DType() == tensor.F32 && isIndex(n.Input(1)) && (n.Op() == tensor.OpDropoutMask || x == tensor.F32) && wordSized(n)
	}
	ops[tensor.OpDropout] = opImpl{typed: true, record: recordDropout, supports: dropoutOK}
	ops[tensor.OpDropoutMask] = opImpl{typed: true, record: recordDropout, supports: dropoutOK}
	ordered := func(_ *Device, n *tensor.Node) bool {
		t := n.Input(0).DType()
		_, _, _, ok := scanView(n)
		return ok && t != tensor.Bool && wordSized(n)
	}
	ops[tensor.OpArgMax] = opImpl{typed: true, record: recordScan, supports: ordered}
	ops[tensor.OpArgMin] = opImpl{typed: true, record: recordScan, supports: ordered}
	ops[tensor.OpTopK] = opImpl{typed: true, record: recordScan, supports: ordered}
	f32Only := func(_ *Device, n *tensor.Node) bool {
		_, _, _, ok := scanView(n)
		return ok && n.DType() == tensor.F32 && n.Input(0).DType() == tensor.F32 && wordSized(n)
	}
	ops[tensor.OpCumSum] = opImpl{typed: true, record: recordScan, supports: f32Only}
	ops[tensor.OpVar] = opImpl{typed: true, record: recordScan, supports: f32Only}
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

// recordCast converts with cast.comp; a cast to the same dtype is a copy.
func recordCast(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	count := n.Shape().Size()
	from, to := n.Input(0).DType(), n.DType()
	if from == to {
		p := layoutPlan{axes: []layoutAxis{{dim: count, stride: 1, inDim: count}}}
		return r.layoutCopy("cast", p, to.Size(), count, 0, count, in[0], out)
	}
	return r.cast("cast", from, to, count, in[0], out)
}

// cast converts count elements of src from one dtype to another into out.
func (r *Recorder) cast(label string, from, to tensor.DType, count int, src, out *Buffer) error {
	u0, units := unitSpan(to.Size(), 0, count)
	if units == 0 {
		return nil
	}
	k, err := r.d.Kernel("cast", 2, groupSize, uint32(to.Size()), uint32(from), uint32(to))
	if err != nil {
		return err
	}
	w := []uint32{units, u0, uint32(count), f32Off(src), f32Off(out)}
	return r.Dispatch(k, gridFor(int(units)), words(w), label, In(src), Out(out))
}

// recordDropout draws tensor.DropoutKeep's mask in training_dropout.comp.
func recordDropout(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	count := n.Shape().Size()
	if count == 0 {
		return nil
	}
	rate := n.Attr().(tensor.DropoutAttr).Rate
	scale := float32(1 / (1 - float64(rate)))
	mask := n.Op() == tensor.OpDropoutMask
	k, err := r.d.Kernel("training_dropout", 3, groupSize, b32(mask))
	if err != nil {
		return err
	}
	w := []uint32{uint32(count), f32Off(in[0]), f32Off(in[1]), f32Off(out), math.Float32bits(rate), math.Float32bits(scale)}
	return r.Dispatch(k, gridFor(count), words(w), n.Op().String(), In(in[0]), In(in[1]), Out(out))
}

// scanView returns the (outer, r, inner) view of a reduce_scan.comp op's input; it reports
// false for an empty reduced run.
func scanView(n *tensor.Node) (outer, r, inner int, ok bool) {
	s := n.Input(0).Shape()
	axis := 0
	switch at := n.Attr().(type) {
	case tensor.ArgReduceAttr:
		axis = at.Axis
	case tensor.CumSumAttr:
		axis = at.Axis
	case tensor.TopKAttr:
		axis = at.Axis
		if len(s) == 0 || at.K > s[axis] {
			return 0, 0, 0, false
		}
	case tensor.ReduceAttr:
		outer, r, inner, ok = reduceView(n)
		return outer, r, inner, ok && r > 0 && r > at.Correction
	}
	if len(s) == 0 {
		return 1, 1, 1, n.Op() == tensor.OpCumSum
	}
	outer, r, inner = s[:axis].Size(), s[axis], s[axis+1:].Size()
	return outer, r, inner, r > 0 || n.Op() == tensor.OpCumSum
}

func recordScan(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	outer, red, inner, _ := scanView(n)
	var k uint32
	var exclusive, reverse, largest bool
	divisor := float32(1)
	switch at := n.Attr().(type) {
	case tensor.CumSumAttr:
		exclusive, reverse = at.Exclusive, at.Reverse
	case tensor.TopKAttr:
		k, largest = uint32(at.K), at.Largest
	case tensor.ReduceAttr:
		divisor = float32(red - at.Correction)
	}
	lines := outer * inner
	if lines == 0 || red == 0 {
		return nil
	}
	kern, err := r.d.Kernel("reduce_scan", 2, groupSize, opCode[n.Op()], uint32(n.Input(0).DType()), b32(exclusive), b32(reverse), b32(largest))
	if err != nil {
		return err
	}
	w := []uint32{uint32(outer), uint32(red), uint32(inner), f32Off(in[0]), f32Off(out), k, math.Float32bits(divisor)}
	return r.Dispatch(kern, rowGrid(lines), words(w), n.Op().String(), In(in[0]), Out(out))
}
