package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	goruntime "runtime"
	"sync"

	"github.com/gml-dev/gml/tensor"
)

// File is an open GGUF file: its metadata and tensor infos, parsed when opened, and its
// tensor data, memory-mapped and decoded on demand. A File is safe for concurrent use.
// It renders as a summary table in a notebook.
type File struct {
	path        string
	version     uint32
	alignment   int
	meta        []KV
	metaIndex   map[string]int
	tensors     []TensorInfo
	tensorIndex map[string]int
	dataOffset  int // start of the tensor data section

	mu      sync.RWMutex // Close waits for decoders reading data
	data    []byte       // the whole file; nil once closed
	unmap   func() error // releases a mapping; nil for Parse's bytes
	cleanup goruntime.Cleanup
}

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name     string
	Shape    []int  // outermost first, as in gml (the file stores the reverse)
	Type     Type   // element type
	Offset   uint64 // of the data, from the start of the data section
	Elements int64  // product of Shape
	Size     int64  // bytes of data; -1 for a type this package does not know
}

// ErrClosed is returned by data accessors after Close.
var ErrClosed = errors.New("gguf: file is closed")

// Open memory-maps the GGUF file at path (versions 2 and 3) and parses its header,
// metadata and tensor infos. Tensor data is read only when asked for. Close releases
// the mapping; an unreachable File releases it too.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if st.Size() > math.MaxInt {
		return nil, fmt.Errorf("gguf: %s: %d bytes is too large to map", path, st.Size())
	}
	data, unmap, err := mapFile(fh, int(st.Size()))
	if err != nil {
		return nil, fmt.Errorf("gguf: mapping %s: %w", path, err)
	}
	f, err := parse(data)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.path, f.unmap = path, unmap
	if unmap != nil {
		f.cleanup = goruntime.AddCleanup(f, func(u func() error) { u() }, unmap)
	}
	return f, nil
}

// Parse reads a GGUF file held in memory. The File reads tensor data from b, which must
// not change while the File is in use.
func Parse(b []byte) (*File, error) { return parse(b) }

// Close releases the file's mapping. Metadata and tensor infos stay readable; tensor
// data accessors return ErrClosed.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.data == nil {
		return nil
	}
	f.data = nil
	if f.unmap == nil {
		return nil
	}
	f.cleanup.Stop()
	err := f.unmap()
	f.unmap = nil
	return err
}

// Path is the path the file was opened from ("" for Parse).
func (f *File) Path() string { return f.path }

// Version is the format version, 2 or 3.
func (f *File) Version() int { return int(f.version) }

// Alignment is the alignment of tensor data in bytes.
func (f *File) Alignment() int { return f.alignment }

// Metadata returns every metadata entry in file order.
func (f *File) Metadata() []KV { return append([]KV(nil), f.meta...) }

// Keys returns the metadata keys in file order.
func (f *File) Keys() []string {
	keys := make([]string, len(f.meta))
	for i, kv := range f.meta {
		keys[i] = kv.Key
	}
	return keys
}

// Meta returns the value of a metadata key; a missing key gives the zero Value, whose
// Valid is false and whose accessors report false.
func (f *File) Meta(key string) Value {
	if i, ok := f.metaIndex[key]; ok {
		return f.meta[i].Value
	}
	return Value{}
}

// Architecture is general.architecture ("llama", "mamba", ...), or "" if absent.
func (f *File) Architecture() string {
	s, _ := f.Meta("general.architecture").Text()
	return s
}

// Tensors returns the tensor infos in file order.
func (f *File) Tensors() []TensorInfo { return append([]TensorInfo(nil), f.tensors...) }

// TensorInfo returns the info of the tensor called name.
func (f *File) TensorInfo(name string) (TensorInfo, bool) {
	if i, ok := f.tensorIndex[name]; ok {
		return f.tensors[i], true
	}
	return TensorInfo{}, false
}

// info is TensorInfo with an error that names what is missing.
func (f *File) info(name string) (TensorInfo, error) {
	ti, ok := f.TensorInfo(name)
	if !ok {
		return ti, fmt.Errorf("gguf: no tensor %q in the file (%d tensors; Tensors lists them)", name, len(f.tensors))
	}
	return ti, nil
}

