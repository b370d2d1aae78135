package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is the alignment of tensor data when general.alignment is absent.
const DefaultAlignment = 32

// maxDims bounds a tensor's rank; ggml uses 4, the format leaves room for more.
const maxDims = 16

// maxNesting bounds arrays of arrays, so a crafted file cannot recurse without end.
const maxNesting = 32

// decoder reads little-endian GGUF fields from a byte slice. The first failure sticks:
// later reads return zero values, so parsing code checks err once per record.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: %s", d.off, fmt.Sprintf(format, args...))
	}
}

// take returns the next n bytes, or nil (and an error) if the data ends first.
func (d *decoder) take(n uint64, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail("%s needs %d bytes, only %d left (truncated file?)", what, n, len(d.b)-d.off)
		return nil
	}
	p := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return p
}

func (d *decoder) u8(what string) uint8 {
	if p := d.take(1, what); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) u16(what string) uint16 {
	if p := d.take(2, what); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (d *decoder) u32(what string) uint32 {
	if p := d.take(4, what); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) u64(what string) uint64 {
	if p := d.take(8, what); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (d *decoder) str(what string) string {
	n := d.u64(what + " length")
	return string(d.take(n, what))
}

// count reads an element count and checks that n elements of at least min bytes each
// fit in what is left, so that no allocation is sized by an unchecked number.
func (d *decoder) count(what string, least int) int {
	n := d.u64(what)
	if d.err != nil {
		return 0
	}
	if left := uint64(len(d.b) - d.off); n > left/uint64(least) {
		d.fail("%s is %d, but that many elements of at least %d bytes do not fit in the %d bytes left", what, n, least, left)
		return 0
	}
	return int(n)
}

// value reads a metadata value of type t.
func (d *decoder) value(t ValueType, depth int) Value {
	switch t {
	case MetaUint8:
		return Value{typ: t, v: d.u8("uint8")}
	case MetaInt8:
		return Value{typ: t, v: int8(d.u8("int8"))}
	case MetaUint16:
		return Value{typ: t, v: d.u16("uint16")}
	case MetaInt16:
		return Value{typ: t, v: int16(d.u16("int16"))}
	case MetaUint32:
		return Value{typ: t, v: d.u32("uint32")}
	case MetaInt32:
		return Value{typ: t, v: int32(d.u32("int32"))}
	case MetaFloat32:
		return Value{typ: t, v: math.Float32frombits(d.u32("float32"))}
	case MetaUint64:
		return Value{typ: t, v: d.u64("uint64")}
	case MetaInt64:
		return Value{typ: t, v: int64(d.u64("int64"))}
	case MetaFloat64:
		return Value{typ: t, v: math.Float64frombits(d.u64("float64"))}
	case MetaBool:
		b := d.u8("bool")
		if b > 1 {
			d.fail("bool value %d is neither 0 nor 1", b)
		}
		return Value{typ: t, v: b == 1}
	case MetaString:
		return Value{typ: t, v: d.str("string")}
	case MetaArray:
		return d.array(depth)
	}
	d.fail("unknown metadata value type %d", uint32(t))
	return Value{}
}

// array reads an array's element type, count and elements.
func (d *decoder) array(depth int) Value {
	if depth >= maxNesting {
		d.fail("arrays nested more than %d deep", maxNesting)
		return Value{}
	}
	elem := ValueType(d.u32("array element type"))
	if d.err == nil && elem >= numValueTypes {
		d.fail("unknown array element type %d", uint32(elem))
	}
	if d.err != nil {
		return Value{}
	}
	least := fixedSize[elem]
	switch elem {
	case MetaString:
		least = 8
	case MetaArray:
		least = 12
	}
	n := d.count("array length", least)
	if d.err != nil {
		return Value{}
	}
	var s any
	switch elem {
	case MetaString:
		a := make([]string, n)
		for i := range a {
			a[i] = d.str("string")
		}
		s = a
	case MetaArray:
		a := make([]Value, n)
		for i := range a {
			a[i] = d.array(depth + 1)
		}
		s = a
	case MetaBool:
		a := make([]bool, n)
		for i := range a {
			a[i], _ = d.value(elem, depth).Bool()
		}
		s = a
	default:
		s = d.numbers(elem, n)
	}
	if d.err != nil {
		return Value{}
	}
	return array(elem, s)
}

// numbers reads n fixed-size numbers of type t into a typed slice.
func (d *decoder) numbers(t ValueType, n int) any {
	p := d.take(uint64(n)*uint64(fixedSize[t]), "array of "+t.String())
	if p == nil {
		return nil
	}
	le := binary.LittleEndian
	switch t {
	case MetaUint8:
		return append([]uint8(nil), p...)
	case MetaInt8:
		return fill(n, func(i int) int8 { return int8(p[i]) })
	case MetaUint16:
		return fill(n, func(i int) uint16 { return le.Uint16(p[2*i:]) })
	case MetaInt16:
		return fill(n, func(i int) int16 { return int16(le.Uint16(p[2*i:])) })
	case MetaUint32:
		return fill(n, func(i int) uint32 { return le.Uint32(p[4*i:]) })
	case MetaInt32:
		return fill(n, func(i int) int32 { return int32(le.Uint32(p[4*i:])) })
	case MetaFloat32:
		return fill(n, func(i int) float32 { return math.Float32frombits(le.Uint32(p[4*i:])) })
	case MetaUint64:
		return fill(n, func(i int) uint64 { return le.Uint64(p[8*i:]) })
	case MetaInt64:
		return fill(n, func(i int) int64 { return int64(le.Uint64(p[8*i:])) })
	case MetaFloat64:
		return fill(n, func(i int) float64 { return math.Float64frombits(le.Uint64(p[8*i:])) })
	}
	panic("gguf: numbers of " + t.String()) // unreachable: callers pass fixed-size types
}

func fill[T any](n int, at func(int) T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = at(i)
	}
	return s
}

// ErrNotGGUF is returned for data that does not start with the GGUF magic.
var ErrNotGGUF = errors.New("gguf: not a GGUF file (bad magic)")

// parse reads the header, metadata and tensor infos of a GGUF file held in b and
// checks every tensor's extent against len(b).
func parse(b []byte) (*File, error) {
	if len(b) < 4 || string(b[:4]) != Magic {
		return nil, ErrNotGGUF
	}
	d := &decoder{b: b, off: 4}
	f := &File{data: b, alignment: DefaultAlignment}
	f.version = d.u32("version")
	switch {
	case d.err != nil:
	case f.version == 1:
		return nil, fmt.Errorf("gguf: version 1 files are not supported (versions 2 and 3 are); convert it with a current llama.cpp")
	case f.version&0xffff == 0 && f.version != 0:
		return nil, fmt.Errorf("gguf: version field %#x looks byte-swapped: big-endian GGUF files are not supported", f.version)
	case f.version != 2 && f.version != 3:
		return nil, fmt.Errorf("gguf: unsupported version %d (versions 2 and 3 are)", f.version)
	}
	nTensors := d.u64("tensor count")
	nKV := d.count("metadata count", 8+4+1)
	if d.err != nil {
		return nil, fmt.Errorf("gguf: header: %w", d.err)
	}
	f.meta = make([]KV, 0, nKV)
	f.metaIndex = make(map[string]int, nKV)
	for i := range nKV {
		key := d.str("key")
		t := ValueType(d.u32("value type"))
		v := d.value(t, 0)
		if d.err != nil {
			return nil, fmt.Errorf("gguf: metadata entry %d (%q): %w", i, key, d.err)
		}
		if _, dup := f.metaIndex[key]; dup {
			return nil, fmt.Errorf("gguf: metadata key %q appears twice", key)
		}
		f.metaIndex[key] = len(f.meta)
		f.meta = append(f.meta, KV{key, v})
	}
	if v, ok := f.metaIndex["general.alignment"]; ok {
		a, isU32 := f.meta[v].Value.Any().(uint32)
		if !isU32 || a == 0 || a&(a-1) != 0 {
			return nil, fmt.Errorf("gguf: general.alignment must be a power-of-two uint32, got %s %v", f.meta[v].Value.Type(), f.meta[v].Value)
		}
		f.alignment = int(a)
	}
	// A tensor info takes at least 8 (name length) + 4 (rank) + 4 (type) + 8 (offset) bytes.
	const minInfo = 24
	if left := uint64(len(b) - d.off); nTensors > left/minInfo {
		return nil, fmt.Errorf("gguf: tensor count %d cannot fit in the %d bytes left", nTensors, left)
	}
	f.tensors = make([]TensorInfo, 0, nTensors)
	f.tensorIndex = make(map[string]int, nTensors)
	for i := range int(nTensors) {
		ti, err := d.tensorInfo()
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %d (%q): %w", i, ti.Name, err)
		}
		if _, dup := f.tensorIndex[ti.Name]; dup {
			return nil, fmt.Errorf("gguf: tensor name %q appears twice", ti.Name)
		}
		f.tensorIndex[ti.Name] = len(f.tensors)
		f.tensors = append(f.tensors, ti)
	}
	f.dataOffset = alignUp(d.off, f.alignment)
	if nTensors > 0 && f.dataOffset > len(b) {
		return nil, fmt.Errorf("gguf: the tensor data section would start at byte %d, past the end of the %d-byte file (truncated?)", f.dataOffset, len(b))
	}
	for i := range f.tensors {
		ti := &f.tensors[i]
		if ti.Offset%uint64(f.alignment) != 0 {
			return nil, fmt.Errorf("gguf: tensor %q: data offset %d is not a multiple of the alignment %d", ti.Name, ti.Offset, f.alignment)
		}
		left := uint64(len(b) - f.dataOffset)
		if ti.Offset > left || (ti.Size >= 0 && uint64(ti.Size) > left-ti.Offset) {
			return nil, fmt.Errorf("gguf: tensor %q: data [%d, +%d) lies outside the file's %d data bytes (truncated?)", ti.Name, ti.Offset, ti.Size, left)
		}
	}
	return f, nil
}

