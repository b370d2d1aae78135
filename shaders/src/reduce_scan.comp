#version 450
// Reductions along axes that yield indices or need more than one pass. The input is
// viewed as (outer, r, inner); a "line" is one (outer, inner) position's r elements.
// MODE (opcodes.glsl) ArgMax, ArgMin, TopK: one workgroup per line selects, in K rounds, the
// first element of a stable order that comes after the previous round's pick (ArgMax
// and ArgMin are K = 1): values descending (LARGEST) or ascending, ties by lower index,
// NaN largest; for ArgMax and ArgMin a NaN comes first, as in the CPU backend. Each
// round is a strided scan plus a shared-memory tree, so a line costs K*r/WG steps.
// Values have dtype TIN; indices are written as I64.
// MODE Var: one workgroup per line, two passes (mean, then squared deviations) with
// compensated per-thread sums, divided by r - correction (push divisor).
// MODE CumSum (EXCLUSIVE, REVERSE): one workgroup per line scans it a chunk of WG
// elements at a time (a shared-memory Hillis-Steele scan) and carries the chunk totals
// in a compensated running sum, staying close to the CPU's float64 accumulator.
#include "opcodes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint TIN = 0;
layout(constant_id = 3) const bool EXCLUSIVE = false;
layout(constant_id = 4) const bool REVERSE = false;
layout(constant_id = 5) const bool LARGEST = true;

layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) buffer O { uint o[]; };

layout(push_constant) uniform Push {
	uint outer, r, inner;
	uint offA, offO;
	uint k;
	float divisor;
} p;

#include "cast_common.glsl"

const uint NONE = 0xffffffffu;

shared uint pick[gl_WorkGroupSize.x];
shared float part[gl_WorkGroupSize.x];

uvec2 load(uint i) {
	uint sz = dtypeSize(TIN);
	if (sz == 8u) return uvec2(a[p.offA + 2u * i], a[p.offA + 2u * i + 1u]);
	if (sz == 4u) return uvec2(a[p.offA + i], 0u);
	return uvec2((a[p.offA + i / 2u] >> (16u * (i & 1u))) & 0xffffu, 0u);
}

bool isNaN(uvec2 v) {
	if (!isFloatType(TIN)) return false;
	return (floatBitsToUint(asFloat(v, TIN)) & 0x7fffffffu) > 0x7f800000u;
}

// greater orders values with NaN above everything.
bool greater(uvec2 x, uvec2 y) {
	if (isFloatType(TIN)) {
		if (isNaN(x)) return !isNaN(y);
		return asFloat(x, TIN) > asFloat(y, TIN);
	}
	uvec2 s = toI64(x, TIN), t = toI64(y, TIN);
	return s.y != t.y ? int(s.y) > int(t.y) : s.x > t.x;
}

// before reports whether element (x, i) precedes (y, j) in the selection order.
bool before(uvec2 x, uint i, uvec2 y, uint j) {
	if (MODE != REDUCE_SCAN_TOPK && isNaN(x) != isNaN(y)) return isNaN(x);
	// Descending for ARGMAX and the largest TOPK, ascending for REDUCE_SCAN_ARGMIN.
	bool up = MODE == REDUCE_SCAN_ARGMAX || (MODE == REDUCE_SCAN_TOPK && LARGEST);
	bool first = up ? greater(x, y) : greater(y, x);
	bool second = up ? greater(y, x) : greater(x, y);
	return first || (!second && i < j);
}

void storeI64(uint at, uint v) {
	o[p.offO + 2u * at] = v;
	o[p.offO + 2u * at + 1u] = 0u;
}

float f(uint i) { return uintBitsToFloat(a[p.offA + i]); }

// lineSum adds the line's values (centred on mean when squares) over the workgroup.
float lineSum(uint base, bool squares, float mean) {
	uint t = gl_LocalInvocationID.x;
	precise float s = 0.0, comp = 0.0;
	for (uint i = t; i < p.r; i += gl_WorkGroupSize.x) {
		float v = f(base + i * p.inner);
		if (squares) v = (v - mean) * (v - mean);
		precise float y = v - comp;
		precise float nt = s + y;
		comp = (nt - s) - y;
		s = nt;
	}
	part[t] = s;
	barrier();
	for (uint h = gl_WorkGroupSize.x / 2u; h > 0u; h >>= 1) {
		if (t < h) part[t] += part[t + h];
		barrier();
	}
	float total = part[0];
	barrier();
	return total;
}

void main() {
	uint lines = p.outer * p.inner;
	uint line = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	if (line >= lines) return;
	uint t = gl_LocalInvocationID.x;
	uint q = line % p.inner, ou = line / p.inner;
	uint base = ou * p.r * p.inner + q;
	if (MODE == REDUCE_SCAN_CUMSUM) {
		precise float carry = 0.0, comp = 0.0;
		for (uint chunk = 0u; chunk < p.r; chunk += gl_WorkGroupSize.x) {
			uint step = chunk + t;
			uint at = base + (REVERSE ? p.r - 1u - step : step) * p.inner;
			float v = step < p.r ? f(at) : 0.0;
			part[t] = v;
			barrier();
			for (uint s = 1u; s < gl_WorkGroupSize.x; s <<= 1) {
				float add = t >= s ? part[t - s] : 0.0;
				barrier();
				part[t] += add;
				barrier();
			}
			float within = EXCLUSIVE ? (t > 0u ? part[t - 1u] : 0.0) : part[t];
			if (step < p.r) o[p.offO + at] = floatBitsToUint(carry + (within - comp));
			precise float y = part[gl_WorkGroupSize.x - 1u] - comp;
			precise float nt = carry + y;
			comp = (nt - carry) - y;
			carry = nt;
			barrier();
		}
		return;
	}
	if (MODE == REDUCE_SCAN_VAR) {
		float mean = lineSum(base, false, 0.0) / float(p.r);
		float ss = lineSum(base, true, mean);
		if (t == 0u) o[p.offO + line] = floatBitsToUint(ss / p.divisor);
		return;
	}
	uint rounds = MODE == REDUCE_SCAN_TOPK ? p.k : 1u;
	uint prev = NONE;
	uvec2 xprev = uvec2(0u);
	for (uint round = 0u; round < rounds; round++) {
		uint best = NONE;
		uvec2 xbest = uvec2(0u);
		for (uint i = t; i < p.r; i += gl_WorkGroupSize.x) {
			uvec2 x = load(base + i * p.inner);
			if (prev != NONE && !before(xprev, prev, x, i)) continue;
			if (best == NONE || before(x, i, xbest, best)) {
				best = i;
				xbest = x;
			}
		}
		pick[t] = best;
		barrier();
		for (uint h = gl_WorkGroupSize.x / 2u; h > 0u; h >>= 1) {
			if (t < h) {
				uint u = pick[t + h], w = pick[t];
				if (u != NONE && (w == NONE || before(load(base + u * p.inner), u, load(base + w * p.inner), w))) pick[t] = u;
			}
			barrier();
		}
		prev = pick[0];
		xprev = load(base + prev * p.inner);
		if (t == 0u) storeI64(MODE == REDUCE_SCAN_TOPK ? (ou * p.k + round) * p.inner + q : line, prev);
		barrier();
	}
}
