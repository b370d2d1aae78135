#version 450
// Tiled f32 matrix product for every device: C = A·B (+ beta·C), batched over
// gl_WorkGroupID.z with per-operand batch strides, optional transposes of A and B, any
// M, N, K. Tile sizes and options are specialisation constants, so one SPIR-V serves every
// configuration. Each thread computes TM×TN outputs held in registers, as 4×4 blocks
// spread over its subgroup's tile so that a subgroup's shared reads hit few distinct
// addresses (broadcast). Shared slabs are double-buffered: the next K-slab is read from
// global memory into registers while the current one is consumed, then stored into the
// other buffer, so one barrier per slab suffices. VEC4 loads four elements at once and
// needs every offset, stride and the contiguous dimension to be multiples of four (the
// host checks).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "matmul_common.glsl"

#ifdef TILE
// A variant with the tile compiled in (TILE=BM,BN,BK,TM,TN): glslc then unrolls every
// loop itself. NVIDIA's driver leaves the thread-tile loops of specialised 8×8 tiles
// rolled, which puts the accumulators in local memory (2.3 TFLOP/s instead of ~35).
#define TILE_SET(bm, bn, bk, tm, tn) \
	const uint BM = bm, BN = bn, BK = bk, TM = tm, TN = tn; \
	layout(local_size_x = (bm / tm) * (bn / tn)) in;
#define TILE_EXPAND(t) TILE_SET(t)
TILE_EXPAND(TILE)
#else
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 8;
layout(constant_id = 4) const uint TM = 4;
layout(constant_id = 5) const uint TN = 4;
#endif
layout(constant_id = 6) const bool TA = false;
layout(constant_id = 7) const bool TB = false;
layout(constant_id = 8) const bool VEC4 = false;
// WTN threads of a 32-wide subgroup lie along N, 32/WTN along M.
layout(constant_id = 9) const uint WTN = 8;

