package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// Array is a host tensor of any supported ONNX element type: what Run takes and
// returns. It holds its values in the type's carrier (DataType.Carrier), so an Array of
// an engine type (float32, float16, bfloat16, int32, int64, bool) is a *tensor.Tensor
// with a label, and one of uint8 is an I32 tensor whose values lie in [0, 255].
type Array struct {
	dtype DataType
	t     *tensor.Tensor
}

// ArrayOf wraps an engine tensor (not copied) as an Array of the matching ONNX type.
func ArrayOf(t *tensor.Tensor) *Array { return &Array{dtype: fromEngine(t.DType()), t: t} }

// NewArray builds an Array of ONNX type dtype and the given shape from a Go slice:
// []float32, []float64, []int8, []uint8, []int16, []uint16, []int32, []uint32, []int64,
// []uint64 or []bool, whose values are converted to dtype (integers wrap into the
// type's range; float types round to it).
func NewArray(dtype DataType, shape []int, data any) (*Array, error) {
	if !dtype.Supported() {
		return nil, fmt.Errorf("onnx: NewArray: element type %v is not supported", dtype)
	}
	s := tensor.Shape(shape).Clone()
	n, err := checkedSize(s)
	if err != nil {
		return nil, fmt.Errorf("onnx: NewArray: %w", err)
	}
	vals, err := float64sOf(data)
	if err != nil {
		return nil, fmt.Errorf("onnx: NewArray: %w", err)
	}
	if len(vals) != n {
		return nil, fmt.Errorf("onnx: NewArray: %d values for shape %v (%d elements)", len(vals), s, n)
	}
	a := &Array{dtype: dtype, t: tensor.New(dtype.Carrier(), s...)}
	for i, v := range vals {
		a.set(i, v)
	}
	// Integers held as float64 lose nothing below 2^53; int64 and uint64 slices are
	// copied exactly.
	switch d := data.(type) {
	case []int64:
		if dtype == Int64 || dtype == Uint64 {
			copy(a.t.Int64s(), d)
		}
	case []uint64:
		if dtype == Int64 || dtype == Uint64 {
			for i, v := range d {
				a.t.Int64s()[i] = int64(v)
			}
		}
	}
	return a, nil
}

// float64sOf converts a supported Go slice to float64 values.
func float64sOf(data any) ([]float64, error) {
	conv := func(n int, at func(int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	switch d := data.(type) {
	case []float32:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []float64:
		return d, nil
	case []int8:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []uint8:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []int16:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []uint16:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []int32:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []uint32:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []int64:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []uint64:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []int:
		return conv(len(d), func(i int) float64 { return float64(d[i]) }), nil
	case []bool:
		return conv(len(d), func(i int) float64 {
			if d[i] {
				return 1
			}
			return 0
		}), nil
	}
	return nil, fmt.Errorf("unsupported data of type %T", data)
}

// DataType returns the ONNX element type.
func (a *Array) DataType() DataType { return a.dtype }

// Shape returns the dimensions.
func (a *Array) Shape() tensor.Shape { return a.t.Shape() }

// Len is the number of elements.
func (a *Array) Len() int { return a.t.Len() }

// Tensor returns the carrier tensor (shared, not copied): for an engine type the data
// itself; for the others their values in the carrier dtype (Carrier).
func (a *Array) Tensor() *tensor.Tensor { return a.t }

// Float64s returns the values converted to float64 (uint64 values above 2^63 included).
func (a *Array) Float64s() []float64 {
	out := make([]float64, a.Len())
	for i := range out {
		out[i] = a.At(i)
	}
	return out
}

// At returns element i (row-major) as a float64.
func (a *Array) At(i int) float64 {
	if a.dtype == Uint64 {
		return float64(uint64(a.t.Int64s()[i]))
	}
	return a.t.Float(i)
}

// set stores v at element i, converted to the array's type.
func (a *Array) set(i int, v float64) {
	switch {
	case a.dtype == Uint64 && v >= math.MaxInt64:
		a.t.Int64s()[i] = int64(uint64(v))
	case a.dtype.IsFloat():
		a.t.SetFloat(i, roundTo(a.dtype, v))
	default:
		if lo, hi, ok := a.dtype.intRange(); ok {
			v = float64(wrapInt(int64(v), lo, hi))
		}
		a.t.SetFloat(i, v)
	}
}

// roundTo rounds v to the nearest value of float type dt (saturating the minifloats).
func roundTo(dt DataType, v float64) float64 {
	if f, ok := minifloats[dt]; ok {
		if math.IsNaN(v) {
			return v
		}
		a := math.Min(roundGrid(math.Abs(v), f.minExp(), f.mbits), f.maxFinite())
		return math.Copysign(a, v)
	}
	if dt == Float8E8M0 {
		// Up to the next power of two, as Cast's default round_mode, within the format.
		if math.IsNaN(v) {
			return v
		}
		if v <= math.Ldexp(1, -127) {
			return math.Ldexp(1, -127)
		}
		frac, exp := math.Frexp(math.Min(v, math.Ldexp(1, 127)))
		if frac == 0.5 {
			return math.Ldexp(1, exp-1)
		}
		return math.Ldexp(1, exp)
	}
	return v
}

// roundGrid rounds a >= 0 to mbits fraction bits (ties to even), on the subnormal grid
// below 2^minExp.
func roundGrid(a float64, minExp, mbits int) float64 {
	if a == 0 || math.IsInf(a, 0) {
		return a
	}
	step := math.Ldexp(1, max(math.Ilogb(a), minExp)-mbits)
	return math.RoundToEven(a/step) * step
}

// wrapInt reduces v modulo the size of [lo, hi] into that range, as two's-complement
// arithmetic on the narrow type would.
func wrapInt(v, lo, hi int64) int64 {
	n := hi - lo + 1
	r := (v - lo) % n
	if r < 0 {
		r += n
	}
	return r + lo
}

// String summarises the array: "uint8[2 3] [1 2 3 4 5 6]".
func (a *Array) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v%v [", a.dtype, a.Shape())
	n := min(a.Len(), 8)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%g", a.At(i))
	}
	if a.Len() > n {
		b.WriteString(" ...")
	}
	b.WriteByte(']')
	return b.String()
}

// maxElements bounds the size of one tensor read from a file, so that a corrupt
// dimension fails cleanly instead of asking for exabytes.
var maxElements = 1 << 34

// checkedSize returns the element count of s, failing on negative dimensions and on
// products beyond maxElements.
func checkedSize(s tensor.Shape) (int, error) {
	n := 1
	for _, d := range s {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", s)
		}
		if d != 0 && n > maxElements/d {
			return 0, fmt.Errorf("shape %v has more than %d elements", s, maxElements)
		}
		n *= d
	}
	return n, nil
}

