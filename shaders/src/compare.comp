#version 450
// Comparisons (Bool out), logical ops on Bool, Not, and Where, with NumPy broadcasting:
// the output's shape is collapsed to at most six right-aligned axes with each input's
// element strides (0 where it broadcasts). OP (opcodes.glsl, generated from tensor's op
// table) selects a comparison (inputs of dtype TIN), and, or, xor, not (on the bytes, as
// the CPU does) or where(cond, a, b) (a and b of ESIZE bytes). Floats compare as IEEE
// values: NaN is unequal to everything.
#extension GL_EXT_control_flow_attributes : require

#include "opcodes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ESIZE = 1;
layout(constant_id = 2) const uint OP = 0;
layout(constant_id = 3) const uint TIN = 0;
// AXES: how many of the six right-aligned axes are in use (the outermost of them needs
// no division).
layout(constant_id = 4) const uint AXES = 6;

layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(set = 0, binding = 2) readonly buffer C { uint c[]; };
layout(set = 0, binding = 3) buffer O { uint o[]; };

layout(push_constant) uniform Push {
	uint units, u0, n;
	uint offA, offB, offC, offO;
	uint dims[6];
	uint sa[6];
	uint sb[6];
	uint sc[6];
} p;

#include "layout_common.glsl"
#include "cast_common.glsl"

// order returns -1, 0 or 1 comparing integer (or Bool) elements x and y of type TIN.
int order(uvec2 x, uvec2 y) {
	uvec2 s = toI64(x, TIN), t = toI64(y, TIN);
	if (s.y != t.y) return int(s.y) < int(t.y) ? -1 : 1;
	if (s.x != t.x) return s.x < t.x ? -1 : 1;
	return 0;
}

bool compare(uvec2 x, uvec2 y) {
	if (isFloatType(TIN)) {
		float s = asFloat(x, TIN), t = asFloat(y, TIN);
		switch (OP) {
		case COMPARE_EQUAL: return s == t;
		case COMPARE_NOT_EQUAL: return !(s == t);
		case COMPARE_LESS: return s < t;
		case COMPARE_LESS_EQUAL: return s <= t;
		case COMPARE_GREATER: return s > t;
		}
		return s >= t; // COMPARE_GREATER_EQUAL
	}
	int r = order(x, y);
	switch (OP) {
	case COMPARE_EQUAL: return r == 0;
	case COMPARE_NOT_EQUAL: return r != 0;
	case COMPARE_LESS: return r < 0;
	case COMPARE_LESS_EQUAL: return r <= 0;
	case COMPARE_GREATER: return r > 0;
	}
	return r >= 0; // COMPARE_GREATER_EQUAL
}

uvec2 elem(uint i, inout bool keep) {
	uint rest = i, ia = 0u, ib = 0u, ic = 0u;
	[[unroll]] for (int d = 5; d >= 0; d--) {
		if (d >= 6 - int(AXES)) {
			uint co = rest; // the outermost axis: rest < dims[d]
			if (d > 6 - int(AXES)) {
				uint q = rest / p.dims[d];
				co = rest - q * p.dims[d];
				rest = q;
			}
			ia += co * p.sa[d];
			ib += co * p.sb[d];
			ic += co * p.sc[d];
		}
	}
	if (OP == COMPARE_WHERE) {
		uint cond = LOADN(a, p.offA, ia, 1u).x;
		return cond != 0u ? LOADN(b, p.offB, ib, ESIZE) : LOADN(c, p.offC, ic, ESIZE);
	}
	bool logical = OP == COMPARE_AND || OP == COMPARE_OR || OP == COMPARE_XOR || OP == COMPARE_NOT;
	uint insz = logical ? 1u : dtypeSize(TIN);
	uvec2 x = LOADN(a, p.offA, ia, insz);
	if (OP == COMPARE_NOT) return uvec2(x.x ^ 1u, 0u);
	uvec2 y = LOADN(b, p.offB, ib, insz);
	switch (OP) {
	case COMPARE_AND: return uvec2(x.x & y.x, 0u);
	case COMPARE_OR: return uvec2(x.x | y.x, 0u);
	case COMPARE_XOR: return uvec2(x.x ^ y.x, 0u);
	}
	return uvec2(compare(x, y) ? 1u : 0u, 0u); // COMPARE_EQUAL ... COMPARE_GREATER_EQUAL
}

void main() { storeUnits(); }
