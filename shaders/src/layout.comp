#version 450
// Layout copies of any dtype: out[i] = x[base + sum_d s_d * stride_d] where s_d is the
// output coordinate c_d on axis d mapped by MODE: 0 affine (s = c: slice with any step,
// permute, depth-to-space, assign), 1 constant pad (s = c - before; outside the input
// the element is the fill bits), 2 reflect pad, 3 edge pad, 4 tile (s = c mod inDim),
// 5 window (concat of 1- and 2-byte types: outside [before, before+inDim) the output
// keeps its bits), 6 place (concat of 4- and 8-byte types: input element i, at
// coordinates c over dims, goes to out[base + sum c_d * stride_d]; each input's
// dispatch touches only its own elements). Axes are right-aligned in six slots; unused
// leading slots have extent 1.
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ESIZE = 4;
layout(constant_id = 2) const uint MODE = 0;
// AXES: how many of the six right-aligned axes are in use, when they cover exactly the
// elements walked (the outermost then needs no division); 6 otherwise.
layout(constant_id = 3) const uint AXES = 6;

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) buffer O { uint o[]; };

layout(push_constant) uniform Push {
	uint units, u0, n;
	uint offX, offO;
	int base;
	uint fillLo, fillHi;
	uint dims[6];
	int stride[6];
	uint inDim[6];
	uint before[6];
} p;

#include "layout_common.glsl"

uvec2 elem(uint i, inout bool keep) {
	uint rest = i;
	int src = p.base;
	[[unroll]] for (int d = 5; d >= 0; d--) {
		if (d >= 6 - int(AXES)) {
			uint c = rest;
			if (d > 6 - int(AXES)) {
				uint q = rest / p.dims[d];
				c = rest - q * p.dims[d];
				rest = q;
			}
			int s = int(c);
			if (MODE == 4u) {
				s = int(c % p.inDim[d]);
			} else if (MODE != 0u) {
				int dim = int(p.inDim[d]);
				s -= int(p.before[d]);
				if (s < 0 || s >= dim) {
					if (MODE == 1u) return uvec2(p.fillLo, p.fillHi);
					if (MODE == 5u) {
						keep = true;
						return uvec2(0u);
					}
					if (MODE == 3u) s = clamp(s, 0, dim - 1);
					if (MODE == 2u) {
						if (s < 0) s = -s;
						if (s >= dim) s = 2 * (dim - 1) - s;
					}
				}
			}
			src += s * p.stride[d];
		}
	}
	return LOADN(x, p.offX, uint(src), ESIZE);
}

// place copies input element i to its position in the output (MODE 6).
void place(uint i) {
	uint rest = i;
	int dst = p.base;
	[[unroll]] for (int d = 5; d >= 0; d--) {
		if (d >= 6 - int(AXES)) {
			uint c = rest;
			if (d > 6 - int(AXES)) {
				uint q = rest / p.dims[d];
				c = rest - q * p.dims[d];
				rest = q;
			}
			dst += int(c) * p.stride[d];
		}
	}
	uint w = ESIZE / 4u;
	for (uint k = 0u; k < w; k++) o[p.offO + uint(dst) * w + k] = x[p.offX + i * w + k];
}

void main() {
	if (MODE != 6u) {
		storeUnits();
		return;
	}
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) place(i);
}
