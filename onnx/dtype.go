package onnx

import (
	"fmt"
	"math"

	"github.com/gml-dev/gml/tensor"
)

// DataType is an ONNX element type, numbered as in the format (TensorProto.DataType).
type DataType int32

// The ONNX element types.
const (
	Undefined      DataType = 0
	Float          DataType = 1
	Uint8          DataType = 2
	Int8           DataType = 3
	Uint16         DataType = 4
	Int16          DataType = 5
	Int32          DataType = 6
	Int64          DataType = 7
	String         DataType = 8
	Bool           DataType = 9
	Float16        DataType = 10
	Double         DataType = 11
	Uint32         DataType = 12
	Uint64         DataType = 13
	Complex64      DataType = 14
	Complex128     DataType = 15
	BFloat16       DataType = 16
	Float8E4M3FN   DataType = 17
	Float8E4M3FNUZ DataType = 18
	Float8E5M2     DataType = 19
	Float8E5M2FNUZ DataType = 20
	Uint4          DataType = 21
	Int4           DataType = 22
	Float4E2M1     DataType = 23
	Float8E8M0     DataType = 24
	Uint2          DataType = 25
	Int2           DataType = 26
)

// typeInfo is what gml knows about one ONNX element type: its name, how many bits an
// element occupies in a file, and the engine dtype that carries it in graphs.
type typeInfo struct {
	name    string
	bits    int
	carrier tensor.DType
	ok      bool // gml can compute with it
}

var typeInfos = map[DataType]typeInfo{
	Float:          {"float32", 32, tensor.F32, true},
	Uint8:          {"uint8", 8, tensor.I32, true},
	Int8:           {"int8", 8, tensor.I32, true},
	Uint16:         {"uint16", 16, tensor.I32, true},
	Int16:          {"int16", 16, tensor.I32, true},
	Int32:          {"int32", 32, tensor.I32, true},
	Int64:          {"int64", 64, tensor.I64, true},
	String:         {"string", 0, 0, false},
	Bool:           {"bool", 8, tensor.Bool, true},
	Float16:        {"float16", 16, tensor.F16, true},
	Double:         {"float64", 64, tensor.F32, true},
	Uint32:         {"uint32", 32, tensor.I64, true},
	Uint64:         {"uint64", 64, tensor.I64, true},
	Complex64:      {"complex64", 64, 0, false},
	Complex128:     {"complex128", 128, 0, false},
	BFloat16:       {"bfloat16", 16, tensor.BF16, true},
	Float8E4M3FN:   {"float8e4m3fn", 8, tensor.F32, true},
	Float8E4M3FNUZ: {"float8e4m3fnuz", 8, tensor.F32, true},
	Float8E5M2:     {"float8e5m2", 8, tensor.F32, true},
	Float8E5M2FNUZ: {"float8e5m2fnuz", 8, tensor.F32, true},
	Uint4:          {"uint4", 4, tensor.I32, true},
	Int4:           {"int4", 4, tensor.I32, true},
	Float4E2M1:     {"float4e2m1", 4, tensor.F32, true},
	Float8E8M0:     {"float8e8m0", 8, tensor.F32, true},
	Uint2:          {"uint2", 2, tensor.I32, true},
	Int2:           {"int2", 2, tensor.I32, true},
}

// String returns the NumPy-style name ("float32", "uint8", "float8e4m3fn").
func (t DataType) String() string {
	if info, ok := typeInfos[t]; ok {
		return info.name
	}
	return fmt.Sprintf("datatype(%d)", int32(t))
}

// Supported reports whether gml can load and compute with values of type t (all but
// strings and complex numbers).
func (t DataType) Supported() bool { return typeInfos[t].ok }

// Carrier is the engine dtype that holds values of type t in graphs. The engine's own
// types carry themselves; narrower integers (int8 ... uint16, int4, int2) ride in I32,
// uint32 and uint64 in I64 (uint64 as its bit pattern), float64 in F32 (rounded), and
// the 8- and 4-bit float types in F32, which holds each of their values exactly. Every
// op that could leave a narrow type's range wraps its result back into it, so integer
// results are exact; float64 results have float32 precision.
func (t DataType) Carrier() tensor.DType { return typeInfos[t].carrier }

// Native reports whether t is an engine dtype (float32, float16, bfloat16, int32,
// int64, bool), carried without conversion.
func (t DataType) Native() bool {
	switch t {
	case Float, Float16, BFloat16, Int32, Int64, Bool:
		return true
	}
	return false
}

