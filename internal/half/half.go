// Package half converts between float32 and the 16-bit float formats (IEEE binary16 and
// bfloat16). It is a leaf so that both package tensor and the block formats of
// tensor/quant, which tensor imports, can use one implementation.
package half

import "math"

// ToBF16 rounds f to the nearest bfloat16 (ties to even); NaN stays NaN.
func ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// FromBF16 widens a bfloat16 bit pattern exactly.
func FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// ToF16 rounds f to the nearest IEEE binary16 (ties to even), with overflow to
// infinity, gradual underflow to subnormals, and NaN preserved.
func ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b >> 23) & 0xff)
	man := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp > 127+15: // overflow
		return sign | 0x7c00
	case exp >= 127-14: // normal half
		e := uint32(exp - 127 + 15)
		m := man >> 13
		rest := man & 0x1fff
		h := uint32(sign) | e<<10 | m
		if rest > 0x1000 || (rest == 0x1000 && m&1 == 1) {
			h++ // may carry into the exponent, which is the correct rounding
		}
		return uint16(h)
	case exp >= 127-25: // subnormal half
		m := man | 0x800000
		shift := uint32(127 - 14 - exp + 13)
		h := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	return sign
}

// FromF16 widens an IEEE binary16 bit pattern exactly.
func FromF16(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
	case man == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: normalise.
	e := uint32(127 - 15 + 1)
	for man&0x400 == 0 {
		man <<= 1
		e--
	}
	return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
}
