package vec

import "math"

// The optimizer updates treat subnormal numbers as zero, as operands and as results:
// x86's MXCSR DAZ and FTZ modes, which their assembly sets for its loop, and which the
// Go code below reproduces bit for bit. A moment or velocity of a parameter whose
// gradient has become zero (a dead ReLU unit) decays geometrically through the
// subnormal range, where Intel cores take a microcode assist for each operation on a
// subnormal: on the H200 host an Adam step over 100K such floats took 1-3 ms instead of
// 0.1. Flushing moves a parameter by less than lr·2⁻¹²⁶/ε (Adam) or lr·2⁻¹²⁶ (SGD),
// nothing a model can see.
//
// The Go code computes each operation of two float32s in float64 and rounds once more
// to float32, which gives the float32 result (53 ≥ 2·24+2 bits, so the double rounding
// is innocuous for +, -, ·, / and √) and never meets a subnormal itself. x86 detects
// tininess after rounding: a result flushes when, rounded to 24 bits with an unbounded
// exponent, it is below 2⁻¹²⁶; by the same argument that is when the float64 result is
// below tinyBound (2⁻¹²⁶ - 2⁻¹⁵¹ itself rounds to even, up to 2⁻¹²⁶).
const tinyBound = 0x1p-126 - 0x1p-151

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
