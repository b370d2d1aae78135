#version 450
// Softmax (or log-softmax with LOG) of scale*x along contiguous rows of length n: one
// workgroup per row computes the maximum, then the sum of exponentials, then writes.

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool LOG = false;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer C { float c[]; };

layout(push_constant) uniform Push {
	uint rows, n;
	uint offA, offC;
	float scale;
} p;

shared float part[gl_WorkGroupSize.x];

float reduceMax(float v) {
	uint t = gl_LocalInvocationID.x;
	part[t] = v;
	barrier();
	for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
		if (t < s) part[t] = max(part[t], part[t + s]);
		barrier();
	}
	float r = part[0];
	barrier();
	return r;
}

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
	float m = -1.0 / 0.0;
	for (uint k = t; k < p.n; k += T) m = max(m, p.scale * a[base + k]);
	m = reduceMax(m);
	float s = 0.0;
	for (uint k = t; k < p.n; k += T) s += exp(p.scale * a[base + k] - m);
	s = reduceSum(s);
	if (LOG) {
		float ls = log(s);
		for (uint k = t; k < p.n; k += T) c[out_ + k] = p.scale * a[base + k] - m - ls;
	} else {
		float inv = 1.0 / s;
		for (uint k = t; k < p.n; k += T) c[out_ + k] = exp(p.scale * a[base + k] - m) * inv;
	}
}
