package quant

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/internal/half"
)

// The reference decoders below compute one weight at a time, in float64, straight from
// each layout's definition (ggml's block_* structs and their documented meaning). They
// share no code with the block decoders they check.

// refHalf decodes an IEEE binary16 from its fields.
func refHalf(b []byte, off int) float64 {
	h := uint16(b[off]) | uint16(b[off+1])<<8
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, man := int(h>>10&31), float64(h&1023)
	switch exp {
	case 0:
		return sign * math.Ldexp(man, -24)
	case 31:
		if man != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1+man/1024, exp-15)
}

// nibble returns the 4-bit value of weight i of a 32-weight group whose 16 bytes start
// at off: weights 0-15 are the low nibbles, 16-31 the high nibbles.
func nibble(b []byte, off, i int) int {
	v := b[off+i%16]
	if i < 16 {
		return int(v & 15)
	}
	return int(v >> 4)
}

func bit(v uint64, i int) int { return int(v >> i & 1) }

var refIQ4 = []float64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// refFP4 decodes an E2M1 value: sign, 2 exponent bits (bias 1), 1 mantissa bit.
func refFP4(v int) float64 {
	sign := 1.0
	if v&8 != 0 {
		sign = -1
	}
	exp, man := v>>1&3, float64(v&1)
	if exp == 0 {
		return sign * man * 0.5
	}
	return sign * (1 + man/2) * math.Ldexp(1, exp-1)
}

// refQ3Scales unpacks Q3_K's scales the way its definition states them: three
// little-endian words whose nibbles and 2-bit fields are recombined word-wise.
func refQ3Scale(b []byte, i int) float64 {
	a0 := binary.LittleEndian.Uint32(b[0:])
	a1 := binary.LittleEndian.Uint32(b[4:])
	a2 := binary.LittleEndian.Uint32(b[8:])
	const lo4, lo2 = 0x0f0f0f0f, 0x03030303
	words := [4]uint32{
		a0&lo4 | (a2>>0&lo2)<<4,
		a1&lo4 | (a2>>2&lo2)<<4,
		a0>>4&lo4 | (a2>>4&lo2)<<4,
		a1>>4&lo4 | (a2>>6&lo2)<<4,
	}
	return float64(int(words[i/4]>>(8*(i%4))&0xff) - 32)
}

// refKScale returns the 6-bit scale and offset of sub-block j of a Q4_K/Q5_K 12-byte
// field: four 6-bit scales, four 6-bit offsets, then four bytes of low nibbles for the
// last four of each, whose high 2 bits ride in the top bits of the first eight bytes.
func refKScale(s []byte, j int) (float64, float64) {
	if j < 4 {
		return float64(s[j] % 64), float64(s[4+j] % 64)
	}
	k := j - 4
	sc := int(s[8+k]%16) + 16*int(s[k]/64)
	m := int(s[8+k]/16) + 16*int(s[4+k]/64)
	return float64(sc), float64(m)
}

