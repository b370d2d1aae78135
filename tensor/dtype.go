package tensor

import (
	"fmt"

	"github.com/gml-dev/gml/tensor/quant"
)

// DType is the element type of a tensor.
type DType uint8

// The element types. The quantised types store a row as blocks of weights with shared
// scales, in ggml's layouts (package tensor/quant): a tensor of such a type must have an
// innermost dimension that is a whole number of blocks, and its only computing uses are
// the products MatMul allows and Cast (see MatMul).
const (
	F32  DType = iota // IEEE 754 binary32, the default
	F16               // IEEE 754 binary16
	BF16              // bfloat16: the top 16 bits of a binary32
	I32               // int32
	I64               // int64, the ONNX index type
	Bool              // one byte per element, 0 or 1
	Q4_0              // blocks of 32: a float16 scale and 4-bit values (4.5 bits per weight)
	Q8_0              // blocks of 32: a float16 scale and int8 values (8.5 bits per weight)
	Q4_K              // blocks of 256: 6-bit sub-block scales and offsets, 4-bit values (4.5 bits)
	numDTypes
)

var dtypeNames = [numDTypes]string{F32: "f32", F16: "f16", BF16: "bf16", I32: "i32", I64: "i64", Bool: "bool",
	Q4_0: "q4_0", Q8_0: "q8_0", Q4_K: "q4_k"}
var dtypeSizes = [numDTypes]int{F32: 4, F16: 2, BF16: 2, I32: 4, I64: 8, Bool: 1}
var dtypeFormats = [numDTypes]quant.Format{Q4_0: quant.Q4_0, Q8_0: quant.Q8_0, Q4_K: quant.Q4_K}

// String returns the short lower-case name ("f32", "bf16", "q4_k", ...).
func (d DType) String() string {
	if d < numDTypes {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the number of bytes one element occupies; 0 for the quantised types, whose
// elements share bytes (use Bytes).
func (d DType) Size() int {
	if d < numDTypes {
		return dtypeSizes[d]
	}
	return 0
}

// IsQuantized reports whether d is a block-quantised type (Q4_0, Q8_0, Q4_K).
func (d DType) IsQuantized() bool { return d < numDTypes && dtypeFormats[d] != 0 }

// Format is the block format of a quantised type; ok is false for the other types.
func (d DType) Format() (f quant.Format, ok bool) {
	if d < numDTypes {
		f = dtypeFormats[d]
	}
	return f, f != 0
}

// BlockSize is the number of elements that share storage: 1 for plain types, the
// block's weights for quantised ones. A quantised tensor's innermost dimension is a
// multiple of it.
func (d DType) BlockSize() int {
	if f, ok := d.Format(); ok {
		return f.BlockSize()
	}
	return 1
}

// Bytes is the storage size of n elements of d laid out in whole blocks (n a multiple
// of BlockSize).
func (d DType) Bytes(n int) int {
	if f, ok := d.Format(); ok {
		return n / f.BlockSize() * f.BlockBytes()
	}
	return n * d.Size()
}

// CheckShape reports whether shape can hold d: the innermost dimension of a quantised
// type must be a whole number of blocks (a scalar counts as a row of one).
func (d DType) CheckShape(shape Shape) error {
	bs := d.BlockSize()
	if bs == 1 {
		return nil
	}
	row := 1
	if len(shape) > 0 {
		row = shape[len(shape)-1]
	}
	if row%bs != 0 {
		return fmt.Errorf("tensor: %v stores rows in blocks of %d; the innermost dimension of %v is %d", d, bs, shape, row)
	}
	return nil
}

// IsFloat reports whether d is a floating-point type (F32, F16, BF16).
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 }

// IsInt reports whether d is an integer type (I32, I64).
func (d DType) IsInt() bool { return d == I32 || d == I64 }

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d < numDTypes }

// ParseDType converts a name such as "f32", "float32", "fp16", "bfloat16", "int64" or
// "q4_k".
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
	case "q4_0", "Q4_0":
		return Q4_0, nil
	case "q8_0", "Q8_0":
		return Q8_0, nil
	case "q4_k", "Q4_K":
		return Q4_K, nil
	}
	return 0, fmt.Errorf("tensor: unknown dtype %q (want f32, f16, bf16, i32, i64, bool, q4_0, q8_0 or q4_k)", s)
}
