package cpu

import (
	"unsafe"

	"github.com/gml-dev/gml/tensor"
)

// Typed views of buffer memory. Buffers are 64-byte aligned and tensors start at byte 0,
// so every view is aligned for its element type.

func f32s(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func i32s(b []byte) []int32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func i64s(b []byte) []int64 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8)
}

func u16s(b []byte) []uint16 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

// indexReader returns a function reading element i of an I32 or I64 index tensor as int.
// It is for index arguments (gather, scatter, labels), read once per row or element.
func indexReader(dt tensor.DType, b []byte) func(i int) int {
	if dt == tensor.I32 {
		v := i32s(b)
		return func(i int) int { return int(v[i]) }
	}
	v := i64s(b)
	return func(i int) int { return int(v[i]) }
}

// scalarReader returns a function reading the first element of a numeric tensor as
// float64, for scalar inputs such as a learning rate or a step counter read per run.
func scalarReader(dt tensor.DType, b []byte) func() float64 {
	switch dt {
	case tensor.F32:
		v := f32s(b)
		return func() float64 { return float64(v[0]) }
	case tensor.F16:
		v := u16s(b)
		return func() float64 { return float64(tensor.F16ToFloat32(v[0])) }
	case tensor.BF16:
		v := u16s(b)
		return func() float64 { return float64(tensor.BF16ToFloat32(v[0])) }
	case tensor.I32:
		v := i32s(b)
		return func() float64 { return float64(v[0]) }
	case tensor.I64:
		v := i64s(b)
		return func() float64 { return float64(v[0]) }
	}
	return func() float64 { return float64(b[0]) }
}
