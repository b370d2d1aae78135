#version 450
// Layer normalisation (RMS with RMS) over contiguous rows of length n, with optional
// gamma (GAMMA) and beta (BETA) of length n: one workgroup per row, statistics in f32
// by a two-pass mean and variance.

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool RMS = false;
layout(constant_id = 2) const bool GAMMA = false;
layout(constant_id = 3) const bool BETA = false;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer G { float g[]; };
layout(set = 0, binding = 2) readonly buffer Bt { float bt[]; };
layout(set = 0, binding = 3) writeonly buffer C { float c[]; };

layout(push_constant) uniform Push {
	uint rows, n;
	uint offA, offG, offB, offC;
	float eps;
} p;

shared float part[gl_WorkGroupSize.x];

float reduceSum(float v) {
	uint t = gl_LocalInvocationID.x;
	part[t] = v;
	barrier();
	for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
		if (t < s) part[t] += part[t + s];
		barrier();
	}
	float r = part[0];
	barrier();
	return r;
}

void main() {
	uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	if (row >= p.rows) return;
	uint base = p.offA + row * p.n, out_ = p.offC + row * p.n;
	uint t = gl_LocalInvocationID.x, T = gl_WorkGroupSize.x;
	float mean = 0.0;
	if (!RMS) {
		float s = 0.0;
		for (uint k = t; k < p.n; k += T) s += a[base + k];
		mean = reduceSum(s) / float(p.n);
	}
	float q = 0.0;
	for (uint k = t; k < p.n; k += T) {
		float d = a[base + k] - mean;
		q += d * d;
	}
	float inv = inversesqrt(reduceSum(q) / float(p.n) + p.eps);
	for (uint k = t; k < p.n; k += T) {
		float v = (a[base + k] - mean) * inv;
		if (GAMMA) v *= g[p.offG + k];
		if (BETA) v += bt[p.offB + k];
		c[out_ + k] = v;
	}
}
