package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/gml-dev/gml/tensor"
)

// maxNameBytes is the longest tensor name ggml reads (its names are 64 bytes with the
// terminating NUL).
const maxNameBytes = 63

// Writer builds a GGUF file (version 3): metadata set with Set, tensors added with
// AddTensor (encoded, and quantised if asked, as they are added) or AddRaw, then written
// with WriteTo or WriteFile. Tensors are laid out in the order added, each aligned to
// general.alignment (32 unless set), as ggml's own reader requires.
type Writer struct {
	meta      []KV
	metaIndex map[string]int
	tensors   []TensorInfo
	data      [][]byte
	names     map[string]bool
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer {
	return &Writer{metaIndex: map[string]int{}, names: map[string]bool{}}
}

// Set stores a metadata value (any Go value ValueOf accepts), replacing an earlier value
// of the same key. general.alignment must be a power-of-two uint32.
func (w *Writer) Set(key string, v any) error {
	if key == "" || len(key) > math.MaxUint16 {
		return fmt.Errorf("gguf: metadata key of %d bytes (1 to 65535 allowed)", len(key))
	}
	val, err := ValueOf(v)
	if err != nil {
		return fmt.Errorf("gguf: key %q: %w", key, err)
	}
	if key == "general.alignment" {
		a, ok := val.Any().(uint32)
		if !ok || a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: general.alignment must be a power-of-two uint32, got %T %v", v, v)
		}
	}
	if i, ok := w.metaIndex[key]; ok {
		w.meta[i].Value = val
		return nil
	}
	w.metaIndex[key] = len(w.meta)
	w.meta = append(w.meta, KV{key, val})
	return nil
}

// AddTensor encodes t as typ and adds it under name. Float types (F32, F16, BF16, F64)
// and the quantised types Q4_0, Q8_0 and Q4_K take any floating-point or quantised
// tensor (a tensor already in typ is stored as it is); quantised types need the
// innermost dimension to be whole blocks (32 weights, 256 for Q4_K). Integer types (I8
// to I64) take an I32 or I64 tensor whose values fit.
func (w *Writer) AddTensor(name string, t *tensor.Tensor, typ Type) error {
	if t == nil {
		return fmt.Errorf("gguf: tensor %q is nil", name)
	}
	shape := []int(t.Shape())
	info, err := w.check(name, shape, typ)
	if err != nil {
		return err
	}
	data := make([]byte, info.Size)
	if err := encode(typ, data, t); err != nil {
		return fmt.Errorf("gguf: tensor %q as %s: %w", name, typ, err)
	}
	w.add(info, data)
	return nil
}

// AddRaw adds a tensor whose data is already stored as typ (for example bytes copied
// from another file with File.RawData). data must be exactly the size shape and typ
// imply; it is copied.
func (w *Writer) AddRaw(name string, shape []int, typ Type, data []byte) error {
	if !typ.Known() {
		return fmt.Errorf("gguf: tensor %q: unknown type %s", name, typ)
	}
	info, err := w.check(name, shape, typ)
	if err != nil {
		return err
	}
	if int64(len(data)) != info.Size {
		return fmt.Errorf("gguf: tensor %q: %v of %s takes %d bytes, got %d", name, shape, typ, info.Size, len(data))
	}
	w.add(info, append([]byte(nil), data...))
	return nil
}

// check validates a new tensor's name, shape and type and returns its info.
func (w *Writer) check(name string, shape []int, typ Type) (TensorInfo, error) {
	info := TensorInfo{Name: name, Shape: append([]int(nil), shape...), Type: typ}
	switch {
	case name == "":
		return info, fmt.Errorf("gguf: a tensor needs a name")
	case len(name) > maxNameBytes:
		return info, fmt.Errorf("gguf: tensor name %q is %d bytes; ggml reads at most %d", name, len(name), maxNameBytes)
	case w.names[name]:
		return info, fmt.Errorf("gguf: tensor %q added twice", name)
	case len(shape) > 4:
		return info, fmt.Errorf("gguf: tensor %q has %d dimensions; ggml reads at most 4", name, len(shape))
	case !typ.Known():
		return info, fmt.Errorf("gguf: tensor %q: unknown type %s", name, typ)
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 || (d > 0 && n > math.MaxInt64/int64(d)) {
			return info, fmt.Errorf("gguf: tensor %q: bad shape %v", name, shape)
		}
		n *= int64(d)
	}
	row := 1
	if len(shape) > 0 {
		row = shape[len(shape)-1]
	}
	if bs := typ.BlockSize(); row%bs != 0 {
		return info, fmt.Errorf("gguf: tensor %q: %s stores rows in blocks of %d, but the innermost dimension of %v is %d", name, typ, bs, shape, row)
	}
	info.Elements = n
	info.Size = n / int64(typ.BlockSize()) * int64(typ.BlockBytes())
	return info, nil
}

func (w *Writer) add(info TensorInfo, data []byte) {
	w.names[info.Name] = true
	w.tensors = append(w.tensors, info)
	w.data = append(w.data, data)
}

