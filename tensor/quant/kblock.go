package quant

import (
	"encoding/binary"
	"math"
)

// The K formats: super-blocks of 256 weights. In the 2- and 3-bit layouts the 256
// weights are two halves of 128; within a half, byte l of the 32-byte value array holds
// weight 32*s+l in bits 2s..2s+1 (s = 0..3). In the 4- to 6-bit layouts each group of 64
// weights shares 32 bytes: low nibbles first, then high nibbles.

func decodeQ2_K(dst []float32, b []byte) {
	scales, qs := b[0:16], b[16:80]
	d, dmin := f16(b[80:]), f16(b[82:])
	for e := 0; e < QK; e += 16 {
		sc := scales[e/16]
		dl, ml := d*float32(sc&15), dmin*float32(sc>>4)
		h, s, l0 := e/128, e%128/32, e%32
		q := qs[32*h+l0 : 32*h+l0+16]
		for l, v := range q {
			dst[e+l] = dl*float32(v>>(2*s)&3) - ml
		}
	}
}

// q3Scales unpacks Q3_K's sixteen 6-bit scales, stored with an offset of 32: the low
// nibbles of scales 0-7 are the low nibbles of bytes 0-7 and those of scales 8-15 their
// high nibbles; the two high bits of scale i are bits 2*(i/4) of byte 8+i%4.
func q3Scales(s []byte, out *[16]int8) {
	for i := range 16 {
		lo := s[i%8] >> (4 * (i / 8)) & 15
		hi := s[8+i%4] >> (2 * (i / 4)) & 3
		out[i] = int8(lo|hi<<4) - 32
	}
}

// decodeQ3_K: 2 low bits as in Q2_K; the third bit of weight 32*s+l of half h is bit
// 4h+s of hmask[l], and a clear bit subtracts 4.
func decodeQ3_K(dst []float32, b []byte) {
	hmask, qs := b[0:32], b[32:96]
	d := f16(b[108:])
	var sc [16]int8
	q3Scales(b[96:108], &sc)
	for e := 0; e < QK; e += 16 {
		dl := d * float32(sc[e/16])
		h, s, l0 := e/128, e%128/32, e%32
		bit := byte(1) << (4*h + s)
		for l := range 16 {
			q := int(qs[32*h+l0+l]>>(2*s)) & 3
			if hmask[l0+l]&bit == 0 {
				q -= 4
			}
			dst[e+l] = dl * float32(q)
		}
	}
}

// kScaleMin unpacks the 6-bit scale and offset of sub-block j (0..7) of Q4_K and Q5_K
// from their 12 bytes: for j < 4 the low 6 bits of bytes j and j+4; for j >= 4 the
// nibbles of byte j+4, topped with the high 2 bits of bytes j-4 and j.
func kScaleMin(s []byte, j int) (sc, m byte) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&15 | s[j-4]>>6<<4, s[j+4]>>4 | s[j]>>6<<4
}

func decodeQ4_K(dst []float32, b []byte) {
	d, dmin := f16(b), f16(b[2:])
	scales, qs := b[4:16], b[16:144]
	for g := range 4 {
		sc0, m0 := kScaleMin(scales, 2*g)
		sc1, m1 := kScaleMin(scales, 2*g+1)
		d0, o0 := d*float32(sc0), dmin*float32(m0)
		d1, o1 := d*float32(sc1), dmin*float32(m1)
		out := dst[64*g : 64*g+64]
		for l, q := range qs[32*g : 32*g+32] {
			out[l] = d0*float32(q&15) - o0
			out[l+32] = d1*float32(q>>4) - o1
		}
	}
}

// decodeQ5_K: as Q4_K, with the fifth bit of weight 32*j+l in bit j of qh[l].
func decodeQ5_K(dst []float32, b []byte) {
	d, dmin := f16(b), f16(b[2:])
	scales, qh, qs := b[4:16], b[16:48], b[48:176]
	for g := range 4 {
		sc0, m0 := kScaleMin(scales, 2*g)
		sc1, m1 := kScaleMin(scales, 2*g+1)
		d0, o0 := d*float32(sc0), dmin*float32(m0)
		d1, o1 := d*float32(sc1), dmin*float32(m1)
		out := dst[64*g : 64*g+64]
		for l, q := range qs[32*g : 32*g+32] {
			h := qh[l] >> (2 * g)
			out[l] = d0*float32(q&15|(h&1)<<4) - o0
			out[l+32] = d1*float32(q>>4|(h>>1&1)<<4) - o1
		}
	}
}

// decodeQ6_K: per half of 128 weights, 64 bytes of low nibbles and 32 bytes of high
// 2-bit pairs. Quarter s (32 weights) takes low nibbles of bytes l (s=0), l+32 (s=1),
// then high nibbles of the same (s=2, 3), and bits 2s..2s+1 of qh[l]; values are offset
// by 32 and scaled by the int8 scale of their 16 weights.
func decodeQ6_K(dst []float32, b []byte) {
	d := f16(b[208:])
	for h := range 2 {
		ql, qh := b[64*h:64*h+64], b[128+32*h:128+32*h+32]
		sc := b[192+8*h : 192+8*h+8]
		out := dst[128*h : 128*h+128]
		for l := range 32 {
			hb := qh[l]
			q0 := int(ql[l]&15|(hb&3)<<4) - 32
			q1 := int(ql[l+32]&15|(hb>>2&3)<<4) - 32
			q2 := int(ql[l]>>4|(hb>>4&3)<<4) - 32
			q3 := int(ql[l+32]>>4|(hb>>6&3)<<4) - 32
			is := l / 16
			out[l] = d * float32(int8(sc[is])) * float32(q0)
			out[l+32] = d * float32(int8(sc[is+2])) * float32(q1)
			out[l+64] = d * float32(int8(sc[is+4])) * float32(q2)
			out[l+96] = d * float32(int8(sc[is+6])) * float32(q3)
		}
	}
}

// decodeQ8_K: a float32 scale and int8 values; the int16 sums that follow only speed up
// dot products.
func decodeQ8_K(dst []float32, b []byte) {
	d := math.Float32frombits(binary.LittleEndian.Uint32(b))
	for j, q := range b[4 : 4+QK] {
		dst[j] = float32(int8(q)) * d
	}
}

// decodeIQ4_XS: eight sub-blocks of 32 weights laid out as IQ4_NL blocks, each with a
// 6-bit scale offset by 32: low nibble j%2 of scales_l[j/2], high bits 2j of scales_h.
func decodeIQ4_XS(dst []float32, b []byte) {
	d := f16(b)
	sh := binary.LittleEndian.Uint16(b[2:])
	sl, qs := b[4:8], b[8:136]
	for j := range 8 {
		ls := int(sl[j/2]>>(4*(j%2))&15) | int(sh>>(2*j)&3)<<4
		dl := d * float32(ls-32)
		out := dst[32*j : 32*j+32]
		for l, q := range qs[16*j : 16*j+16] {
			out[l] = dl * iq4Values[q&15]
			out[l+16] = dl * iq4Values[q>>4]
		}
	}
}

// Q4KScales returns the effective scale and offset of each of the eight sub-blocks of
// a Q4_K super-block (the float16 super-scales times the 6-bit values): weight i of
// sub-block j is scales[j]·q − mins[j].
func Q4KScales(block []byte, scales, mins *[8]float32) {
	d, dmin := f16(block), f16(block[2:])
	for j := range 8 {
		sc, m := kScaleMin(block[4:16], j)
		scales[j], mins[j] = d*float32(sc), dmin*float32(m)
	}
}
