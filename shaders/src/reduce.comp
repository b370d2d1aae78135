#version 450
// Reductions. MODE 0 (rows): the input is [outer, red] and each output's workgroup
// reduces its contiguous row in shared memory. MODE 1 (columns): the input is [outer,
// red, inner] and each thread walks one output's column, reads coalesced across
// threads. MODE 2 (general): kept and reduced axes interleave; each output's workgroup
// walks its reduced elements through up to four collapsed reduced axes (rd, rs) from a
// base found through up to four kept axes (kd, ks). OP: 0 sum, 1 mean, 2 max, 3 min,
// 4 product.
#extension GL_EXT_control_flow_attributes : require

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
	case 2: return -1.0 / 0.0;
	case 3: return 1.0 / 0.0;
	case 4: return 1.0;
	}
	return 0.0;
}

float combine(float x, float y) {
	switch (OP) {
	case 2: return max(x, y);
	case 3: return min(x, y);
	case 4: return x * y;
	}
	return x + y;
}

float finish(float v) { return OP == 1 ? v / float(p.red) : v; }

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
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint o = gl_GlobalInvocationID.x; o < p.outer * p.inner; o += stride) {
		uint i = o / p.inner, j = o - i * p.inner;
		float v = identity();
		for (uint k = 0; k < p.red; k++) v = combine(v, a[p.offA + (i * p.red + k) * p.inner + j]);
		c[p.offC + o] = finish(v);
	}
}
