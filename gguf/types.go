package gguf

import (
	"fmt"
	"strings"

	"github.com/gml-dev/gml/tensor/quant"
)

// Type is a tensor's element type as ggml numbers it (ggml_type in the file).
type Type uint32

// The element types, with ggml's numbers. Gaps are types ggml removed.
const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
	NVFP4   Type = 40
	Q1_0    Type = 41
	Q2_0    Type = 42
)

// typeInfo says how a type is stored: blockSize elements in blockBytes bytes, and
// which block format decodes it (plain types and undecodable ones have none).
type typeInfo struct {
	name                  string
	blockSize, blockBytes int
	format                quant.Format
	plain                 bool // F32, F16, BF16, the integers and F64: decoded element-wise
}

var types = map[Type]typeInfo{
	F32:     {"F32", 1, 4, 0, true},
	F16:     {"F16", 1, 2, 0, true},
	BF16:    {"BF16", 1, 2, 0, true},
	F64:     {"F64", 1, 8, 0, true},
	I8:      {"I8", 1, 1, 0, true},
	I16:     {"I16", 1, 2, 0, true},
	I32:     {"I32", 1, 4, 0, true},
	I64:     {"I64", 1, 8, 0, true},
	Q4_0:    blockType(quant.Q4_0),
	Q4_1:    blockType(quant.Q4_1),
	Q5_0:    blockType(quant.Q5_0),
	Q5_1:    blockType(quant.Q5_1),
	Q8_0:    blockType(quant.Q8_0),
	Q8_1:    blockType(quant.Q8_1),
	Q2_K:    blockType(quant.Q2_K),
	Q3_K:    blockType(quant.Q3_K),
	Q4_K:    blockType(quant.Q4_K),
	Q5_K:    blockType(quant.Q5_K),
	Q6_K:    blockType(quant.Q6_K),
	Q8_K:    blockType(quant.Q8_K),
	IQ4_NL:  blockType(quant.IQ4_NL),
	IQ4_XS:  blockType(quant.IQ4_XS),
	MXFP4:   blockType(quant.MXFP4),
	IQ2_XXS: {"IQ2_XXS", 256, 66, 0, false},
	IQ2_XS:  {"IQ2_XS", 256, 74, 0, false},
	IQ3_XXS: {"IQ3_XXS", 256, 98, 0, false},
	IQ1_S:   {"IQ1_S", 256, 50, 0, false},
	IQ3_S:   {"IQ3_S", 256, 110, 0, false},
	IQ2_S:   {"IQ2_S", 256, 82, 0, false},
	IQ1_M:   {"IQ1_M", 256, 56, 0, false},
	TQ1_0:   {"TQ1_0", 256, 54, 0, false},
	TQ2_0:   {"TQ2_0", 256, 66, 0, false},
	NVFP4:   {"NVFP4", 64, 36, 0, false},
	Q1_0:    {"Q1_0", 128, 18, 0, false},
	Q2_0:    {"Q2_0", 64, 18, 0, false},
}

func blockType(f quant.Format) typeInfo {
	return typeInfo{f.String(), f.BlockSize(), f.BlockBytes(), f, false}
}

// String returns ggml's upper-case name ("Q4_K", "BF16"), or "type(N)" for a number
// this package does not know.
func (t Type) String() string {
	if ti, ok := types[t]; ok {
		return ti.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Known reports whether the package knows t's storage layout (its block size).
func (t Type) Known() bool { _, ok := types[t]; return ok }

// Decodable reports whether TensorData can decode tensors of type t.
func (t Type) Decodable() bool { ti := types[t]; return ti.plain || ti.format != 0 }

// BlockSize is the number of elements per block (1 for plain types, 0 if unknown).
func (t Type) BlockSize() int { return types[t].blockSize }

// BlockBytes is the size of one block in bytes (0 if unknown).
func (t Type) BlockBytes() int { return types[t].blockBytes }

// BitsPerWeight is the storage cost of one element, block scales included.
func (t Type) BitsPerWeight() float64 {
	ti, ok := types[t]
	if !ok {
		return 0
	}
	return 8 * float64(ti.blockBytes) / float64(ti.blockSize)
}

// Format is the block format of a quantised type; ok is false for plain types (F32,
// F16, integers) and types this package cannot decode.
func (t Type) Format() (f quant.Format, ok bool) {
	f = types[t].format
	return f, f != 0
}

// ParseType returns the type named s, in any case ("q4_k", "F16").
func ParseType(s string) (Type, error) {
	for t, ti := range types {
		if strings.EqualFold(ti.name, s) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("gguf: unknown tensor type %q", s)
}