// refWeight returns weight e of one block b of format f.
func refWeight(f Format, b []byte, e int) float64 {
	switch f {
	case Q4_0:
		return refHalf(b, 0) * float64(nibble(b, 2, e)-8)
	case Q4_1:
		return refHalf(b, 0)*float64(nibble(b, 4, e)) + refHalf(b, 2)
	case Q5_0:
		qh := uint64(binary.LittleEndian.Uint32(b[2:]))
		return refHalf(b, 0) * float64(nibble(b, 6, e)+16*bit(qh, e)-16)
	case Q5_1:
		qh := uint64(binary.LittleEndian.Uint32(b[4:]))
		return refHalf(b, 0)*float64(nibble(b, 8, e)+16*bit(qh, e)) + refHalf(b, 2)
	case Q8_0:
		return refHalf(b, 0) * float64(int8(b[2+e]))
	case Q8_1:
		return refHalf(b, 0) * float64(int8(b[4+e]))
	case IQ4_NL:
		return refHalf(b, 0) * refIQ4[nibble(b, 2, e)]
	case MXFP4:
		return math.Ldexp(1, int(b[0])-127) * refFP4(nibble(b, 1, e))
	case Q2_K:
		sc := b[e/16]
		q := b[16+32*(e/128)+e%32] >> (2 * (e % 128 / 32)) & 3
		return refHalf(b, 80)*float64(sc%16)*float64(q) - refHalf(b, 82)*float64(sc/16)
	case Q3_K:
		low := int(b[32+32*(e/128)+e%32] >> (2 * (e % 128 / 32)) & 3)
		high := bit(uint64(b[e%32]), 4*(e/128)+e%128/32)
		return refHalf(b, 108) * refQ3Scale(b[96:108], e/16) * float64(low-4*(1-high))
	case Q4_K, Q5_K:
		sc, m := refKScale(b[4:16], e/32)
		qsOff := 16
		q := 0
		if f == Q5_K {
			qsOff = 48
			q = 16 * bit(uint64(b[16+e%32]), e/32)
		}
		v := b[qsOff+32*(e/64)+e%32]
		if e%64 < 32 {
			q += int(v % 16)
		} else {
			q += int(v / 16)
		}
		return refHalf(b, 0)*sc*float64(q) - refHalf(b, 2)*m
	case Q6_K:
		h, s, l := e/128, e%128/32, e%32
		v := b[64*h+l+32*(s%2)]
		lo := int(v % 16)
		if s >= 2 {
			lo = int(v / 16)
		}
		hi := int(b[128+32*h+l] >> (2 * s) & 3)
		return refHalf(b, 208) * float64(int8(b[192+e/16])) * float64(lo+16*hi-32)
	case Q8_K:
		d := float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		return d * float64(int8(b[4+e]))
	case IQ4_XS:
		j := e / 32
		sh := uint64(binary.LittleEndian.Uint16(b[2:]))
		ls := int(b[4+j/2]>>(4*(j%2))&15) + 16*(bit(sh, 2*j)+2*bit(sh, 2*j+1))
		return refHalf(b, 0) * float64(ls-32) * refIQ4[nibble(b, 8+16*j, e%32)]
	}
	panic("no reference for " + f.String())
}

// refBlockBytes is each layout's size, summed field by field from its definition.
var refBlockBytes = map[Format]int{
	Q4_0: 2 + 16, Q4_1: 2 + 2 + 16, Q5_0: 2 + 4 + 16, Q5_1: 2 + 2 + 4 + 16,
	Q8_0: 2 + 32, Q8_1: 2 + 2 + 32, IQ4_NL: 2 + 16, MXFP4: 1 + 16,
	Q2_K: 16 + 64 + 2 + 2, Q3_K: 32 + 64 + 12 + 2, Q4_K: 2 + 2 + 12 + 128,
	Q5_K: 2 + 2 + 12 + 32 + 128, Q6_K: 128 + 64 + 16 + 2, Q8_K: 4 + 256 + 2*16,
	IQ4_XS: 2 + 2 + 4 + 128,
}

// scaleFields are the byte offsets of each format's float16 scales, which random
// blocks fill with finite values so that the comparison is of finite numbers.
var scaleFields = map[Format][]int{
	Q4_0: {0}, Q4_1: {0, 2}, Q5_0: {0}, Q5_1: {0, 2}, Q8_0: {0}, Q8_1: {0, 2},
	IQ4_NL: {0}, Q2_K: {80, 82}, Q3_K: {108}, Q4_K: {0, 2}, Q5_K: {0, 2}, Q6_K: {208},
	IQ4_XS: {0},
}

