#version 450
// Index-driven copies of any dtype; MODE holds an op code (opcodes.glsl). Gather: x as
// (outer, d, inner), out as (outer, m, inner) with out[o, j, q] = x[o, idx[j], q].
// TakeAlong: out has idx's shape and out[c] = x[c with axis coordinate idx[c]].
// Scatter: out[c] = x[c], then every update whose index lands on c replaces it (ADD: is
// added) in index order; each output element loops over the updates along the axis that
// can reach it, so there are no atomics and sums run in the CPU's order. OneHot:
// out[r, k] = ONE bits where idx[r] == k, else 0. (ScatterAdd is index_add.comp.) Negative indices count from the
// end of the axis; an index outside the axis reads as zero (Gather, TakeAlong) or is
// skipped (Scatter), and is reported through the error word (index_common.glsl), which
// fails the run. OneHot leaves a row with a label outside [0, depth) zero, as the CPU.
#extension GL_EXT_control_flow_attributes : require

#include "opcodes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ESIZE = 4;
layout(constant_id = 2) const uint MODE = 0;
layout(constant_id = 3) const bool IDX64 = false;
layout(constant_id = 4) const bool ADD = false;
layout(constant_id = 5) const uint NUM = 0; // the added type: 0 f32, 1 i32, 2 i64

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) readonly buffer I { uint ix[]; };
layout(set = 0, binding = 2) readonly buffer U { uint upd[]; };
layout(set = 0, binding = 3) buffer O { uint o[]; };
layout(set = 0, binding = 4) buffer E { uint errs[]; };

layout(push_constant) uniform Push {
	uint units, u0, n;
	uint offX, offI, offU, offO;
	uint m, inner, d, axis;
	uint a[6];
	uint b[6];
	uint tag; // the data check's tag in the error word
} p;

#include "layout_common.glsl"

#include "index_common.glsl"

uvec2 elem(uint i, inout bool keep) {
	if (MODE == INDEX_GATHER) {
		uint q = i % p.inner, t = i / p.inner;
		uint j = t % p.m, ou = t / p.m;
		int k = index(j, p.d);
		if (k < 0) return uvec2(0u);
		return LOADN(x, p.offX, (ou * p.d + uint(k)) * p.inner + q, ESIZE);
	}
	if (MODE == INDEX_ONE_HOT) {
		uint r = i / p.d, k = i - r * p.d;
		bool ok;
		int v = rawIndex(r, ok);
		return ok && v == int(k) ? uvec2(p.a[0], p.a[1]) : uvec2(0u);
	}
	// TakeAlong and Scatter walk coordinates over six right-aligned axes: a holds the
	// walked shape; b holds x's strides (TakeAlong) or idx's shape (Scatter).
	uint c[6];
	uint rest = i;
	[[unroll]] for (int d = 5; d >= 0; d--) {
		uint q = rest / p.a[d];
		c[d] = rest - q * p.a[d];
		rest = q;
	}
	if (MODE == INDEX_TAKE_ALONG) {
		int k = index(i, p.d);
		if (k < 0) return uvec2(0u);
		uint src = 0u;
		[[unroll]] for (uint d = 0u; d < 6u; d++) src += (d == p.axis ? uint(k) : c[d]) * p.b[d];
		return LOADN(x, p.offX, src, ESIZE);
	}
	// INDEX_SCATTER
	uvec2 v = LOADN(x, p.offX, i, ESIZE);
	uint pos0 = 0u, st = 1u, axisStride = 1u;
	[[unroll]] for (int d = 5; d >= 0; d--) {
		if (uint(d) == p.axis) {
			axisStride = st;
		} else {
			if (c[d] >= p.b[d]) return v;
			pos0 += c[d] * st;
		}
		st *= p.b[d];
	}
	for (uint j = 0u; j < p.b[p.axis]; j++) {
		uint pos = pos0 + j * axisStride;
		if (index(pos, p.a[p.axis]) == int(c[p.axis])) {
			uvec2 u = LOADN(upd, p.offU, pos, ESIZE);
			v = ADD ? add(v, u) : u;
		}
	}
	return v;
}

void main() { storeUnits(); }
