// Package quantref decodes ggml's quantised block formats one weight at a time, in
// float64, straight from each layout's definition (ggml's block_* structs and their
// documented meaning). It shares no code with the block decoders of tensor/quant, which
// it checks there, and it is the reference that internal/backendtest decodes quantised
// tensors with.
package quantref

import (
	"encoding/binary"
	"math"

	"github.com/gml-dev/gml/tensor/quant"
)

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

// Weight returns weight e of one block b of format f, in float64.
func Weight(f quant.Format, b []byte, e int) float64 {
	switch f {
	case quant.Q4_0:
		return refHalf(b, 0) * float64(nibble(b, 2, e)-8)
	case quant.Q4_1:
		return refHalf(b, 0)*float64(nibble(b, 4, e)) + refHalf(b, 2)
	case quant.Q5_0:
		qh := uint64(binary.LittleEndian.Uint32(b[2:]))
		return refHalf(b, 0) * float64(nibble(b, 6, e)+16*bit(qh, e)-16)
	case quant.Q5_1:
		qh := uint64(binary.LittleEndian.Uint32(b[4:]))
		return refHalf(b, 0)*float64(nibble(b, 8, e)+16*bit(qh, e)) + refHalf(b, 2)
	case quant.Q8_0:
		return refHalf(b, 0) * float64(int8(b[2+e]))
	case quant.Q8_1:
		return refHalf(b, 0) * float64(int8(b[4+e]))
	case quant.IQ4_NL:
		return refHalf(b, 0) * refIQ4[nibble(b, 2, e)]
	case quant.MXFP4:
		return math.Ldexp(1, int(b[0])-127) * refFP4(nibble(b, 1, e))
	case quant.Q2_K:
		sc := b[e/16]
		q := b[16+32*(e/128)+e%32] >> (2 * (e % 128 / 32)) & 3
		return refHalf(b, 80)*float64(sc%16)*float64(q) - refHalf(b, 82)*float64(sc/16)
	case quant.Q3_K:
		low := int(b[32+32*(e/128)+e%32] >> (2 * (e % 128 / 32)) & 3)
		high := bit(uint64(b[e%32]), 4*(e/128)+e%128/32)
		return refHalf(b, 108) * refQ3Scale(b[96:108], e/16) * float64(low-4*(1-high))
	case quant.Q4_K, quant.Q5_K:
		sc, m := refKScale(b[4:16], e/32)
		qsOff := 16
		q := 0
		if f == quant.Q5_K {
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
	case quant.Q6_K:
		h, s, l := e/128, e%128/32, e%32
		v := b[64*h+l+32*(s%2)]
		lo := int(v % 16)
		if s >= 2 {
			lo = int(v / 16)
		}
		hi := int(b[128+32*h+l] >> (2 * s) & 3)
		return refHalf(b, 208) * float64(int8(b[192+e/16])) * float64(lo+16*hi-32)
	case quant.Q8_K:
		d := float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		return d * float64(int8(b[4+e]))
	case quant.IQ4_XS:
		j := e / 32
		sh := uint64(binary.LittleEndian.Uint16(b[2:]))
		ls := int(b[4+j/2]>>(4*(j%2))&15) + 16*(bit(sh, 2*j)+2*bit(sh, 2*j+1))
		return refHalf(b, 0) * float64(ls-32) * refIQ4[nibble(b, 8+16*j, e%32)]
	}
	panic("no reference for " + f.String())
}

// Decode returns the n weights of data, blocks of format f, in float64.
func Decode(f quant.Format, data []byte, n int) []float64 {
	bs, bb := f.BlockSize(), f.BlockBytes()
	out := make([]float64, n)
	for i := range out {
		out[i] = Weight(f, data[i/bs*bb:(i/bs+1)*bb], i%bs)
	}
	return out
}
