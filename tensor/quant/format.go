package quant

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/gml-dev/gml/internal/half"
)

// Format is a block format of quantised weights.
type Format uint8

// The formats, named as ggml names them. The zero value is not a format.
const (
	Q4_0   Format = iota + 1 // 32 weights: f16 scale, 4-bit values centred on 8
	Q4_1                     // 32 weights: f16 scale and offset, 4-bit values
	Q5_0                     // 32 weights: f16 scale, 5-bit values centred on 16
	Q5_1                     // 32 weights: f16 scale and offset, 5-bit values
	Q8_0                     // 32 weights: f16 scale, int8 values
	Q8_1                     // 32 weights: f16 scale, f16 scaled sum, int8 values
	Q2_K                     // 256 weights: 16 sub-blocks, 4-bit scales and offsets, 2-bit values
	Q3_K                     // 256 weights: 16 sub-blocks, 6-bit scales, 3-bit values
	Q4_K                     // 256 weights: 8 sub-blocks, 6-bit scales and offsets, 4-bit values
	Q5_K                     // 256 weights: 8 sub-blocks, 6-bit scales and offsets, 5-bit values
	Q6_K                     // 256 weights: 16 sub-blocks, int8 scales, 6-bit values
	Q8_K                     // 256 weights: f32 scale, int8 values, int16 sums of 16
	IQ4_NL                   // 32 weights: f16 scale, 4-bit indices into a non-linear table
	IQ4_XS                   // 256 weights: 8 sub-blocks, 6-bit scales, IQ4_NL's table
	MXFP4                    // 32 weights: power-of-two scale, 4-bit E2M1 floats
	numFormats
)

// QK is the number of weights in a K-format super-block.
const QK = 256

type formatInfo struct {
	name       string
	blockSize  int
	blockBytes int
	decode     func(dst []float32, blk []byte) // one block
	encode     func(dst []byte, src []float32) // one block; nil where gml does not encode
}

var formats = [numFormats]formatInfo{
	Q4_0:   {"Q4_0", 32, 18, decodeQ4_0, encodeQ4_0},
	Q4_1:   {"Q4_1", 32, 20, decodeQ4_1, nil},
	Q5_0:   {"Q5_0", 32, 22, decodeQ5_0, nil},
	Q5_1:   {"Q5_1", 32, 24, decodeQ5_1, nil},
	Q8_0:   {"Q8_0", 32, 34, decodeQ8_0, encodeQ8_0},
	Q8_1:   {"Q8_1", 32, 36, decodeQ8_1, nil},
	Q2_K:   {"Q2_K", QK, 84, decodeQ2_K, nil},
	Q3_K:   {"Q3_K", QK, 110, decodeQ3_K, nil},
	Q4_K:   {"Q4_K", QK, 144, decodeQ4_K, encodeQ4_K},
	Q5_K:   {"Q5_K", QK, 176, decodeQ5_K, nil},
	Q6_K:   {"Q6_K", QK, 210, decodeQ6_K, nil},
	Q8_K:   {"Q8_K", QK, 292, decodeQ8_K, nil},
	IQ4_NL: {"IQ4_NL", 32, 18, decodeIQ4_NL, nil},
	IQ4_XS: {"IQ4_XS", QK, 136, decodeIQ4_XS, nil},
	MXFP4:  {"MXFP4", 32, 17, decodeMXFP4, nil},
}

// Formats lists every format, in declaration order.
func Formats() []Format {
	fs := make([]Format, 0, numFormats-1)
	for f := Format(1); f < numFormats; f++ {
		fs = append(fs, f)
	}
	return fs
}

// Valid reports whether f is one of the defined formats.
func (f Format) Valid() bool { return f > 0 && f < numFormats }

// String returns ggml's name for f ("Q4_K", "IQ4_XS").
func (f Format) String() string {
	if f.Valid() {
		return formats[f].name
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// ParseFormat returns the format named s, in ggml's spelling, any case ("q4_k").
func ParseFormat(s string) (Format, error) {
	for f := Format(1); f < numFormats; f++ {
		if strings.EqualFold(formats[f].name, s) {
			return f, nil
		}
	}
	return 0, fmt.Errorf("quant: unknown format %q", s)
}

// BlockSize is the number of weights in one block of f (0 for an invalid format).
func (f Format) BlockSize() int {
	if f.Valid() {
		return formats[f].blockSize
	}
	return 0
}

// BlockBytes is the number of bytes one block of f occupies (0 for an invalid format).
func (f Format) BlockBytes() int {
	if f.Valid() {
		return formats[f].blockBytes
	}
	return 0
}

// BitsPerWeight is the storage cost of one weight, scales included.
func (f Format) BitsPerWeight() float64 {
	if !f.Valid() {
		return 0
	}
	return 8 * float64(formats[f].blockBytes) / float64(formats[f].blockSize)
}

// CanEncode reports whether Quantize supports f.
func (f Format) CanEncode() bool { return f.Valid() && formats[f].encode != nil }

// Bytes returns the size in bytes of n weights stored in f. n must be a whole number of
// blocks.
func (f Format) Bytes(n int) (int, error) {
	if !f.Valid() {
		return 0, fmt.Errorf("quant: invalid format %d", uint8(f))
	}
	bs := formats[f].blockSize
	if n < 0 || n%bs != 0 {
		return 0, fmt.Errorf("quant: %s stores whole blocks of %d weights; %d is not a multiple", f, bs, n)
	}
	return n / bs * formats[f].blockBytes, nil
}

// Dequantize decodes src, a whole number of blocks of f, into dst, which must hold
// exactly the weights those blocks store.
func (f Format) Dequantize(dst []float32, src []byte) error {
	nb, err := f.blocks(len(dst), len(src))
	if err != nil {
		return err
	}
	fi := &formats[f]
	for b := 0; b < nb; b++ {
		fi.decode(dst[b*fi.blockSize:(b+1)*fi.blockSize], src[b*fi.blockBytes:(b+1)*fi.blockBytes])
	}
	return nil
}

// Quantize encodes src into dst, which must be exactly f.Bytes(len(src)) long. Only the
// formats for which CanEncode is true are supported.
func (f Format) Quantize(dst []byte, src []float32) error {
	if f.Valid() && formats[f].encode == nil {
		return fmt.Errorf("quant: encoding %s is not supported (Q4_0, Q8_0 and Q4_K are)", f)
	}
	nb, err := f.blocks(len(src), len(dst))
	if err != nil {
		return err
	}
	fi := &formats[f]
	for b := 0; b < nb; b++ {
		fi.encode(dst[b*fi.blockBytes:(b+1)*fi.blockBytes], src[b*fi.blockSize:(b+1)*fi.blockSize])
	}
	return nil
}

// blocks checks that n weights and m bytes are the same whole number of blocks of f.
func (f Format) blocks(n, m int) (int, error) {
	want, err := f.Bytes(n)
	if err != nil {
		return 0, err
	}
	if m != want {
		return 0, fmt.Errorf("quant: %d weights of %s take %d bytes, got %d", n, f, want, m)
	}
	return n / formats[f].blockSize, nil
}

// f16 reads the little-endian float16 at b[0:2].
func f16(b []byte) float32 { return half.FromF16(binary.LittleEndian.Uint16(b)) }

// putF16 writes v rounded to float16 at b[0:2] and returns the value stored.
func putF16(b []byte, v float32) float32 {
	h := half.ToF16(v)
	binary.LittleEndian.PutUint16(b, h)
	return half.FromF16(h)
}
