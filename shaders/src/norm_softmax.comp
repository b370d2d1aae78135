#version 450
// Softmax (or log-softmax with LOG) of scale*x + mask along one axis. The input is viewed
// as [outer, n, inner]; each workgroup owns one (outer, inner) row of n elements spaced
// inner apart, and computes the maximum, then the sum of exponentials, then writes.
// MASK adds an additive mask that broadcasts to x: its offset for a row comes from the
// outer index decomposed over up to four collapsed axes with the mask's strides, plus
// the inner index times minner; along the row it steps by mstep.
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool LOG = false;
layout(constant_id = 2) const bool MASK = false;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer M { float mask[]; };
layout(set = 0, binding = 2) writeonly buffer C { float c[]; };

layout(push_constant) uniform Push {
	uint rows, n, inner;
	uint offA, offC, offM;
	float scale;
	uint mstep, minner;
	uint odims[4];
	uint ostr[4];
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
	uint o = row / p.inner, i = row - o * p.inner;
	uint base = o * p.n * p.inner + i;
	uint mbase = p.offM + i * p.minner;
	if (MASK) {
		uint rest = o;
		[[unroll]] for (int d = 3; d >= 0; d--) {
			uint q = rest / p.odims[d];
			mbase += (rest - q * p.odims[d]) * p.ostr[d];
			rest = q;
		}
	}
	uint t = gl_LocalInvocationID.x, T = gl_WorkGroupSize.x;
	float m = -1.0 / 0.0;
	for (uint k = t; k < p.n; k += T) {
		float v = p.scale * a[p.offA + base + k * p.inner];
		if (MASK) v += mask[mbase + k * p.mstep];
		m = max(m, v);
	}
	m = reduceMax(m);
	float s = 0.0;
	for (uint k = t; k < p.n; k += T) {
		float v = p.scale * a[p.offA + base + k * p.inner];
		if (MASK) v += mask[mbase + k * p.mstep];
		s += exp(v - m);
	}
	s = reduceSum(s);
	float ls = log(s), inv = 1.0 / s;
	for (uint k = t; k < p.n; k += T) {
		float v = p.scale * a[p.offA + base + k * p.inner];
		if (MASK) v += mask[mbase + k * p.mstep];
		c[p.offC + base + k * p.inner] = LOG ? v - m - ls : exp(v - m) * inv;
	}
}
