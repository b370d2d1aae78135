package gpu

import "github.com/gml-dev/gml/tensor"

// Cast on cast.comp, with the CPU's conversions; a cast to the same dtype is a copy.

func init() {
	ops[tensor.OpCast] = opImpl{typed: true, record: recordCast, supports: castSupported}
}

// castSupported accepts casts between the plain dtypes, and decoding a quantised
// tensor to f32; encoding to a quantised type runs on the CPU.
func castSupported(_ *Device, n *tensor.Node) bool {
	if n.DType().IsQuantized() {
		return false
	}
	if n.Input(0).DType().IsQuantized() {
		return n.DType() == tensor.F32 && wordSized(n)
	}
	return wordSized(n)
}

// recordCast converts with cast.comp; a cast to the same dtype is a copy, and a
// quantised input is decoded by matmul_quant.comp.
func recordCast(r *Recorder, n *tensor.Node, out *Buffer, in []*Buffer) error {
	count := n.Shape().Size()
	from, to := n.Input(0).DType(), n.DType()
	if from.IsQuantized() {
		return recordDequantize(r, n, out, in)
	}
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
