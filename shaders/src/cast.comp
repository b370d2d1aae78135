#version 450
// Cast between F32, F16, BF16, I32, I64 and Bool with the CPU backend's semantics: floats
// become integers by truncation toward zero, integers become floats rounded to nearest
// (ties to even), half types go through float32, a Bool target stores value != 0, and
// integers narrow by keeping their low bits.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint ESIZE = 4;
layout(constant_id = 2) const uint SRC = 0;
layout(constant_id = 3) const uint DST = 0;

layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) buffer O { uint o[]; };

layout(push_constant) uniform Push {
	uint units, u0, n;
	uint offX, offO;
} p;

#include "layout_common.glsl"
#include "cast_common.glsl"

uvec2 elem(uint i, inout bool keep) {
	uvec2 v = LOADN(x, p.offX, i, dtypeSize(SRC));
	if (DST == 5u) {
		bool nz = isFloatType(SRC) ? !(asFloat(v, SRC) == 0.0) : (v.x | v.y) != 0u;
		return uvec2(nz ? 1u : 0u, 0u);
	}
	if (isFloatType(DST)) {
		float f = isFloatType(SRC) ? asFloat(v, SRC) : i64ToFloat(toI64(v, SRC));
		if (DST == 1u) return uvec2(floatToF16(f), 0u);
		if (DST == 2u) return uvec2(floatToBF16(f), 0u);
		return uvec2(floatBitsToUint(f), 0u);
	}
	uvec2 w = isFloatType(SRC) ? floatToI64(asFloat(v, SRC)) : toI64(v, SRC);
	return DST == 3u ? uvec2(w.x, 0u) : w;
}

void main() { storeUnits(); }
