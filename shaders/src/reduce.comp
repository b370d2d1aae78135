#version 450
// Reductions. MODE 0 (rows): the input is [outer, red] and each output's workgroup
// reduces its contiguous row in shared memory. MODE 1 (columns): the input is [outer,
// red, inner]; a workgroup covers 32 neighbouring columns of one outer index, its
// threads 32 columns by interleaved row lanes, so each subgroup reads 32 consecutive
// floats and shared memory sums the lanes. When the host cuts red into chunks of
// `chunk` rows (workgroup z), chunk z's raw results go to c at z·outer·inner and a
// second MODE 1 pass over [1, chunks, outer·inner] finishes them: one thread per column
// would leave most of a GPU idle on a bias gradient (a few hundred columns, thousands
// of rows). MODE 2 (general): kept and reduced axes interleave; each output's workgroup
// walks its reduced elements through up to four collapsed reduced axes (rd, rs) from a
// base found through up to four kept axes (kd, ks). OP (opcodes.glsl): sum, mean
// (divided by count), max, min or product.
#extension GL_EXT_control_flow_attributes : require

#include "opcodes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint MODE = 0;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer C { float c[]; };

layout(push_constant) uniform Push {
	uint outer, red, inner;
	uint offA, offC;
	uint kd[4];
	uint ks[4];
	uint rd[4];
	uint rs[4];
	uint chunk, count;
} p;

// walk decomposes i over four axes (extent d, stride s) into an element offset.
uint walk(uint i, uint d[4], uint s[4]) {
	uint off = 0;
	[[unroll]] for (int k = 3; k >= 0; k--) {
		uint q = i / d[k];
		off += (i - q * d[k]) * s[k];
		i = q;
	}
	return off;
}

shared float part[gl_WorkGroupSize.x];

float identity() {
	switch (OP) {
	case REDUCE_MAX: return -1.0 / 0.0;
	case REDUCE_MIN: return 1.0 / 0.0;
	case REDUCE_PROD: return 1.0;
	}
	return 0.0; // REDUCE_SUM, REDUCE_MEAN
}

float combine(float x, float y) {
	switch (OP) {
	case REDUCE_MAX: return max(x, y);
	case REDUCE_MIN: return min(x, y);
	case REDUCE_PROD: return x * y;
	}
	return x + y; // REDUCE_SUM, REDUCE_MEAN
}

float finish(float v) { return OP == REDUCE_MEAN ? v / float(p.count) : v; }

void main() {
	if (MODE != 1) {
		uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
		if (row >= p.outer) return;
		uint t = gl_LocalInvocationID.x;
		uint base = MODE == 0 ? row * p.red : walk(row, p.kd, p.ks);
		float v = identity();
		for (uint k = t; k < p.red; k += gl_WorkGroupSize.x) {
			uint off = MODE == 0 ? k : walk(k, p.rd, p.rs);
			v = combine(v, a[p.offA + base + off]);
		}
		part[t] = v;
		barrier();
		for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
			if (t < s) part[t] = combine(part[t], part[t + s]);
			barrier();
		}
		if (t == 0) c[p.offC + row] = finish(part[0]);
		return;
	}
	const uint LANES = gl_WorkGroupSize.x / 32;
	uint t = gl_LocalInvocationID.x, lane = t / 32;
	uint cgroups = (p.inner + 31) / 32;
	uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	if (g >= p.outer * cgroups) return; // the whole workgroup, before any barrier
	uint i = g / cgroups, j = (g % cgroups) * 32 + t % 32;
	uint k0 = gl_WorkGroupID.z * p.chunk, k1 = min(p.red, k0 + p.chunk);
	float v = identity();
	if (j < p.inner) {
		for (uint k = k0 + lane; k < k1; k += LANES) v = combine(v, a[p.offA + (i * p.red + k) * p.inner + j]);
	}
	part[t] = v;
	barrier();
	for (uint s = LANES / 2; s > 0; s >>= 1) {
		if (lane < s) part[t] = combine(part[t], part[t + s * 32]);
		barrier();
	}
	if (lane == 0 && j < p.inner) {
		uint o = i * p.inner + j;
		if (gl_NumWorkGroups.z > 1) {
			c[p.offC + gl_WorkGroupID.z * p.outer * p.inner + o] = part[t];
		} else {
			c[p.offC + o] = finish(part[t]);
		}
	}
}