// IsFloat reports whether t is a floating-point type.
func (t DataType) IsFloat() bool { return typeInfos[t].ok && t.Carrier().IsFloat() }

// intRange is the range of an integer type narrower than its carrier; ok is false for
// types that need no wrapping (int32, int64, uint64 and the float types).
func (t DataType) intRange() (lo, hi int64, ok bool) {
	switch t {
	case Uint8:
		return 0, math.MaxUint8, true
	case Int8:
		return math.MinInt8, math.MaxInt8, true
	case Uint16:
		return 0, math.MaxUint16, true
	case Int16:
		return math.MinInt16, math.MaxInt16, true
	case Uint32:
		return 0, math.MaxUint32, true
	case Uint4:
		return 0, 15, true
	case Int4:
		return -8, 7, true
	case Uint2:
		return 0, 3, true
	case Int2:
		return -2, 1, true
	}
	return 0, 0, false
}

// isUnsigned reports whether t is an unsigned integer type.
func (t DataType) isUnsigned() bool {
	switch t {
	case Uint8, Uint16, Uint32, Uint64, Uint4, Uint2:
		return true
	}
	return false
}

// fromEngine returns the ONNX type an engine dtype carries by default.
func fromEngine(dt tensor.DType) DataType {
	switch dt {
	case tensor.F32:
		return Float
	case tensor.F16:
		return Float16
	case tensor.BF16:
		return BFloat16
	case tensor.I32:
		return Int32
	case tensor.I64:
		return Int64
	case tensor.Bool:
		return Bool
	}
	return Undefined
}

// minifloat describes an 8- or 4-bit float format: exponent and mantissa widths, the
// exponent bias, whether it has infinities, and how it encodes NaN.
type minifloat struct {
	ebits, mbits, bias int
	inf                bool
	nanAllOnes         bool // NaN is every exponent and mantissa bit set (E4M3FN)
	nanNegZero         bool // NaN is the pattern of negative zero (the FNUZ types)
	noNaN              bool // Float4E2M1 has neither NaN nor infinity
}

var minifloats = map[DataType]minifloat{
	Float8E4M3FN:   {ebits: 4, mbits: 3, bias: 7, nanAllOnes: true},
	Float8E4M3FNUZ: {ebits: 4, mbits: 3, bias: 8, nanNegZero: true},
	Float8E5M2:     {ebits: 5, mbits: 2, bias: 15, inf: true},
	Float8E5M2FNUZ: {ebits: 5, mbits: 2, bias: 16, nanNegZero: true},
	Float4E2M1:     {ebits: 2, mbits: 1, bias: 1, noNaN: true},
}

// decode widens one bit pattern exactly.
func (f minifloat) decode(bits uint32) float32 {
	width := 1 + f.ebits + f.mbits
	sign := bits >> (width - 1) & 1
	e := int(bits>>f.mbits) & (1<<f.ebits - 1)
	m := int(bits) & (1<<f.mbits - 1)
	switch {
	case f.nanNegZero && sign == 1 && e == 0 && m == 0:
		return float32(math.NaN())
	case f.nanAllOnes && e == 1<<f.ebits-1 && m == 1<<f.mbits-1:
		return float32(math.NaN())
	case f.inf && e == 1<<f.ebits-1:
		if m != 0 {
			return float32(math.NaN())
		}
		if sign == 1 {
			return float32(math.Inf(-1))
		}
		return float32(math.Inf(1))
	}
	var v float64
	if e == 0 {
		v = math.Ldexp(float64(m), 1-f.bias-f.mbits)
	} else {
		v = math.Ldexp(float64(m|1<<f.mbits), e-f.bias-f.mbits)
	}
	if sign == 1 {
		v = -v
	}
	return float32(v)
}

// maxFinite is the largest finite value of the format.
func (f minifloat) maxFinite() float64 {
	emax := 1<<f.ebits - 1 - f.bias
	mmax := 1<<f.mbits - 1
	if f.inf {
		emax-- // the top exponent is infinity and NaN
	}
	if f.nanAllOnes {
		mmax-- // the top pattern is NaN
	}
	return math.Ldexp(float64(mmax|1<<f.mbits), emax-f.mbits)
}

// minExp is the exponent of the smallest normal value.
func (f minifloat) minExp() int { return 1 - f.bias }

// e8m0 is FLOAT8E8M0: an unsigned power of two 2^(bits-127), 0xFF being NaN.
func e8m0Decode(bits uint32) float32 {
	if bits == 0xff {
		return float32(math.NaN())
	}
	return float32(math.Ldexp(1, int(bits)-127))
}
