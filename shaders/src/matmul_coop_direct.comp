#version 450
// Cooperative-matrix matrix product that loads every fragment straight from global
// memory (through the L1 cache) instead of staging slabs in shared memory: no barriers,
// so each subgroup runs on its own. f16 inputs, f32 accumulation and output, row-major A
// (M×K) and B (K×N). The host uses it only when M and N are multiples of the workgroup
// tile, K of 16 and beta is 0, so no fragment leaves the matrices. The next K-step's fragments are
// loaded before the current step's products.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#include "matmul_common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 128;
layout(constant_id = 2) const uint BN = 128;
layout(constant_id = 4) const uint WM = 64;
layout(constant_id = 5) const uint WN = 32;

const uint LM = 16;
const uint LN = 8;
const uint LK = 16;

layout(set = 0, binding = 0) readonly buffer A { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) buffer C1 { float c[]; };

const uint FM = WM / LM, FN = WN / LN;

void main() {
	const uint batch = gl_WorkGroupID.z;
	const uint warp = gl_LocalInvocationID.x / 32;
	const uint m = gl_WorkGroupID.y * BM + (warp / (BN / WN)) * WM;
	const uint n = gl_WorkGroupID.x * BN + (warp % (BN / WN)) * WN;
	const uint abase = p.offA + batch * p.sA + m * p.lda;
	const uint bbase = p.offB + batch * p.sB + n;
	const uint cbase = p.offC + batch * p.sC;

	fcoopmatNV<32, gl_ScopeSubgroup, LM, LN> acc[FM * FN];
	[[unroll]] for (uint i = 0; i < FM * FN; i++) acc[i] = fcoopmatNV<32, gl_ScopeSubgroup, LM, LN>(0.0);
	fcoopmatNV<16, gl_ScopeSubgroup, LM, LK> fa[2][FM];
	fcoopmatNV<16, gl_ScopeSubgroup, LK, LN> fb[2][FN];

	[[unroll]] for (uint i = 0; i < FM; i++) coopMatLoadNV(fa[0][i], a, abase + i * LM * p.lda, p.lda, false);
	[[unroll]] for (uint j = 0; j < FN; j++) coopMatLoadNV(fb[0][j], b, bbase + j * LN, p.ldb, false);
	for (uint k = 0; k < p.K; k += 2 * LK) {
		if (k + LK < p.K) {
			[[unroll]] for (uint i = 0; i < FM; i++) coopMatLoadNV(fa[1][i], a, abase + i * LM * p.lda + k + LK, p.lda, false);
			[[unroll]] for (uint j = 0; j < FN; j++) coopMatLoadNV(fb[1][j], b, bbase + (k + LK) * p.ldb + j * LN, p.ldb, false);
		}
		[[unroll]] for (uint i = 0; i < FM; i++) {
			[[unroll]] for (uint j = 0; j < FN; j++) acc[i * FN + j] = coopMatMulAddNV(fa[0][i], fb[0][j], acc[i * FN + j]);
		}
		if (k + LK >= p.K) break;
		if (k + 2 * LK < p.K) {
			[[unroll]] for (uint i = 0; i < FM; i++) coopMatLoadNV(fa[0][i], a, abase + i * LM * p.lda + k + 2 * LK, p.lda, false);
			[[unroll]] for (uint j = 0; j < FN; j++) coopMatLoadNV(fb[0][j], b, bbase + (k + 2 * LK) * p.ldb + j * LN, p.ldb, false);
		}
		[[unroll]] for (uint i = 0; i < FM; i++) {
			[[unroll]] for (uint j = 0; j < FN; j++) acc[i * FN + j] = coopMatMulAddNV(fa[1][i], fb[1][j], acc[i * FN + j]);
		}
	}
	[[unroll]] for (uint i = 0; i < FM; i++) {
		[[unroll]] for (uint j = 0; j < FN; j++) {
			coopMatStoreNV(acc[i * FN + j], c, cbase + (m + i * LM) * p.ldc + n + j * LN, p.ldc, false);
		}
	}
}