// tensorInfo reads one tensor info and derives its element count and byte size.
func (d *decoder) tensorInfo() (TensorInfo, error) {
	var ti TensorInfo
	ti.Name = d.str("tensor name")
	rank := d.u32("rank")
	if d.err == nil && rank > maxDims {
		d.fail("rank %d exceeds %d", rank, maxDims)
	}
	dims := make([]uint64, 0, min(rank, maxDims))
	for range int(min(rank, maxDims)) {
		dims = append(dims, d.u64("dimension"))
	}
	ti.Type = Type(d.u32("type"))
	ti.Offset = d.u64("data offset")
	if d.err != nil {
		return ti, d.err
	}
	// The file lists dimensions innermost first; Shape is outermost first, as in gml.
	ti.Shape = make([]int, len(dims))
	n := uint64(1)
	for i, v := range dims {
		hi, lo := bits.Mul64(n, v)
		if hi != 0 || lo > math.MaxInt64 || v > math.MaxInt64 {
			return ti, fmt.Errorf("dimensions %v overflow the element count", dims)
		}
		n = lo
		ti.Shape[len(dims)-1-i] = int(v)
	}
	ti.Elements = int64(n)
	ti.Size = -1
	if !ti.Type.Known() {
		return ti, nil // readable metadata; TensorData reports the type
	}
	bs, row := uint64(ti.Type.BlockSize()), uint64(1) // a scalar is a row of one
	if len(dims) > 0 {
		row = dims[0]
	}
	if row%bs != 0 {
		return ti, fmt.Errorf("%s rows of %d elements are not whole blocks of %d", ti.Type, row, bs)
	}
	hi, size := bits.Mul64(n/bs, uint64(ti.Type.BlockBytes()))
	if hi != 0 || size > math.MaxInt64 {
		return ti, fmt.Errorf("%d elements of %s overflow the byte size", n, ti.Type)
	}
	ti.Size = int64(size)
	return ti, nil
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }
