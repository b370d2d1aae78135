#version 450
// Matrix product for a few rows: C (M×N) = A (M×K) · B (+ beta·C) with M ≤ MR, the
// shape of a small inference batch times a weight matrix. Memory-bound on B, so it
// streams B once with coalesced reads. B is K×N row-major (TB false: one thread per
// output column) or N×K (TB true, as in y = x·Wᵀ: one workgroup per output column,
// reducing along K in shared memory). Batched over gl_WorkGroupID.z.
#extension GL_GOOGLE_include_directive : require
#include "matmul_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MR = 8;
layout(constant_id = 2) const bool TB = false;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) buffer C { float c[]; };

shared float red[MR * gl_WorkGroupSize.x];

void put(uint m, uint n, float v) {
	uint idx = p.offC + gl_WorkGroupID.z * p.sC + m * p.ldc + n;
	if (p.beta != 0.0) v += p.beta * c[idx];
	c[idx] = v;
}

void main() {
	const uint abase = p.offA + gl_WorkGroupID.z * p.sA;
	const uint bbase = p.offB + gl_WorkGroupID.z * p.sB;
	const uint T = gl_WorkGroupSize.x;
	float acc[MR];
	for (uint m = 0; m < MR; m++) acc[m] = 0.0;
	if (!TB) {
		uint n = gl_WorkGroupID.x * T + gl_LocalInvocationID.x;
		if (n >= p.N) return;
		for (uint k = 0; k < p.K; k++) {
			float bv = b[bbase + k * p.ldb + n];
			for (uint m = 0; m < MR; m++) {
				if (m < p.M) acc[m] = fma(a[abase + m * p.lda + k], bv, acc[m]);
			}
		}
		for (uint m = 0; m < MR; m++) {
			if (m < p.M) put(m, n, acc[m]);
		}
		return;
	}
	uint n = gl_WorkGroupID.x;
	uint t = gl_LocalInvocationID.x;
	for (uint k = t; k < p.K; k += T) {
		float bv = b[bbase + n * p.ldb + k];
		for (uint m = 0; m < MR; m++) {
			if (m < p.M) acc[m] = fma(a[abase + m * p.lda + k], bv, acc[m]);
		}
	}
	for (uint m = 0; m < MR; m++) red[m * T + t] = acc[m];
	barrier();
	for (uint s = T / 2; s > 0; s >>= 1) {
		if (t < s) {
			for (uint m = 0; m < MR; m++) red[m * T + t] += red[m * T + t + s];
		}
		barrier();
	}
	if (t == 0) {
		for (uint m = 0; m < MR; m++) {
			if (m < p.M) put(m, n, red[m * T]);
		}
	}
}
