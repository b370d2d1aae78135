#version 450
// Convolution as an implicit GEMM: the column (im2col) matrix is gathered into shared
// memory tile by tile and never written out. Per group g (gl_WorkGroupID.z), with
// cg = C/G, kg = O/G, KK = KH*KW, the three modes are the products
//   CONV_CONV, forward:        Y[n,o,pix]   = Σ_(c,t)   W[o,c,t] · im2col(n,c,t,pix)
//                           M = kg, cols = N*OH*OW, K = cg*KK;   A = W,  B = X
//   CONV_CONV_TRANSPOSE, data gradient:  DX[n,c,iy,ix] = Σ_(o,t) W[o,c,t] · GY[n,o,oy,ox] over the
//                           taps t whose window position (oy,ox) lands on (iy,ix)
//                           M = cg, cols = N*H*W,   K = kg*KK;   A = W,  B = GY
//   CONV_CONV_FILTER_GRAD, filter gradient: DW[o,c,t]  = Σ_(n,pix) GY[n,o,pix] · im2col(n,c,t,pix)
//                           M = kg, cols = cg*KK,  K = N*OH*OW; A = GY, B = X
// (MODE holds one of those op codes, opcodes.glsl.) Each of the (BM/TM)*(BN/TN) threads computes
// TM×TN outputs; column tiles are strided over gl_WorkGroupID.x so any size fits the grid.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

#include "opcodes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint BM = 64;
layout(constant_id = 3) const uint BN = 64;
layout(constant_id = 4) const uint BK = 16;
layout(constant_id = 5) const uint TM = 4;
layout(constant_id = 6) const uint TN = 4;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer Cbuf { float c[]; };

#define X b
#define XOFF p.offB
#include "conv_common.glsl"

const uint NT = (BM / TM) * (BN / TN);
shared float as[BK * BM];
shared float bs[BK * BN];

uint cg, kg, KK, plane, inPlane;

// loadA returns A(m, k) of group g, 0 outside M×K.
float loadA(uint g, uint m, uint k, uint M, uint K) {
	if (m >= M || k >= K) return 0.0;
	if (MODE == CONV_CONV) return a[p.offA + (g * kg + m) * cg * KK + k];
	if (MODE == CONV_CONV_TRANSPOSE) {
		uint o = k / KK, t = k % KK;
		return a[p.offA + ((g * kg + o) * cg + m) * KK + t];
	}
	uint n = k / plane, pix = k % plane;
	return a[p.offA + (n * p.O + g * kg + m) * plane + pix];
}

// loadB returns B(k, col) of group g, 0 outside K×cols.
float loadB(uint g, uint k, uint col, uint K, uint cols) {
	if (k >= K || col >= cols) return 0.0;
	if (MODE == CONV_CONV) return im2col(col / plane, g * cg + k / KK, k % KK, col % plane);
	if (MODE == CONV_CONV_FILTER_GRAD) return im2col(k / plane, g * cg + col / KK, col % KK, k % plane);
	uint o = k / KK, t = k % KK;
	uint n = col / inPlane, pix = col % inPlane;
	uint ky = t / p.KW, kx = t % p.KW;
	int y = int(pix / p.W + p.PT) - int(ky * p.DH);
	int x = int(pix % p.W + p.PL) - int(kx * p.DW);
	if (y < 0 || x < 0 || uint(y) % p.SH != 0 || uint(x) % p.SW != 0) return 0.0;
	uint oy = uint(y) / p.SH, ox = uint(x) / p.SW;
	if (oy >= p.OH || ox >= p.OW) return 0.0;
	return b[p.offB + ((n * p.O + g * kg + o) * p.OH + oy) * p.OW + ox];
}

// store writes C(m, col) of group g.
void store(uint g, uint m, uint col, float v) {
	if (MODE == CONV_CONV) {
		c[p.offC + (col / plane * p.O + g * kg + m) * plane + col % plane] = v;
	} else if (MODE == CONV_CONV_TRANSPOSE) {
		c[p.offC + (col / inPlane * p.C + g * cg + m) * inPlane + col % inPlane] = v;
	} else {
		c[p.offC + (g * kg + m) * cg * KK + col] = v;
	}
}

void main() {
	cg = p.C / p.G;
	kg = p.O / p.G;
	KK = p.KH * p.KW;
	plane = p.OH * p.OW;
	inPlane = p.H * p.W;
	uint M = MODE == CONV_CONV_TRANSPOSE ? cg : kg;
	uint K = MODE == CONV_CONV ? cg * KK : (MODE == CONV_CONV_TRANSPOSE ? kg * KK : p.N * plane);
	uint cols = MODE == CONV_CONV ? p.N * plane : (MODE == CONV_CONV_TRANSPOSE ? p.N * inPlane : cg * KK);

	const uint g = gl_WorkGroupID.z;
	const uint m0 = gl_WorkGroupID.y * BM;
	const uint tid = gl_LocalInvocationID.x;
	const uint tx = tid % (BN / TN), ty = tid / (BN / TN);
	const uint colTiles = (cols + BN - 1) / BN;

	for (uint tile = gl_WorkGroupID.x; tile < colTiles; tile += gl_NumWorkGroups.x) {
		const uint n0 = tile * BN;
		float acc[TM * TN];
		[[unroll]] for (uint i = 0; i < TM * TN; i++) acc[i] = 0.0;
		for (uint k0 = 0; k0 < K; k0 += BK) {
			barrier();
			for (uint e = tid; e < BM * BK; e += NT) {
				uint m = e / BK, k = e % BK;
				as[k * BM + m] = loadA(g, m0 + m, k0 + k, M, K);
			}
			for (uint e = tid; e < BK * BN; e += NT) {
				uint k = e / BN, n = e % BN;
				bs[k * BN + n] = loadB(g, k0 + k, n0 + n, K, cols);
			}
			barrier();
			[[unroll]] for (uint k = 0; k < BK; k++) {
				float av[TM], bv[TN];
				[[unroll]] for (uint i = 0; i < TM; i++) av[i] = as[k * BM + ty + i * (BM / TM)];
				[[unroll]] for (uint j = 0; j < TN; j++) bv[j] = bs[k * BN + tx + j * (BN / TN)];
				[[unroll]] for (uint i = 0; i < TM; i++) {
					[[unroll]] for (uint j = 0; j < TN; j++) acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]);
				}
			}
		}
		[[unroll]] for (uint i = 0; i < TM; i++) {
			uint m = m0 + ty + i * (BM / TM);
			if (m >= M) continue;
			[[unroll]] for (uint j = 0; j < TN; j++) {
				uint col = n0 + tx + j * (BN / TN);
				if (col < cols) store(g, m, col, acc[i * TN + j]);
			}
		}
	}
}
