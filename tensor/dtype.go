package tensor

import "fmt"

// DType is the element type of a tensor.
type DType uint8

// The element types. Quantised block types (Q4_0, Q8_0, ...) will be added after I64 so
// existing values keep their meaning.
const (
	F32  DType = iota // IEEE 754 binary32, the default
	F16               // IEEE 754 binary16
	BF16              // bfloat16: the top 16 bits of a binary32
	I32               // int32
	I64               // int64, the ONNX index type
	Bool              // one byte per element, 0 or 1
	numDTypes
)

var dtypeNames = [numDTypes]string{F32: "f32", F16: "f16", BF16: "bf16", I32: "i32", I64: "i64", Bool: "bool"}
var dtypeSizes = [numDTypes]int{F32: 4, F16: 2, BF16: 2, I32: 4, I64: 8, Bool: 1}

// String returns the short lower-case name ("f32", "bf16", ...).
func (d DType) String() string {
	if d < numDTypes {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the number of bytes one element occupies.
func (d DType) Size() int {
	if d < numDTypes {
		return dtypeSizes[d]
	}
	return 0
}

// IsFloat reports whether d is a floating-point type (F32, F16, BF16).
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 }

// IsInt reports whether d is an integer type (I32, I64).
func (d DType) IsInt() bool { return d == I32 || d == I64 }

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d < numDTypes }

// ParseDType converts a name such as "f32", "float32", "fp16", "bfloat16" or "int64".
func ParseDType(s string) (DType, error) {
	switch s {
	case "f32", "float32", "fp32", "float":
		return F32, nil
	case "f16", "float16", "fp16", "half":
		return F16, nil
	case "bf16", "bfloat16":
		return BF16, nil
	case "i32", "int32":
		return I32, nil
	case "i64", "int64":
		return I64, nil
	case "bool":
		return Bool, nil
	}
	return 0, fmt.Errorf("tensor: unknown dtype %q (want f32, f16, bf16, i32, i64 or bool)", s)
}
