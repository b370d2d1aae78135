package tensor

import "math"

// DropoutKeep reports whether element i survives dropout at the given rate under seed.
// It is a pure function of (seed, i) built from 32-bit integer operations only (a PCG
// hash), so every backend, CPU or GPU shader, draws the same mask and a step can be
// replayed exactly from its seed.
func DropoutKeep(seed, i uint32, rate float32) bool {
	return NewDropoutDraw(seed, rate).Keep(i)
}

// DropoutDraw is DropoutKeep with the work that depends only on the seed and the rate
// done once, for kernels that draw a whole tensor's mask.
type DropoutDraw struct {
	seedHash  uint32
	threshold uint32 // keep when the hash's top 24 bits are at least this
}

// NewDropoutDraw prepares the mask of seed at rate. Element i is kept when its uniform
// draw u = (hash>>8) / 2^24 is at least rate; u has 24 bits, so the comparison is
// exactly hash>>8 >= ceil(rate * 2^24), done on integers.
func NewDropoutDraw(seed uint32, rate float32) DropoutDraw {
	t := math.Ceil(float64(rate) * (1 << 24))
	if !(t > 0) { // rate <= 0, or NaN: keep everything
		t = 0
	}
	t = min(t, 1<<24)
	return DropoutDraw{seedHash: pcgHash(seed), threshold: uint32(t)}
}

// Keep reports whether element i survives.
func (d DropoutDraw) Keep(i uint32) bool {
	return pcgHash(i+d.seedHash)>>8 >= d.threshold
}

// Params returns what Keep draws from: the seed's hash, which Keep adds to the element
// index before hashing it, and the threshold the hash's top 24 bits must reach. Vector
// kernels that draw many elements at once take them (and are tested to match Keep).
func (d DropoutDraw) Params() (seedHash, threshold uint32) {
	return d.seedHash, d.threshold
}

// pcgHash is the PCG-RXS-M-XS 32-bit output permutation of one LCG step.
func pcgHash(v uint32) uint32 {
	state := v*747796405 + 2891336453
	word := ((state >> ((state >> 28) + 4)) ^ state) * 277803737
	return (word >> 22) ^ word
}