// randomBlock fills a block of f with random bits and finite random scales.
func randomBlock(rng *rand.Rand, f Format) []byte {
	b := make([]byte, f.BlockBytes())
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	for _, off := range scaleFields[f] {
		binary.LittleEndian.PutUint16(b[off:], half.ToF16(float32(rng.NormFloat64())))
	}
	switch f {
	case Q8_K:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(rng.NormFloat64()/100)))
	case MXFP4:
		b[0] = byte(100 + rng.IntN(50)) // scales 2^-27 .. 2^22
	}
	return b
}

func TestBlockSizesMatchTheirDefinitions(t *testing.T) {
	for _, f := range Formats() {
		if f.BlockBytes() != refBlockBytes[f] {
			t.Errorf("%s: %d bytes per block, definition says %d", f, f.BlockBytes(), refBlockBytes[f])
		}
		want := 32
		if f >= Q2_K && f <= Q8_K || f == IQ4_XS {
			want = QK
		}
		if f.BlockSize() != want {
			t.Errorf("%s: %d weights per block, want %d", f, f.BlockSize(), want)
		}
	}
}

func TestDequantizeMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, f := range Formats() {
		t.Run(f.String(), func(t *testing.T) {
			const nblocks = 64
			src := make([]byte, 0, nblocks*f.BlockBytes())
			for range nblocks {
				src = append(src, randomBlock(rng, f)...)
			}
			zero := make([]byte, f.BlockBytes()) // an all-zero block decodes to zeros
			src = append(src, zero...)
			n := (nblocks + 1) * f.BlockSize()
			dst := make([]float32, n)
			if err := f.Dequantize(dst, src); err != nil {
				t.Fatal(err)
			}
			bs, bb := f.BlockSize(), f.BlockBytes()
			ref := make([]float64, n)
			for i := range ref {
				ref[i] = refWeight(f, src[i/bs*bb:(i/bs+1)*bb], i%bs)
			}
			for i, got := range dst {
				// float32 rounding of the scale products, relative to the block's largest
				// weight since an offset can cancel most of a weight.
				var peak float64
				for _, v := range ref[i/bs*bs : (i/bs+1)*bs] {
					peak = max(peak, math.Abs(v))
				}
				want := ref[i]
				if math.Abs(float64(got)-want) > 1e-6*peak {
					t.Fatalf("weight %d (block %d, element %d): got %g, reference %g", i, i/bs, i%bs, got, want)
				}
			}
			for i := n - bs; i < n; i++ {
				if dst[i] != 0 {
					t.Fatalf("zero block decodes element %d to %g", i-(n-bs), dst[i])
				}
			}
		})
	}
}

func TestLengthErrors(t *testing.T) {
	cases := []struct {
		f       Format
		weights int
		bytes   int
	}{
		{Q4_0, 31, 18},     // not whole blocks
		{Q4_0, 32, 17},     // truncated
		{Q4_K, 256, 145},   // too long
		{Q8_0, -32, 0},     // negative
		{Format(0), 32, 0}, // not a format
		{numFormats, 32, 0},
	}
	for _, c := range cases {
		if err := c.f.Dequantize(make([]float32, max(c.weights, 0)), make([]byte, c.bytes)); err == nil && c.weights >= 0 {
			t.Errorf("%s Dequantize %d weights from %d bytes: no error", c.f, c.weights, c.bytes)
		}
		if _, err := c.f.Bytes(c.weights); err == nil && c.weights%max(c.f.BlockSize(), 1) != 0 {
			t.Errorf("%s Bytes(%d): no error", c.f, c.weights)
		}
	}
	if err := Q6_K.Quantize(make([]byte, 210), make([]float32, 256)); err == nil {
		t.Error("Q6_K Quantize: no error, encoding it is not supported")
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats() {
		g, err := ParseFormat(f.String())
		if err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), g, err)
		}
	}
	if f, err := ParseFormat("q4_k"); err != nil || f != Q4_K {
		t.Errorf("ParseFormat(q4_k) = %v, %v", f, err)
	}
	if _, err := ParseFormat("Q9_9"); err == nil {
		t.Error("ParseFormat(Q9_9): no error")
	}
}
