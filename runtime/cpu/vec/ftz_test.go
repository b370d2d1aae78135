package vec

import "math"

// The Go reference of the optimizer assembly's DAZ and FTZ modes (subnormal operands
// and results are zero), which the tests compare the assembly with bit for bit.
//
// Each operation of two float32s is computed in float64 and rounded once more to
// float32, which gives the float32 result (53 ≥ 2·24+2 bits, so the double rounding is
// innocuous for +, -, ·, / and √) and never meets a subnormal itself. x86 detects
// tininess after rounding: a result flushes when, rounded to 24 bits with an unbounded
// exponent, it is below 2⁻¹²⁶; by the same argument that is when the float64 result is
// below tinyBound (2⁻¹²⁶ - 2⁻¹⁵¹ itself rounds to even, up to 2⁻¹²⁶).
const tinyBound = 0x1p-126 - 0x1p-151

// tinyKey orders floats so that exactly the subnormals and ±2⁻¹²⁶ fall below
// tinyKeyBound (zero does not): the values where plain float32 arithmetic and DAZ/FTZ
// may part, as operands or as results (one rounded up to 2⁻¹²⁶ may be tiny). The Go
// code takes plain arithmetic when the least key of an element's values stays above.
func tinyKey(x float32) uint32 { return math.Float32bits(x)&0x7fffffff - 1 }

const tinyKeyBound = 0x00800000

// daz returns x, or a zero of its sign when x is subnormal (DAZ on an operand).
func daz(x float32) float32 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}

// flush rounds the float64 result x of an operation on float32s to float32 under FTZ:
// a zero of its sign when it is tiny.
func flush(x float64) float32 {
	if math.Abs(x) < tinyBound {
		return float32(math.Copysign(0, x))
	}
	return float32(x)
}

// The operations of normal (or already flushed) float32 operands under DAZ and FTZ.
func mulFTZ(a, b float32) float32 { return flush(float64(a) * float64(b)) }
func addFTZ(a, b float32) float32 { return flush(float64(a) + float64(b)) }
func subFTZ(a, b float32) float32 { return flush(float64(a) - float64(b)) }
func divFTZ(a, b float32) float32 { return flush(float64(a) / float64(b)) }
