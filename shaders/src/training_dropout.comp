#version 450
// Dropout (MASK false: out = keep ? x * scale : 0) and DropoutMask (MASK true:
// out = keep ? scale : 0) in F32. keep is tensor.DropoutKeep(seed, i, rate), the PCG
// hash below in 32-bit integer arithmetic, so the mask is bit-identical to the CPU's.
// The seed is the low word of an I32 or I64 scalar, as uint32(seed) is in Go.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool MASK = false;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer S { uint seed[]; };
layout(set = 0, binding = 2) writeonly buffer O { float o[]; };

layout(push_constant) uniform Push {
	uint n;
	uint offX, offS, offO;
	float rate, scale;
} p;

uint pcgHash(uint v) {
	uint state = v * 747796405u + 2891336453u;
	uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
	return (word >> 22u) ^ word;
}

void main() {
	uint h0 = pcgHash(seed[p.offS]);
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
		float u = float(pcgHash(i + h0) >> 8u) * (1.0 / 16777216.0);
		float v = MASK ? p.scale : x[p.offX + i] * p.scale;
		o[p.offO + i] = u >= p.rate ? v : 0.0;
	}
}
