package cpu

import (
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

// Cast converts between every pair of dtypes. Numeric pairs convert directly (Go's
// conversion: floats truncate toward zero when they become integers); Bool targets
// store value != 0; half types go through float32.

func init() { register(tensor.OpCast, allTypes, castFactory) }

// castFactory prepares OpCast.
func castFactory(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	from, to := n.Input(0).DType(), n.DType()
	count := n.Shape().Size()
	if to.IsQuantized() {
		return quantizeFactory(n, out, in)
	}
	if from == to {
		return func() error { copy(out, in[0]); return nil }, nil
	}
	src, dst := in[0], out
	var pre, post *halfCopy
	if isHalf(from) {
		wide := alignedBytes(4 * count)
		pre = &halfCopy{from, u16s(in[0]), f32s(wide)}
		src, from = wide, tensor.F32
	}
	if isHalf(to) {
		wide := alignedBytes(4 * count)
		post = &halfCopy{to, u16s(out), f32s(wide)}
		dst, to = wide, tensor.F32
	}
	conv := convertLoop(from, to, dst, src)
	return func() error {
		if pre != nil {
			pre.load()
		}
		if conv != nil {
			parallel.For(count, elemGrain, conv)
		} else {
			copy(dst, src)
		}
		if post != nil {
			post.store()
		}
		return nil
	}, nil
}

// convertLoop returns the body converting src (dtype from) to dst (dtype to), both
// among F32, I32, I64 and Bool; nil when they are the same type.
func convertLoop(from, to tensor.DType, dst, src []byte) func(lo, hi int) {
	if from == to {
		return nil
	}
	switch from {
	case tensor.F32:
		return convertFrom(typed[float32](src), to, dst)
	case tensor.I32:
		return convertFrom(typed[int32](src), to, dst)
	case tensor.I64:
		return convertFrom(typed[int64](src), to, dst)
	}
	return convertFrom(typed[uint8](src), to, dst)
}

func convertFrom[S number](s []S, to tensor.DType, dst []byte) func(lo, hi int) {
	switch to {
	case tensor.F32:
		return convertTo(typed[float32](dst), s)
	case tensor.I32:
		return convertTo(typed[int32](dst), s)
	case tensor.I64:
		return convertTo(typed[int64](dst), s)
	}
	return func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if s[i] != 0 {
				dst[i] = 1
			} else {
				dst[i] = 0
			}
		}
	}
}

func convertTo[D, S number](d []D, s []S) func(lo, hi int) {
	return func(lo, hi int) {
		for i := lo; i < hi; i++ {
			d[i] = D(s[i])
		}
	}
}