// RawData returns a copy of a tensor's stored bytes, blocks and all.
func (f *File) RawData(name string) ([]byte, error) {
	ti, err := f.info(name)
	if err != nil {
		return nil, err
	}
	if ti.Size < 0 {
		return nil, fmt.Errorf("gguf: tensor %q: unsupported type %s (its size is unknown)", name, ti.Type)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.data == nil {
		return nil, ErrClosed
	}
	return append([]byte(nil), f.bytesOf(ti)...), nil
}

// bytesOf is the tensor's data in the mapping; the caller holds mu and checked data.
func (f *File) bytesOf(ti TensorInfo) []byte {
	start := f.dataOffset + int(ti.Offset)
	return f.data[start : start+int(ti.Size)]
}

// TensorData returns a tensor's elements decoded to float32, in row-major order
// (outermost dimension first). Every plain type (F32, F16, BF16, F64, I8 to I64) and
// every block format of package quant is decoded; other types (most IQ formats) give an
// "unsupported type" error naming the tensor and the type.
func (f *File) TensorData(name string) ([]float32, error) {
	ti, err := f.info(name)
	if err != nil {
		return nil, err
	}
	if !ti.Type.Decodable() {
		return nil, fmt.Errorf("gguf: tensor %q: unsupported type %s (decodable: F32, F16, BF16, F64, I8-I64, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K-Q8_K, IQ4_NL, IQ4_XS, MXFP4)", name, ti.Type)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.data == nil {
		return nil, ErrClosed
	}
	out := make([]float32, ti.Elements)
	if err := decode(ti.Type, out, f.bytesOf(ti)); err != nil {
		return nil, fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	return out, nil
}

// engineTypes are the file types gml tensors hold as they are.
var engineTypes = map[Type]tensor.DType{
	F32: tensor.F32, F16: tensor.F16, BF16: tensor.BF16, I32: tensor.I32, I64: tensor.I64,
	Q4_0: tensor.Q4_0, Q8_0: tensor.Q8_0, Q4_K: tensor.Q4_K,
}

// DType is the gml dtype a tensor of type t loads as with File.Tensor: t itself where
// gml has it (F32, F16, BF16, I32, I64, Q4_0, Q8_0, Q4_K), else F32.
func (t Type) DType() tensor.DType {
	if dt, ok := engineTypes[t]; ok {
		return dt
	}
	return tensor.F32
}

// Tensor returns a tensor as a gml host tensor of its shape. Types gml has keep their
// stored form, blocks included: Q4_0, Q8_0 and Q4_K weights stay quantised (a graph
// multiplies them with MatMul, decoding inside the kernel), as F16 and BF16 stay half.
// Every other decodable type is decoded to F32 (Type.DType says which it will be).
func (f *File) Tensor(name string) (*tensor.Tensor, error) {
	ti, err := f.info(name)
	if err != nil {
		return nil, err
	}
	if _, native := engineTypes[ti.Type]; !native {
		data, err := f.TensorData(name)
		if err != nil {
			return nil, err
		}
		return tensor.FromFloat32s(tensor.Shape(ti.Shape), data)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.data == nil {
		return nil, ErrClosed
	}
	t, err := tensor.FromBytes(ti.Type.DType(), tensor.Shape(ti.Shape), f.bytesOf(ti))
	if err != nil {
		return nil, fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	return t, nil
}

// parallelMin is the element count above which decoding is split across cores.
const parallelMin = 1 << 16

// decode converts src, stored as t, into dst, in parallel for large tensors. Block
// formats split on block boundaries, so every worker decodes whole blocks.
func decode(t Type, dst []float32, src []byte) error {
	bs, bb := t.BlockSize(), t.BlockBytes()
	nb := len(dst) / bs
	workers := min(goruntime.GOMAXPROCS(0), max(1, len(dst)/parallelMin))
	per := (nb + workers - 1) / max(workers, 1)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := min(w*per, nb), min((w+1)*per, nb)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = decodeRange(t, dst[lo*bs:hi*bs], src[lo*bb:hi*bb])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// decodeRange decodes one contiguous run of whole blocks.
func decodeRange(t Type, dst []float32, src []byte) error {
	if qf, ok := t.Format(); ok {
		return qf.Dequantize(dst, src)
	}
	le := binary.LittleEndian
	switch t {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(le.Uint32(src[4*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = tensor.F16ToFloat32(le.Uint16(src[2*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = tensor.BF16ToFloat32(le.Uint16(src[2*i:]))
		}
	case F64:
		for i := range dst {
			dst[i] = float32(math.Float64frombits(le.Uint64(src[8*i:])))
		}
	case I8:
		for i := range dst {
			dst[i] = float32(int8(src[i]))
		}
	case I16:
		for i := range dst {
			dst[i] = float32(int16(le.Uint16(src[2*i:])))
		}
	case I32:
		for i := range dst {
			dst[i] = float32(int32(le.Uint32(src[4*i:])))
		}
	case I64:
		for i := range dst {
			dst[i] = float32(int64(le.Uint64(src[8*i:])))
		}
	default:
		return fmt.Errorf("unsupported type %s", t)
	}
	return nil
}
