package tensor

import "github.com/gml-dev/gml/internal/half"

// Float32ToBF16 rounds f to the nearest bfloat16 (ties to even); NaN stays NaN.
func Float32ToBF16(f float32) uint16 { return half.ToBF16(f) }

// BF16ToFloat32 widens a bfloat16 bit pattern exactly.
func BF16ToFloat32(h uint16) float32 { return half.FromBF16(h) }

// Float32ToF16 rounds f to the nearest IEEE binary16 (ties to even), with overflow to
// infinity, gradual underflow to subnormals, and NaN preserved.
func Float32ToF16(f float32) uint16 { return half.ToF16(f) }

// F16ToFloat32 widens an IEEE binary16 bit pattern exactly.
func F16ToFloat32(h uint16) float32 { return half.FromF16(h) }