// decodeRaw fills a new Array of type dt and shape s from little-endian packed bytes
// (raw_data or external data), whose length the caller has checked with rawBytes.
func decodeRaw(dt DataType, s tensor.Shape, raw []byte) *Array {
	a := &Array{dtype: dt, t: tensor.New(dt.Carrier(), s...)}
	n := a.Len()
	if dt.Native() {
		copy(a.t.Bytes(), raw)
		return a
	}
	le := binary.LittleEndian
	for i := 0; i < n; i++ {
		switch dt {
		case Uint8:
			a.t.Int32s()[i] = int32(raw[i])
		case Int8:
			a.t.Int32s()[i] = int32(int8(raw[i]))
		case Uint16:
			a.t.Int32s()[i] = int32(le.Uint16(raw[2*i:]))
		case Int16:
			a.t.Int32s()[i] = int32(int16(le.Uint16(raw[2*i:])))
		case Uint32:
			a.t.Int64s()[i] = int64(le.Uint32(raw[4*i:]))
		case Uint64:
			a.t.Int64s()[i] = int64(le.Uint64(raw[8*i:]))
		case Double:
			a.t.Float32s()[i] = float32(math.Float64frombits(le.Uint64(raw[8*i:])))
		default:
			a.setBits(i, packedElement(dt, raw, i))
		}
	}
	return a
}

// packedElement extracts element i of a 8-, 4- or 2-bit type from packed bytes (4-bit
// pairs and 2-bit quads are packed from the least significant bits up).
func packedElement(dt DataType, raw []byte, i int) uint32 {
	switch typeInfos[dt].bits {
	case 4:
		return uint32(raw[i/2]>>(4*(i%2))) & 0xf
	case 2:
		return uint32(raw[i/4]>>(2*(i%4))) & 0x3
	}
	return uint32(raw[i])
}

// setBits stores element i of a sub-32-bit non-native type given its bit pattern.
func (a *Array) setBits(i int, bits uint32) {
	switch a.dtype {
	case Uint8, Uint16, Uint4, Uint2:
		a.t.Int32s()[i] = int32(bits)
	case Int8:
		a.t.Int32s()[i] = int32(int8(bits))
	case Int16:
		a.t.Int32s()[i] = int32(int16(bits))
	case Int4:
		a.t.Int32s()[i] = int32(int8(bits<<4) >> 4)
	case Int2:
		a.t.Int32s()[i] = int32(int8(bits<<6) >> 6)
	case Float8E8M0:
		a.t.Float32s()[i] = e8m0Decode(bits)
	default:
		a.t.Float32s()[i] = minifloats[a.dtype].decode(bits)
	}
}

// rawBytes is the size in bytes of n packed elements of type dt.
func rawBytes(dt DataType, n int) int {
	return (n*typeInfos[dt].bits + 7) / 8
}
