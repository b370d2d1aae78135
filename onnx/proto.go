package onnx

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gml-dev/gml/onnx/internal/onnxpb"
	"github.com/gml-dev/gml/tensor"
)

// ReadArray decodes a serialised TensorProto (the input_K.pb and output_K.pb files of
// the ONNX test layout). External data is not allowed here.
func ReadArray(path string) (*Array, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	var tp onnxpb.TensorProto
	if err := unmarshal(data, &tp); err != nil {
		return nil, fmt.Errorf("onnx: %s: not a TensorProto: %w", path, err)
	}
	a, err := decodeTensor(&tp, "")
	if err != nil {
		return nil, fmt.Errorf("onnx: %s: %w", path, err)
	}
	return a, nil
}

// decodeTensor converts a TensorProto to an Array. dir is the directory external data
// locations are relative to ("" forbids external data).
func decodeTensor(tp *onnxpb.TensorProto, dir string) (*Array, error) {
	dt := DataType(tp.GetDataType())
	name := tp.GetName()
	if !dt.Supported() {
		return nil, fmt.Errorf("tensor %q: element type %v is %w", name, dt, ErrUnsupported)
	}
	if tp.Segment != nil {
		return nil, fmt.Errorf("tensor %q: segmented tensors are %w", name, ErrUnsupported)
	}
	s := make(tensor.Shape, len(tp.Dims))
	for i, d := range tp.Dims {
		if d < 0 || d > int64(maxElements) {
			return nil, fmt.Errorf("tensor %q: dimension %d is out of range", name, d)
		}
		s[i] = int(d)
	}
	n, err := checkedSize(s)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	if tp.GetDataLocation() == onnxpb.TensorProto_EXTERNAL || len(tp.ExternalData) > 0 {
		raw, err := readExternal(tp, dir, rawBytes(dt, n))
		if err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		return decodeRaw(dt, s, raw), nil
	}
	if tp.RawData != nil {
		if want := rawBytes(dt, n); len(tp.RawData) != want {
			return nil, fmt.Errorf("tensor %q: %v%v needs %d bytes of raw data, has %d", name, dt, s, want, len(tp.RawData))
		}
		return decodeRaw(dt, s, tp.RawData), nil
	}
	return decodeFields(tp, dt, s, n)
}

// decodeFields reads the typed repeated fields (float_data, int32_data, ...).
func decodeFields(tp *onnxpb.TensorProto, dt DataType, s tensor.Shape, n int) (*Array, error) {
	name := tp.GetName()
	count := func(have, per int) error {
		if have != (n+per-1)/per {
			return fmt.Errorf("tensor %q: %v%v needs %d values, has %d", name, dt, s, n, have*per)
		}
		return nil
	}
	a := &Array{dtype: dt}
	switch dt {
	case Float:
		if err := count(len(tp.FloatData), 1); err != nil {
			return nil, err
		}
		t, _ := tensor.FromFloat32s(s, tp.FloatData)
		a.t = t
	case Double:
		if err := count(len(tp.DoubleData), 1); err != nil {
			return nil, err
		}
		a.t = tensor.New(tensor.F32, s...)
		for i, v := range tp.DoubleData {
			a.t.Float32s()[i] = float32(v)
		}
	case Int64:
		if err := count(len(tp.Int64Data), 1); err != nil {
			return nil, err
		}
		a.t = tensor.New(tensor.I64, s...)
		copy(a.t.Int64s(), tp.Int64Data)
	case Uint32, Uint64:
		if err := count(len(tp.Uint64Data), 1); err != nil {
			return nil, err
		}
		a.t = tensor.New(tensor.I64, s...)
		for i, v := range tp.Uint64Data {
			a.t.Int64s()[i] = int64(v)
		}
	case Int32:
		if err := count(len(tp.Int32Data), 1); err != nil {
			return nil, err
		}
		a.t = tensor.New(tensor.I32, s...)
		copy(a.t.Int32s(), tp.Int32Data)
	default:
		// The remaining types sit in int32_data: one element per value, except 4-bit
		// (two) and 2-bit (four) types, packed into the low byte.
		per := 1
		switch typeInfos[dt].bits {
		case 4:
			per = 2
		case 2:
			per = 4
		}
		if err := count(len(tp.Int32Data), per); err != nil {
			return nil, err
		}
		a.t = tensor.New(dt.Carrier(), s...)
		for i := 0; i < n; i++ {
			v := uint32(tp.Int32Data[i/per])
			switch dt {
			case Float16, BFloat16:
				a.t.Uint16s()[i] = uint16(v)
			case Bool:
				b := byte(0)
				if v != 0 {
					b = 1
				}
				a.t.Bytes()[i] = b
			default:
				if per > 1 {
					v = v >> (uint(i%per) * uint(8/per)) & (1<<(8/per) - 1)
				}
				a.setBits(i, v)
			}
		}
	}
	return a, nil
}

// readExternal reads the bytes of an external-data tensor: the file named by
// "location", relative to dir, from "offset" for "length" bytes (default: the rest).
func readExternal(tp *onnxpb.TensorProto, dir string, want int) ([]byte, error) {
	if dir == "" {
		return nil, fmt.Errorf("external data is not allowed here")
	}
	var loc string
	var off, length int64 = 0, -1
	for _, kv := range tp.ExternalData {
		var err error
		switch kv.GetKey() {
		case "location":
			loc = kv.GetValue()
		case "offset":
			off, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.GetValue(), 10, 64)
		}
		if err != nil {
			return nil, fmt.Errorf("external data %s %q: %w", kv.GetKey(), kv.GetValue(), err)
		}
	}
	if loc == "" {
		return nil, fmt.Errorf("external data without a location")
	}
	clean := filepath.Clean(filepath.FromSlash(loc))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("external data location %q leaves the model's directory", loc)
	}
	if length < 0 {
		length = int64(want)
	}
	if length != int64(want) || off < 0 || off > math.MaxInt64-length {
		return nil, fmt.Errorf("external data %q: offset %d, length %d, want %d bytes", loc, off, length, want)
	}
	f, err := os.Open(filepath.Join(dir, clean))
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	if off+length > st.Size() {
		return nil, fmt.Errorf("external data %q: bytes %d to %d are past its end (%d bytes)", loc, off, off+length, st.Size())
	}
	buf := make([]byte, length)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("external data %q: %w", loc, err)
	}
	return buf, nil
}
