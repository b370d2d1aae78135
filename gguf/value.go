package gguf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ValueType is the type of a metadata value (gguf_metadata_value_type in the file).
type ValueType uint32

// The metadata value types, with the file's numbers.
const (
	MetaUint8     ValueType = 0
	MetaInt8      ValueType = 1
	MetaUint16    ValueType = 2
	MetaInt16     ValueType = 3
	MetaUint32    ValueType = 4
	MetaInt32     ValueType = 5
	MetaFloat32   ValueType = 6
	MetaBool      ValueType = 7
	MetaString    ValueType = 8
	MetaArray     ValueType = 9
	MetaUint64    ValueType = 10
	MetaInt64     ValueType = 11
	MetaFloat64   ValueType = 12
	numValueTypes ValueType = 13
)

var valueTypeNames = [numValueTypes]string{"uint8", "int8", "uint16", "int16", "uint32", "int32",
	"float32", "bool", "string", "array", "uint64", "int64", "float64"}

// fixedSize is the encoded size of the fixed-size value types (0 for string and array).
var fixedSize = [numValueTypes]int{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8}

// String returns the type's name ("uint32", "string", "array").
func (t ValueType) String() string {
	if t < numValueTypes {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(t))
}

// Value is one metadata value: a number, a bool, a string or an array of values. Its Go
// value (Any) is the matching Go type (uint8 ... float64, bool, string); an array is a
// typed slice ([]uint32, []string, ...), or []Value for an array of arrays. The zero
// Value stands for a missing key: its accessors report false.
type Value struct {
	typ  ValueType
	elem ValueType // element type of an array
	v    any
}

// KV is one metadata entry.
type KV struct {
	Key   string
	Value Value
}

// Type is the value's type; the zero Value (no value) reports MetaUint8 and Valid false.
func (v Value) Type() ValueType { return v.typ }

// ElemType is the element type of an array value.
func (v Value) ElemType() ValueType { return v.elem }

// Valid reports whether v holds a value (false for a missing key).
func (v Value) Valid() bool { return v.v != nil }

// Any returns the Go value (see Value).
func (v Value) Any() any { return v.v }

// Len is the number of elements of an array value, 0 for any other value.
func (v Value) Len() int {
	if v.typ != MetaArray {
		return 0
	}
	switch a := v.v.(type) {
	case []Value:
		return len(a)
	case []string:
		return len(a)
	case []bool:
		return len(a)
	}
	return len(numbers(v.v))
}

// Int returns an integer value as int64; ok is false for other types and for a uint64
// that does not fit.
func (v Value) Int() (n int64, ok bool) {
	switch x := v.v.(type) {
	case uint8:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		return int64(x), x <= math.MaxInt64
	}
	return 0, false
}

// Float returns a number (integer or floating point) as float64.
func (v Value) Float() (f float64, ok bool) {
	switch x := v.v.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	case uint64:
		return float64(x), true
	}
	n, ok := v.Int()
	return float64(n), ok
}

// Bool returns a bool value.
func (v Value) Bool() (b, ok bool) { b, ok = v.v.(bool); return b, ok }

// Text returns a string value.
func (v Value) Text() (s string, ok bool) { s, ok = v.v.(string); return s, ok }

// Strings returns an array of strings.
func (v Value) Strings() ([]string, bool) { s, ok := v.v.([]string); return s, ok }

// Floats returns an array of numbers as float64s.
func (v Value) Floats() ([]float64, bool) {
	ns := numbers(v.v)
	return ns, ns != nil
}

// Ints returns an array of integers as int64s; ok is false for other arrays and for a
// uint64 that does not fit.
func (v Value) Ints() ([]int64, bool) {
	if v.typ != MetaArray || v.elem == MetaFloat32 || v.elem == MetaFloat64 {
		return nil, false
	}
	ns := numbers(v.v)
	if ns == nil {
		return nil, false
	}
	out := make([]int64, len(ns))
	if u, ok := v.v.([]uint64); ok {
		for i, x := range u {
			if x > math.MaxInt64 {
				return nil, false
			}
			out[i] = int64(x)
		}
		return out, true
	}
	for i, x := range ns {
		out[i] = int64(x)
	}
	return out, true
}

