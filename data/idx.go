package data

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"

	"github.com/gml-dev/gml/tensor"
)

// IDX element type codes (the third byte of the magic number).
const (
	idxUint8   = 0x08
	idxInt8    = 0x09
	idxInt16   = 0x0B
	idxInt32   = 0x0C
	idxFloat32 = 0x0D
	idxFloat64 = 0x0E
)

var idxSizes = map[byte]int{idxUint8: 1, idxInt8: 1, idxInt16: 2, idxInt32: 4, idxFloat32: 4, idxFloat64: 8}

// ReadIDX reads an IDX file (the MNIST format), gzip-compressed or raw, and returns its
// contents converted to dt with the file's dimensions as the shape.
func ReadIDX(path string, dt tensor.DType) (*tensor.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, missingFile(path, err)
	}
	defer f.Close()
	t, err := DecodeIDX(f, dt)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	return t, nil
}

// DecodeIDX reads IDX data from r (gzip-compressed or raw) and converts it to dt.
func DecodeIDX(r io.Reader, dt tensor.DType) (*tensor.Tensor, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("invalid dtype %v", dt)
	}
	br := bufio.NewReader(interruptible(r))
	head, err := br.Peek(2)
	if err != nil {
		return nil, fmt.Errorf("reading IDX header: %w", err)
	}
	var src io.Reader = br
	if head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		src = bufio.NewReader(zr)
	}
	var magic [4]byte
	if _, err := io.ReadFull(src, magic[:]); err != nil {
		return nil, fmt.Errorf("reading IDX magic: %w", err)
	}
	size, ok := idxSizes[magic[2]]
	if magic[0] != 0 || magic[1] != 0 || !ok || magic[3] == 0 {
		return nil, fmt.Errorf("not an IDX file (magic % x)", magic)
	}
	shape := make(tensor.Shape, magic[3])
	for i := range shape {
		var d uint32
		if err := binary.Read(src, binary.BigEndian, &d); err != nil {
			return nil, fmt.Errorf("reading dimension %d: %w", i, err)
		}
		if d > 1<<30 {
			return nil, fmt.Errorf("dimension %d is %d, too large", i, d)
		}
		shape[i] = int(d)
	}
	n := shape.Size()
	raw := make([]byte, n*size)
	if _, err := io.ReadFull(src, raw); err != nil {
		return nil, fmt.Errorf("reading %d elements of shape %v: %w", n, shape, err)
	}
	out := tensor.New(dt, shape...)
	for i := 0; i < n; i++ {
		out.SetFloat(i, idxElement(raw[i*size:(i+1)*size], magic[2]))
	}
	return out, nil
}

// idxElement decodes one big-endian element of IDX type code.
func idxElement(b []byte, code byte) float64 {
	switch code {
	case idxUint8:
		return float64(b[0])
	case idxInt8:
		return float64(int8(b[0]))
	case idxInt16:
		return float64(int16(binary.BigEndian.Uint16(b)))
	case idxInt32:
		return float64(int32(binary.BigEndian.Uint32(b)))
	case idxFloat32:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	default:
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
}

// missingFile wraps an open error; a missing file names the Debian package to install.
func missingFile(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("data: %s not found: install the Debian package dataset-fashion-mnist (apt-get install dataset-fashion-mnist), or point GML_FASHION_MNIST at a directory holding the IDX files", path)
	}
	return fmt.Errorf("data: %w", err)
}