// encode stores t's elements as typ into dst.
func encode(typ Type, dst []byte, t *tensor.Tensor) error {
	if t.DType().IsQuantized() {
		if typ.DType() == t.DType() {
			copy(dst, t.Bytes()) // already in the file's layout
			return nil
		}
		t = t.Convert(tensor.F32)
	}
	le := binary.LittleEndian
	switch typ {
	case I8, I16, I32, I64:
		return encodeInts(typ, dst, t)
	case F64:
		if !t.DType().IsFloat() {
			return fmt.Errorf("needs a floating-point tensor, have %s", t.DType())
		}
		for i, v := range t.Float64s() {
			le.PutUint64(dst[8*i:], math.Float64bits(v))
		}
		return nil
	}
	if !t.DType().IsFloat() {
		return fmt.Errorf("needs a floating-point tensor, have %s", t.DType())
	}
	x := t.Convert(tensor.F32).Float32s()
	switch typ {
	case F32:
		for i, v := range x {
			le.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	case F16:
		for i, v := range x {
			le.PutUint16(dst[2*i:], tensor.Float32ToF16(v))
		}
	case BF16:
		for i, v := range x {
			le.PutUint16(dst[2*i:], tensor.Float32ToBF16(v))
		}
	default:
		qf, ok := typ.Format()
		if !ok || !qf.CanEncode() {
			return fmt.Errorf("writing %s is not supported (F32, F16, BF16, F64, I8-I64, Q4_0, Q8_0 and Q4_K are)", typ)
		}
		return qf.Quantize(dst, x)
	}
	return nil
}

// encodeInts stores an integer tensor as I8 ... I64, refusing values that do not fit.
func encodeInts(typ Type, dst []byte, t *tensor.Tensor) error {
	var vals []int64
	switch t.DType() {
	case tensor.I64:
		vals = t.Int64s()
	case tensor.I32:
		vals = make([]int64, t.Len())
		for i, v := range t.Int32s() {
			vals[i] = int64(v)
		}
	default:
		return fmt.Errorf("needs an i32 or i64 tensor, have %s", t.DType())
	}
	bits := 8 * typ.BlockBytes()
	lo, hi := int64(-1)<<(bits-1), int64(uint64(1)<<(bits-1)-1)
	le := binary.LittleEndian
	for i, v := range vals {
		if v < lo || v > hi {
			return fmt.Errorf("element %d = %d does not fit", i, v)
		}
		switch typ {
		case I8:
			dst[i] = byte(v)
		case I16:
			le.PutUint16(dst[2*i:], uint16(v))
		case I32:
			le.PutUint32(dst[4*i:], uint32(v))
		case I64:
			le.PutUint64(dst[8*i:], uint64(v))
		}
	}
	return nil
}

// WriteFile writes the file to path.
func (w *Writer) WriteFile(path string) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if _, err := w.WriteTo(fh); err != nil {
		fh.Close()
		return fmt.Errorf("gguf: writing %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("gguf: writing %s: %w", path, err)
	}
	return nil
}

// WriteTo writes the file to out and returns the number of bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	align := DefaultAlignment
	if i, ok := w.metaIndex["general.alignment"]; ok {
		align = int(w.meta[i].Value.Any().(uint32))
	}
	e := &encoder{w: bufio.NewWriterSize(out, 1<<20)}
	e.bytes([]byte(Magic))
	e.u32(3)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.meta)))
	for _, kv := range w.meta {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		e.value(kv.Value)
	}
	var offset int64
	for _, ti := range w.tensors {
		e.str(ti.Name)
		e.u32(uint32(len(ti.Shape)))
		for i := len(ti.Shape) - 1; i >= 0; i-- { // innermost first
			e.u64(uint64(ti.Shape[i]))
		}
		e.u32(uint32(ti.Type))
		e.u64(uint64(offset))
		offset += int64(alignUp(int(ti.Size), align))
	}
	// ggml pads the header and every tensor, the last included, and reads the padding.
	e.pad(align)
	for _, d := range w.data {
		e.bytes(d)
		e.pad(align)
	}
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.n, e.err
}

// encoder writes little-endian GGUF fields, remembering the first error.
type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) bytes(p []byte) {
	if e.err != nil {
		return
	}
	k, err := e.w.Write(p)
	e.n += int64(k)
	e.err = err
}

func (e *encoder) u8(v uint8)   { e.bytes([]byte{v}) }
func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:], v); e.bytes(e.buf[:2]) }
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:], v); e.bytes(e.buf[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:], v); e.bytes(e.buf[:8]) }
func (e *encoder) str(s string) { e.u64(uint64(len(s))); e.bytes([]byte(s)) }

// pad writes zeros up to the next multiple of align.
func (e *encoder) pad(align int) {
	if k := alignUp(int(e.n), align) - int(e.n); k > 0 {
		e.bytes(make([]byte, k))
	}
}

// value writes a value's payload (its type is written by the caller).
func (e *encoder) value(v Value) {
	switch x := v.v.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	case bool:
		if x {
			e.u8(1)
		} else {
			e.u8(0)
		}
	case string:
		e.str(x)
	default:
		e.array(v)
	}
}

// array writes an array's element type, length and elements.
func (e *encoder) array(v Value) {
	e.u32(uint32(v.elem))
	e.u64(uint64(v.Len()))
	switch a := v.v.(type) {
	case []Value:
		for _, x := range a {
			e.array(x)
		}
	case []string:
		for _, s := range a {
			e.str(s)
		}
	case []bool:
		for _, b := range a {
			e.value(Value{v: b})
		}
	case []uint8:
		e.bytes(a)
	case []int8:
		for _, x := range a {
			e.u8(uint8(x))
		}
	case []uint16:
		for _, x := range a {
			e.u16(x)
		}
	case []int16:
		for _, x := range a {
			e.u16(uint16(x))
		}
	case []uint32:
		for _, x := range a {
			e.u32(x)
		}
	case []int32:
		for _, x := range a {
			e.u32(uint32(x))
		}
	case []float32:
		for _, x := range a {
			e.u32(math.Float32bits(x))
		}
	case []uint64:
		for _, x := range a {
			e.u64(x)
		}
	case []int64:
		for _, x := range a {
			e.u64(uint64(x))
		}
	case []float64:
		for _, x := range a {
			e.u64(math.Float64bits(x))
		}
	}
}
