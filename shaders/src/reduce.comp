#version 450
// Reductions over one contiguous block of axes: the input is viewed as [outer, red,
// inner] and the output as [outer, inner]. ROWS (inner == 1) gives each output a
// workgroup that reduces its contiguous row in shared memory; otherwise each thread
// walks one output's column with coalesced reads across threads. OP: 0 sum, 1 mean,
// 2 max, 3 min, 4 product.
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const bool ROWS = true;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer C { float c[]; };

layout(push_constant) uniform Push {
	uint outer, red, inner;
	uint offA, offC;
} p;

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
	if (ROWS) {
		uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
		if (row >= p.outer) return;
		uint t = gl_LocalInvocationID.x;
		float v = identity();
		for (uint k = t; k < p.red; k += gl_WorkGroupSize.x) v = combine(v, a[p.offA + row * p.red + k]);
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