// numbers converts a numeric slice to float64s; nil for anything else.
func numbers(a any) []float64 {
	conv := func(n int, at func(int) float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	switch s := a.(type) {
	case []uint8:
		return conv(len(s), func(i int) float64 { return float64(s[i]) })
	case []int8:
		return conv(len(s), func(i int) float64 { return float64(s[i]) })
	case []uint16:
		return conv(len(s), func(i int) float64 { return float64(s[i]) })
	case []int16:
		return conv(len(s), func(i int) float64 { return float64(s[i]) })
	case []uint32:
		return conv(len(s), func(i int) float64 { return float64(s[i]) })
	case []int32:
		return conv(len(s), func(i int) float64 { return float64(s[i]) })
	case []uint64:
		return conv(len(s), func(i int) float64 { return float64(s[i]) })
	case []int64:
		return conv(len(s), func(i int) float64 { return float64(s[i]) })
	case []float32:
		return conv(len(s), func(i int) float64 { return float64(s[i]) })
	case []float64:
		return s
	}
	return nil
}

// String formats the value for reading: a string as itself, numbers in Go syntax, and
// arrays as their first elements and length ("[a b c … 32000 strings]").
func (v Value) String() string { return v.format(8) }

// format shows at most n elements of an array.
func (v Value) format(n int) string {
	switch x := v.v.(type) {
	case nil:
		return "<none>"
	case string:
		return x
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case []Value:
		parts := make([]string, 0, min(n, len(x)))
		for _, e := range x[:min(n, len(x))] {
			parts = append(parts, e.format(n))
		}
		return arrayText(parts, len(x), "arrays")
	case []string:
		parts := make([]string, 0, min(n, len(x)))
		for _, s := range x[:min(n, len(x))] {
			parts = append(parts, strconv.Quote(s))
		}
		return arrayText(parts, len(x), "strings")
	case []bool:
		parts := make([]string, 0, min(n, len(x)))
		for _, b := range x[:min(n, len(x))] {
			parts = append(parts, strconv.FormatBool(b))
		}
		return arrayText(parts, len(x), "bools")
	}
	if v.typ == MetaArray {
		ns := numbers(v.v)
		parts := make([]string, 0, min(n, len(ns)))
		for _, f := range ns[:min(n, len(ns))] {
			parts = append(parts, strconv.FormatFloat(f, 'g', -1, 64))
		}
		return arrayText(parts, len(ns), v.elem.String()+"s")
	}
	return fmt.Sprint(v.v)
}

func arrayText(parts []string, n int, what string) string {
	if len(parts) == n {
		return "[" + strings.Join(parts, " ") + "]"
	}
	return "[" + strings.Join(parts, " ") + fmt.Sprintf(" … %d %s]", n, what)
}

// ValueOf converts a Go value to a metadata value: uint8 ... uint64, int8 ... int64,
// float32, float64, bool and string keep their type; int becomes int64 (use uint32(n)
// where a reader expects uint32, as llama.cpp does for most counts); slices of those
// become arrays, and a []Value of arrays an array of arrays; a Value is returned as is.
func ValueOf(x any) (Value, error) {
	switch x := x.(type) {
	case Value:
		if !x.Valid() {
			return Value{}, fmt.Errorf("gguf: empty Value")
		}
		return x, nil
	case uint8:
		return Value{typ: MetaUint8, v: x}, nil
	case int8:
		return Value{typ: MetaInt8, v: x}, nil
	case uint16:
		return Value{typ: MetaUint16, v: x}, nil
	case int16:
		return Value{typ: MetaInt16, v: x}, nil
	case uint32:
		return Value{typ: MetaUint32, v: x}, nil
	case int32:
		return Value{typ: MetaInt32, v: x}, nil
	case float32:
		return Value{typ: MetaFloat32, v: x}, nil
	case bool:
		return Value{typ: MetaBool, v: x}, nil
	case string:
		return Value{typ: MetaString, v: x}, nil
	case uint64:
		return Value{typ: MetaUint64, v: x}, nil
	case int64:
		return Value{typ: MetaInt64, v: x}, nil
	case int:
		return Value{typ: MetaInt64, v: int64(x)}, nil
	case float64:
		return Value{typ: MetaFloat64, v: x}, nil
	case []uint8:
		return array(MetaUint8, x), nil
	case []int8:
		return array(MetaInt8, x), nil
	case []uint16:
		return array(MetaUint16, x), nil
	case []int16:
		return array(MetaInt16, x), nil
	case []uint32:
		return array(MetaUint32, x), nil
	case []int32:
		return array(MetaInt32, x), nil
	case []float32:
		return array(MetaFloat32, x), nil
	case []bool:
		return array(MetaBool, x), nil
	case []string:
		return array(MetaString, x), nil
	case []uint64:
		return array(MetaUint64, x), nil
	case []int64:
		return array(MetaInt64, x), nil
	case []int:
		ns := make([]int64, len(x))
		for i, n := range x {
			ns[i] = int64(n)
		}
		return array(MetaInt64, ns), nil
	case []float64:
		return array(MetaFloat64, x), nil
	case []Value:
		return arrayOfArrays(x)
	}
	return Value{}, fmt.Errorf("gguf: cannot store a %T as metadata", x)
}

func array(elem ValueType, s any) Value { return Value{typ: MetaArray, elem: elem, v: s} }

// arrayOfArrays checks that every element of vs is an array.
func arrayOfArrays(vs []Value) (Value, error) {
	for i, e := range vs {
		if e.typ != MetaArray || !e.Valid() {
			return Value{}, fmt.Errorf("gguf: element %d of an array of arrays is a %s", i, e.typ)
		}
	}
	return Value{typ: MetaArray, elem: MetaArray, v: vs}, nil
}
