#version 450
// Cooperative-matrix (tensor core) matrix product through GL_NV_cooperative_matrix:
// fp16 inputs (or bf16 inputs widened to fp16 in shared memory, with -DBF16), f32
// accumulation and f32 output. C = A·B (+ beta·C) for row-major A (M×K) and B (K×N),
// batched over gl_WorkGroupID.z. The host requires K, N, lda, ldb and the offsets of A
// and B to be multiples of 8 (16-byte rows); M and N edges are handled. Each subgroup
// owns a WM×WN block of C held as LM×LN accumulators; slabs of BK columns of A and rows
// of B are double-buffered in shared memory, the next one loaded from global memory
// into registers while the current one is multiplied.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#include "matmul_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 3) const uint BK = 32;
layout(constant_id = 4) const uint WM = 64;
layout(constant_id = 5) const uint WN = 32;
// GROUPM > 0 walks output tiles in column groups GROUPM tiles tall, so workgroups that
// run together share slabs of A and B in the L2 cache.
layout(constant_id = 6) const uint GROUPM = 0;

// LM×LN×LK is the cooperative-matrix shape, fixed per SPIR-V variant.
const uint LM = 16;
const uint LN = SHAPE_N;
const uint LK = 16;

layout(set = 0, binding = 0) readonly buffer A { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer B { uvec4 b[]; };
layout(set = 0, binding = 2) buffer C1 { float c[]; };

const uint SUB = 32;
const uint NW = (BM / WM) * (BN / WN);
const uint NT = NW * SUB;
// Shared rows are padded by 8 halves (one uvec4) against bank conflicts.
const uint SA = BK / 8 + 1; // uvec4 per row of the A slab (BM rows)
const uint SB = BN / 8 + 1; // uvec4 per row of the B slab (BK rows)
shared uvec4 as[2 * BM * SA];
shared uvec4 bs[2 * BK * SB];
// Per-subgroup staging for edge tiles.
shared float scratch[NW * LM * LN];

const uint LA = (BM * BK / 8 + NT - 1) / NT;
const uint LB = (BK * BN / 8 + NT - 1) / NT;
uvec4 ra[LA];
uvec4 rb[LB];

#ifdef BF16
// widen turns eight bf16 values into eight fp16 values (exact inside fp16's range).
uvec4 widen(uvec4 v) {
	uvec4 o;
	[[unroll]] for (uint i = 0; i < 4; i++) {
		vec2 f = vec2(uintBitsToFloat(v[i] << 16), uintBitsToFloat(v[i] & 0xffff0000u));
		o[i] = packHalf2x16(f);
	}
	return o;
}
#else
#define widen(v) (v)
#endif

void load(uint abase, uint bbase, uint m0, uint n0, uint k0) {
	[[unroll]] for (uint i = 0; i < LA; i++) {
		uint g = gl_LocalInvocationID.x + i * NT;
		uint r = g / (BK / 8), c = (g % (BK / 8)) * 8;
		uvec4 v = uvec4(0);
		if (g < BM * BK / 8 && m0 + r < p.M && k0 + c < p.K) v = a[(abase + (m0 + r) * p.lda + k0 + c) / 8];
		ra[i] = v;
	}
	[[unroll]] for (uint i = 0; i < LB; i++) {
		uint g = gl_LocalInvocationID.x + i * NT;
		uint r = g / (BN / 8), c = (g % (BN / 8)) * 8;
		uvec4 v = uvec4(0);
		if (g < BK * BN / 8 && k0 + r < p.K && n0 + c < p.N) v = b[(bbase + (k0 + r) * p.ldb + n0 + c) / 8];
		rb[i] = v;
	}
}

void store(uint buf) {
	[[unroll]] for (uint i = 0; i < LA; i++) {
		uint g = gl_LocalInvocationID.x + i * NT;
		if (g < BM * BK / 8) as[buf * BM * SA + (g / (BK / 8)) * SA + g % (BK / 8)] = widen(ra[i]);
	}
	[[unroll]] for (uint i = 0; i < LB; i++) {
		uint g = gl_LocalInvocationID.x + i * NT;
		if (g < BK * BN / 8) bs[buf * BK * SB + (g / (BN / 8)) * SB + g % (BN / 8)] = widen(rb[i]);
	}
}

void main() {
	const uint batch = gl_WorkGroupID.z;
	uint tm = gl_WorkGroupID.y, tn = gl_WorkGroupID.x;
	if (GROUPM > 0) {
		uint pid = tm * gl_NumWorkGroups.x + tn;
		uint width = GROUPM * gl_NumWorkGroups.x;
		uint first = (pid / width) * GROUPM;
		uint size = min(gl_NumWorkGroups.y - first, GROUPM);
		tm = first + (pid % width) % size;
		tn = (pid % width) / size;
	}
	const uint m0 = tm * BM;
	const uint n0 = tn * BN;
	const uint abase = p.offA + batch * p.sA;
	const uint bbase = p.offB + batch * p.sB;
	const uint cbase = p.offC + batch * p.sC;
	const uint warp = gl_LocalInvocationID.x / SUB;
	const uint wm = (warp / (BN / WN)) * WM;
	const uint wn = (warp % (BN / WN)) * WN;
	const uint FM = WM / LM, FN = WN / LN;

	fcoopmatNV<32, gl_ScopeSubgroup, LM, LN> acc[FM * FN];
	[[unroll]] for (uint i = 0; i < FM * FN; i++) acc[i] = fcoopmatNV<32, gl_ScopeSubgroup, LM, LN>(0.0);

	load(abase, bbase, m0, n0, 0);
	store(0);
	barrier();
	uint buf = 0;
	for (uint k0 = 0; k0 < p.K; k0 += BK) {
		bool more = k0 + BK < p.K;
		if (more) load(abase, bbase, m0, n0, k0 + BK);
		[[unroll]] for (uint kk = 0; kk < BK; kk += LK) {
			fcoopmatNV<16, gl_ScopeSubgroup, LM, LK> fa[FM];
			fcoopmatNV<16, gl_ScopeSubgroup, LK, LN> fb[FN];
			[[unroll]] for (uint i = 0; i < FM; i++) {
				coopMatLoadNV(fa[i], as, buf * BM * SA + (wm + i * LM) * SA + kk / 8, SA, false);
			}
			[[unroll]] for (uint j = 0; j < FN; j++) {
				coopMatLoadNV(fb[j], bs, buf * BK * SB + kk * SB + (wn + j * LN) / 8, SB, false);
			}
			[[unroll]] for (uint i = 0; i < FM; i++) {
				[[unroll]] for (uint j = 0; j < FN; j++) acc[i * FN + j] = coopMatMulAddNV(fa[i], fb[j], acc[i * FN + j]);
			}
		}
		if (more) store(buf ^ 1);
		barrier();
		buf ^= 1;
	}

	bool inside = m0 + BM <= p.M && n0 + BN <= p.N && p.beta == 0.0;
	if (inside) {
		[[unroll]] for (uint i = 0; i < FM; i++) {
			[[unroll]] for (uint j = 0; j < FN; j++) {
				coopMatStoreNV(acc[i * FN + j], c, cbase + (m0 + wm + i * LM) * p.ldc + n0 + wn + j * LN, p.ldc, false);
			}
		}
		return;
	}
	// Edge tiles (and beta != 0) go through per-subgroup scratch in shared memory, whose
	// slabs are free now, and are written element by element with bounds checks.
	[[unroll]] for (uint i = 0; i < FM; i++) {
		[[unroll]] for (uint j = 0; j < FN; j++) {
			coopMatStoreNV(acc[i * FN + j], scratch, warp * LM * LN, LN, false);
			subgroupBarrier();
			for (uint e = gl_LocalInvocationID.x % SUB; e < LM * LN; e += SUB) {
				uint m = m0 + wm + i * LM + e / LN, n = n0 + wn + j * LN + e % LN;
				if (m < p.M && n < p.N) {
					uint idx = cbase + m * p.ldc + n;
					float v = scratch[warp * LM * LN + e];
					if (p.beta != 0.0) v += p.beta * c[idx];
					c[idx] = v;
				}
			}
			subgroupBarrier();
		}
	}
}
