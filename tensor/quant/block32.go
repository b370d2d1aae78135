package quant

import (
	"encoding/binary"
	"math"
)

// The formats with blocks of 32 weights. In every 4-bit layout byte j of the values
// holds weight j in its low nibble and weight j+16 in its high nibble.

func decodeQ4_0(dst []float32, b []byte) {
	d := f16(b)
	qs := b[2:18]
	for j, q := range qs {
		dst[j] = float32(int(q&15)-8) * d
		dst[j+16] = float32(int(q>>4)-8) * d
	}
}

func decodeQ4_1(dst []float32, b []byte) {
	d, m := f16(b), f16(b[2:])
	qs := b[4:20]
	for j, q := range qs {
		dst[j] = float32(q&15)*d + m
		dst[j+16] = float32(q>>4)*d + m
	}
}

// Q5 layouts keep the fifth bit of weight j in bit j of a little-endian uint32.

func decodeQ5_0(dst []float32, b []byte) {
	d := f16(b)
	qh := binary.LittleEndian.Uint32(b[2:])
	qs := b[6:22]
	for j, q := range qs {
		lo := int(q&15) | int(qh>>j&1)<<4
		hi := int(q>>4) | int(qh>>(j+16)&1)<<4
		dst[j] = float32(lo-16) * d
		dst[j+16] = float32(hi-16) * d
	}
}

func decodeQ5_1(dst []float32, b []byte) {
	d, m := f16(b), f16(b[2:])
	qh := binary.LittleEndian.Uint32(b[4:])
	qs := b[8:24]
	for j, q := range qs {
		lo := uint32(q&15) | (qh>>j&1)<<4
		hi := uint32(q>>4) | (qh>>(j+16)&1)<<4
		dst[j] = float32(lo)*d + m
		dst[j+16] = float32(hi)*d + m
	}
}

func decodeQ8_0(dst []float32, b []byte) {
	d := f16(b)
	for j, q := range b[2:34] {
		dst[j] = float32(int8(q)) * d
	}
}

// decodeQ8_1 ignores the stored sum, which only speeds up dot products.
func decodeQ8_1(dst []float32, b []byte) {
	d := f16(b)
	for j, q := range b[4:36] {
		dst[j] = float32(int8(q)) * d
	}
}

// iq4Values is the non-linear 4-bit grid of IQ4_NL and IQ4_XS.
var iq4Values = [16]float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

func decodeIQ4_NL(dst []float32, b []byte) {
	d := f16(b)
	for j, q := range b[2:18] {
		dst[j] = iq4Values[q&15] * d
		dst[j+16] = iq4Values[q>>4] * d
	}
}

// e2m1Values are the FP4 (E2M1) values: sign bit 3, then 2 exponent and 1 mantissa bits.
var e2m1Values = [16]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6, -0, -0.5, -1, -1.5, -2, -3, -4, -6}

// decodeMXFP4 reads the block's E8M0 scale: a bare exponent, 2^(e-127).
func decodeMXFP4(dst []float32, b []byte) {
	d := float32(math.Ldexp(1, int(b[0])-127))
	for j, q := range b[1:17] {
		dst[j] = e2m1Values[q&15] * d
		dst[j+16] = e2m1Values[q>>4] * d
	}
}
