#version 450
// Reductions along axes that yield indices or need more than one pass. The input is
// viewed as (outer, r, inner). MODE 0 ArgMax, 1 ArgMin (I64 out, first index on ties, a
// NaN counts as the extreme and the first wins), 2 CumSum (F32; EXCLUSIVE, REVERSE),
// 3 TopK (I64 indices of the K first in a stable sort, NaN largest), 4 Var (F32, two
// passes: mean, then squared deviations, divided by r - correction). Sums use
// compensated (Kahan) summation, declared precise, to stay close to the CPU's float64
// accumulators. Values of ArgMax, ArgMin and TopK have dtype TIN; the others are F32.
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

float f(uint i) { return uintBitsToFloat(a[p.offA + i]); }

void storeI64(uint at, uint v) {
	o[p.offO + 2u * at] = v;
	o[p.offO + 2u * at + 1u] = 0u;
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	uint lines = p.outer * p.inner;
	uint total = MODE == 3u ? lines * p.r : lines;
	for (uint t = gl_GlobalInvocationID.x; t < total; t += stride) {
		if (MODE == 3u) {
			uint q = t % p.inner, rest = t / p.inner;
			uint i = rest % p.r, ou = rest / p.r;
			uint base = ou * p.r * p.inner + q;
			uvec2 xi = load(base + i * p.inner);
			uint rank = 0u;
			for (uint j = 0u; j < p.r && rank < p.k; j++) {
				if (j == i) continue;
				uvec2 xj = load(base + j * p.inner);
				bool before = LARGEST ? (greater(xj, xi) || (j < i && !greater(xi, xj)))
				                      : (greater(xi, xj) || (j < i && !greater(xj, xi)));
				if (before) rank++;
			}
			if (rank < p.k) storeI64((ou * p.k + rank) * p.inner + q, i);
			continue;
		}
		uint q = t % p.inner, ou = t / p.inner;
		uint base = ou * p.r * p.inner + q;
		if (MODE <= 1u) {
			uvec2 best = load(base);
			uint bi = 0u;
			for (uint i = 1u; i < p.r && !isNaN(best); i++) {
				uvec2 v = load(base + i * p.inner);
				if (isNaN(v) || (MODE == 0u ? greater(v, best) : greater(best, v))) {
					best = v;
					bi = i;
				}
			}
			storeI64(t, bi);
			continue;
		}
		if (MODE == 2u) {
			precise float s = 0.0, comp = 0.0;
			for (uint step = 0u; step < p.r; step++) {
				uint at = base + (REVERSE ? p.r - 1u - step : step) * p.inner;
				float v = f(at);
				if (EXCLUSIVE) o[p.offO + at] = floatBitsToUint(s);
				precise float y = v - comp;
				precise float nt = s + y;
				comp = (nt - s) - y;
				s = nt;
				if (!EXCLUSIVE) o[p.offO + at] = floatBitsToUint(s);
			}
			continue;
		}
		precise float s = 0.0, comp = 0.0;
		for (uint i = 0u; i < p.r; i++) {
			precise float y = f(base + i * p.inner) - comp;
			precise float nt = s + y;
			comp = (nt - s) - y;
			s = nt;
		}
		float mean = s / float(p.r);
		s = 0.0;
		comp = 0.0;
		for (uint i = 0u; i < p.r; i++) {
			float dv = f(base + i * p.inner) - mean;
			precise float y = dv * dv - comp;
			precise float nt = s + y;
			comp = (nt - s) - y;
			s = nt;
		}
		o[p.offO + t] = floatBitsToUint(s / p.divisor);
	}
}
