package tensor

// DropoutKeep reports whether element i survives dropout at the given rate under seed.
// It is a pure function of (seed, i) built from 32-bit integer operations only (a PCG
// hash), so every backend, CPU or GPU shader, draws the same mask and a step can be
// replayed exactly from its seed.
func DropoutKeep(seed, i uint32, rate float32) bool {
	h := pcgHash(i + pcgHash(seed))
	u := float32(h>>8) * (1.0 / (1 << 24)) // uniform in [0, 1)
	return u >= rate
}

// pcgHash is the PCG-RXS-M-XS 32-bit output permutation of one LCG step.
func pcgHash(v uint32) uint32 {
	state := v*747796405 + 2891336453
	word := ((state >> ((state >> 28) + 4)) ^ state) * 277803737
	return (word >> 22) ^ word
}