layout(set = 0, binding = 0) readonly buffer A1 { float a1[]; };
layout(set = 0, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(set = 0, binding = 1) readonly buffer B1 { float b1[]; };
layout(set = 0, binding = 1) readonly buffer B4 { vec4 b4[]; };
layout(set = 0, binding = 2) buffer C1 { float c1[]; };

const uint NT = (BM / TM) * (BN / TN);
// Shared tiles are k-major, held as vec4 so the inner loop reads four values per load:
// as[k][m/4], bs[k][n/4], each row padded by one vec4 against bank conflicts.
const uint SA = BM / 4 + 1;
const uint SB = BN / 4 + 1;
shared vec4 as[2 * BK * SA];
shared vec4 bs[2 * BK * SB];

// Groups of four elements per thread per slab (the last round may leave threads idle).
const uint LA = (BM * BK / 4 + NT - 1) / NT;
const uint LB = (BN * BK / 4 + NT - 1) / NT;

vec4 ra[LA];
vec4 rb[LB];

// loadA reads the slab of A starting at k0 into registers, zero outside the matrix.
// Group g covers four consecutive elements along A's contiguous dimension.
void loadA(uint abase, uint m0, uint k0, uint kEnd) {
	[[unroll]] for (uint i = 0; i < LA; i++) {
		uint g = gl_LocalInvocationID.x + i * NT;
		// contiguous dimension: k (row-major A) or m (transposed A)
		uint cw = TA ? BM / 4 : BK / 4;
		uint c = (g % cw) * 4, r = g / cw;
		uint m = TA ? m0 + c : m0 + r;
		uint k = TA ? k0 + r : k0 + c;
		uint rowIdx = TA ? k : m, colIdx = TA ? m : k;
		uint rowLim = TA ? kEnd : p.M, colLim = TA ? p.M : kEnd;
		vec4 v = vec4(0);
		if (g < BM * BK / 4 && rowIdx < rowLim) {
			uint base = abase + rowIdx * p.lda + colIdx;
			if (VEC4) {
				if (colIdx < colLim) v = a4[base / 4];
			} else {
				[[unroll]] for (uint j = 0; j < 4; j++) {
					if (colIdx + j < colLim) v[j] = a1[base + j];
				}
			}
		}
		ra[i] = v;
	}
}

void storeA(uint base) {
	[[unroll]] for (uint i = 0; i < LA; i++) {
		uint g = gl_LocalInvocationID.x + i * NT;
		uint cw = TA ? BM / 4 : BK / 4;
		uint c = (g % cw) * 4, r = g / cw;
		// No break: a loop with an early exit is not unrolled, and a rolled loop over
		// a register array puts it in local memory.
		if (g < BM * BK / 4) {
			if (TA) {
				as[base + r * SA + c / 4] = ra[i];
			} else {
				[[unroll]] for (uint j = 0; j < 4; j++) as[base + (c + j) * SA + r / 4][r % 4] = ra[i][j];
			}
		}
	}
}

void loadB(uint bbase, uint n0, uint k0, uint kEnd) {
	[[unroll]] for (uint i = 0; i < LB; i++) {
		uint g = gl_LocalInvocationID.x + i * NT;
		// contiguous dimension: n (row-major B) or k (transposed B)
		uint cw = TB ? BK / 4 : BN / 4;
		uint c = (g % cw) * 4, r = g / cw;
		uint n = TB ? n0 + r : n0 + c;
		uint k = TB ? k0 + c : k0 + r;
		uint rowIdx = TB ? n : k, colIdx = TB ? k : n;
		uint rowLim = TB ? p.N : kEnd, colLim = TB ? kEnd : p.N;
		vec4 v = vec4(0);
		if (g < BN * BK / 4 && rowIdx < rowLim) {
			uint base = bbase + rowIdx * p.ldb + colIdx;
			if (VEC4) {
				if (colIdx < colLim) v = b4[base / 4];
			} else {
				[[unroll]] for (uint j = 0; j < 4; j++) {
					if (colIdx + j < colLim) v[j] = b1[base + j];
				}
			}
		}
		rb[i] = v;
	}
}

void storeB(uint base) {
	[[unroll]] for (uint i = 0; i < LB; i++) {
		uint g = gl_LocalInvocationID.x + i * NT;
		uint cw = TB ? BK / 4 : BN / 4;
		uint c = (g % cw) * 4, r = g / cw;
		if (g < BN * BK / 4) {
			if (TB) {
				[[unroll]] for (uint j = 0; j < 4; j++) bs[base + (c + j) * SB + r / 4][r % 4] = rb[i][j];
			} else {
				bs[base + r * SB + c / 4] = rb[i];
			}
		}
	}
}

void main() {
	const uint batch = gl_WorkGroupID.z / p.splits;
	const uint split = gl_WorkGroupID.z % p.splits;
	const uint kBegin = split * p.kChunk;
	const uint kEnd = min(p.K, kBegin + p.kChunk);
	const uint m0 = gl_WorkGroupID.y * BM;
	const uint n0 = gl_WorkGroupID.x * BN;
	const uint abase = p.offA + batch * p.sA;
	const uint bbase = p.offB + batch * p.sB;
	const uint cbase = p.offC + batch * p.sC + split * p.M * p.ldc;

	// A subgroup covers (32/WTN)·TM rows and WTN·TN columns. Thread (lx, ly) of it owns
	// the 4×4 blocks at rows ly*4 + i*(32/WTN)*4 and columns lx*4 + j*WTN*4 of that tile.
	const uint WTM = 32 / WTN;
	const uint GM = TM / 4, GN = TN / 4;
	const uint warp = gl_LocalInvocationID.x / 32, lane = gl_LocalInvocationID.x % 32;
	const uint WX = BN / (WTN * TN);
	const uint rowA = (warp / WX) * WTM * GM + lane / WTN; // vec4 index within a k-row of as
	const uint colB = (warp % WX) * WTN * GN + lane % WTN; // vec4 index within a k-row of bs

	float acc[TM * TN];
	[[unroll]] for (uint i = 0; i < TM * TN; i++) acc[i] = 0.0;

	loadA(abase, m0, kBegin, kEnd);
	loadB(bbase, n0, kBegin, kEnd);
	storeA(0);
	storeB(0);
	barrier();
	uint buf = 0;
	for (uint k0 = kBegin; k0 < kEnd; k0 += BK) {
		bool more = k0 + BK < kEnd;
		if (more) {
			loadA(abase, m0, k0 + BK, kEnd);
			loadB(bbase, n0, k0 + BK, kEnd);
		}
		[[unroll]] for (uint k = 0; k < BK; k++) {
			float av[TM];
			float bv[TN];
			[[unroll]] for (uint i = 0; i < GM; i++) {
				vec4 v = as[buf * BK * SA + k * SA + rowA + i * WTM];
				[[unroll]] for (uint j = 0; j < 4; j++) av[i * 4 + j] = v[j];
			}
			[[unroll]] for (uint i = 0; i < GN; i++) {
				vec4 v = bs[buf * BK * SB + k * SB + colB + i * WTN];
				[[unroll]] for (uint j = 0; j < 4; j++) bv[i * 4 + j] = v[j];
			}
			[[unroll]] for (uint i = 0; i < TM; i++) {
				[[unroll]] for (uint j = 0; j < TN; j++) acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]);
			}
		}
		if (more) {
			storeA((buf ^ 1) * BK * SA);
			storeB((buf ^ 1) * BK * SB);
		}
		barrier();
		buf ^= 1;
	}

	// Bounds are tested inside the loops rather than with continue, for the same reason.
	[[unroll]] for (uint i = 0; i < TM; i++) {
		uint m = m0 + (rowA + (i / 4) * WTM) * 4 + i % 4;
		[[unroll]] for (uint j = 0; j < TN; j++) {
			uint n = n0 + (colB + (j / 4) * WTN) * 4 + j % 4;
			if (m < p.M && n < p.N) {
				uint idx = cbase + m * p.ldc + n;
				float v = acc[i * TN + j];
				if (p.beta != 0.0) v += p.beta * c1[idx];
				c1[idx] = v;
			}
		}
	}
}
