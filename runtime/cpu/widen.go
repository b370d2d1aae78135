package cpu

import (
	"slices"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

// Half-precision support by widening: an op with only an F32 kernel computes an F16 or
// BF16 node by converting its half inputs to F32 scratch, running the F32 kernel on a
// shadow node of the same op with F32 in place of the half types, and rounding the
// result (and any input the op writes in place) back. Kernels that gain from native half
// code may register F16/BF16 directly; lookup prefers them.

// isHalf reports whether dt is a 16-bit float type.
func isHalf(dt tensor.DType) bool { return dt == tensor.F16 || dt == tensor.BF16 }

// needsWidening reports whether n reads or writes a half type.
func needsWidening(n *tensor.Node) bool {
	if isHalf(n.DType()) {
		return true
	}
	return slices.ContainsFunc(n.Inputs(), func(x *tensor.Node) bool { return isHalf(x.DType()) })
}

// widened maps a dtype to the one its kernel computes in.
func widened(dt tensor.DType) tensor.DType {
	if isHalf(dt) {
		return tensor.F32
	}
	return dt
}

// halfCopy is a pending conversion between half memory and its F32 scratch.
type halfCopy struct {
	dt   tensor.DType
	half []uint16
	wide []float32
}

func widen(n *tensor.Node, out []byte, in [][]byte, f kernelFactory) (func() error, error) {
	g := tensor.NewGraph()
	shadowIn := make([]*tensor.Node, len(n.Inputs()))
	wideIn := make([][]byte, len(in))
	var loads, stores []halfCopy
	for i, x := range n.Inputs() {
		dt := widened(x.DType())
		if x.Op() == tensor.OpVariable {
			shadowIn[i] = g.Var(tensor.NewVariable(x.Name(), tensor.New(dt, x.Shape()...)))
		} else {
			shadowIn[i] = g.Input(x.Name(), dt, x.Shape()...)
		}
		wideIn[i] = in[i]
		if isHalf(x.DType()) {
			wideIn[i] = alignedBytes(4 * x.Shape().Size())
			hc := halfCopy{x.DType(), u16s(in[i]), f32s(wideIn[i])}
			loads = append(loads, hc)
			if slices.Contains(n.Op().Writes(), i) {
				stores = append(stores, hc)
			}
		}
	}
	var shadow *tensor.Node
	if err := tensor.Catch(func() { shadow = tensor.Apply(n.Op(), n.Attr(), shadowIn...) }); err != nil {
		return nil, err
	}
	wideOut := out
	if isHalf(n.DType()) {
		wideOut = alignedBytes(4 * n.Shape().Size())
		stores = append(stores, halfCopy{n.DType(), u16s(out), f32s(wideOut)})
	}
	step, err := f(shadow, wideOut, wideIn)
	if err != nil {
		return nil, err
	}
	return func() error {
		for _, c := range loads {
			c.load()
		}
		if err := step(); err != nil {
			return err
		}
		for _, c := range stores {
			c.store()
		}
		return nil
	}, nil
}

// convertGrain is the element count below which conversions run on one goroutine.
const convertGrain = 1 << 15

func (c halfCopy) load() {
	parallel.For(len(c.wide), convertGrain, func(lo, hi int) {
		if c.dt == tensor.F16 {
			for i := lo; i < hi; i++ {
				c.wide[i] = tensor.F16ToFloat32(c.half[i])
			}
			return
		}
		for i := lo; i < hi; i++ {
			c.wide[i] = tensor.BF16ToFloat32(c.half[i])
		}
	})
}

func (c halfCopy) store() {
	parallel.For(len(c.wide), convertGrain, func(lo, hi int) {
		if c.dt == tensor.F16 {
			for i := lo; i < hi; i++ {
				c.half[i] = tensor.Float32ToF16(c.wide[i])
			}
			return
		}
		for i := lo; i < hi; i++ {
			c.half[i] = tensor.Float32ToBF16(c.wide[i])
		}
	})
}
