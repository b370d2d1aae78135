#version 450
// ScatterAdd, Gather's adjoint (the embedding gradient): out = x, then
// out[o, idx[j], q] += upd[o, j, q] for every j. x and out are (outer, d, inner), upd is
// (outer, m, inner). One workgroup per output row (o, k): its invocations test the
// indices a chunk of WG at a time, compact the matches of the chunk in index order with
// a shared-memory prefix sum, then add those update rows, each invocation owning the
// positions q = t, t+WG, ... of the row. Every element thus receives its updates in
// increasing j, as on the CPU: bit-identical sums, deterministic, no atomics. A row
// costs m index reads plus its matches' additions. Negative indices count from the
// end of the axis; an index outside it is skipped and reported through the error word
// (index_common.glsl), which fails the run.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint NUM = 0; // 0 f32, 1 i32, 2 i64
layout(constant_id = 2) const bool IDX64 = false;

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) readonly buffer I { uint ix[]; };
layout(set = 0, binding = 2) readonly buffer U { uint upd[]; };
layout(set = 0, binding = 3) buffer O { uint o[]; };
layout(set = 0, binding = 4) buffer E { uint errs[]; };

layout(push_constant) uniform Push {
	uint rows, m, inner, d;
	uint offX, offI, offU, offO;
	uint tag; // the data check's tag in the error word
} p;

#include "index_common.glsl"

shared uint hits[gl_WorkGroupSize.x];
shared uint scan[gl_WorkGroupSize.x];

const uint W = NUM == 2u ? 2u : 1u; // words per element

uvec2 get(uint at, bool fromX) {
	uint w = at * W;
	uvec2 v = uvec2(fromX ? x[p.offX + w] : upd[p.offU + w], 0u);
	if (W == 2u) v.y = fromX ? x[p.offX + w + 1u] : upd[p.offU + w + 1u];
	return v;
}

void put(uint at, uvec2 v) {
	o[p.offO + at * W] = v.x;
	if (W == 2u) o[p.offO + at * W + 1u] = v.y;
}

uvec2 cur(uint at) { return uvec2(o[p.offO + at * W], W == 2u ? o[p.offO + at * W + 1u] : 0u); }

void main() {
	uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	if (row >= p.rows) return;
	uint t = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
	uint k = row % p.d, ou = row / p.d;
	for (uint q = t; q < p.inner; q += wg) put(row * p.inner + q, get(row * p.inner + q, true));
	for (uint chunk = 0u; chunk < p.m; chunk += wg) {
		uint j = chunk + t;
		bool hit = j < p.m && index(j, p.d) == int(k);
		scan[t] = hit ? 1u : 0u;
		barrier();
		for (uint s = 1u; s < wg; s <<= 1) {
			uint v = t >= s ? scan[t - s] : 0u;
			barrier();
			scan[t] += v;
			barrier();
		}
		if (hit) hits[scan[t] - 1u] = j;
		barrier();
		uint total = scan[wg - 1u];
		for (uint h = 0u; h < total; h++) {
			uint src = (ou * p.m + hits[h]) * p.inner;
			for (uint q = t; q < p.inner; q += wg) put(row * p.inner + q, add(cur(row * p.inner + q), get(src + q, false)));
		}
		barrier();
	}
}
