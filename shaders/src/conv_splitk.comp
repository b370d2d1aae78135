#version 450
// Filter gradient DW[o,c,t] = Σ_(n,pix) GY[n,o,pix] · im2col(n,c,t,pix) for few outputs
// and a long reduction (the first layers of a CNN), where conv.comp's MODE 2 would run a
// handful of GEMM tiles serially: a workgroup computes BM×BN outputs of group
// gl_WorkGroupID.z, its threads split the reduction (n, pix) between them, and the
// partial sums meet in a shared-memory tree.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 4;
layout(constant_id = 2) const uint BN = 4;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };  // GY
layout(set = 0, binding = 1) readonly buffer B { float b[]; };  // X
layout(set = 0, binding = 2) writeonly buffer Cbuf { float c[]; };

#define X b
#define XOFF p.offB
#include "conv_common.glsl"

const uint NT = gl_WorkGroupSize.x; // a power of two
shared float red[BM * BN * NT];

void main() {
	const uint cg = p.C / p.G, kg = p.O / p.G, KK = p.KH * p.KW, plane = p.OH * p.OW;
	const uint K = p.N * plane, cols = cg * KK;
	const uint g = gl_WorkGroupID.z, tid = gl_LocalInvocationID.x;
	const uint m0 = gl_WorkGroupID.y * BM, c0 = gl_WorkGroupID.x * BN;
	float acc[BM * BN];
	[[unroll]] for (uint e = 0; e < BM * BN; e++) acc[e] = 0.0;
	for (uint k = tid; k < K; k += NT) {
		uint n = k / plane, pix = k % plane;
		float av[BM], bv[BN];
		[[unroll]] for (uint i = 0; i < BM; i++) {
			uint m = m0 + i;
			av[i] = m < kg ? a[p.offA + (n * p.O + g * kg + m) * plane + pix] : 0.0;
		}
		[[unroll]] for (uint j = 0; j < BN; j++) {
			uint col = c0 + j;
			bv[j] = col < cols ? im2col(n, g * cg + col / KK, col % KK, pix) : 0.0;
		}
		[[unroll]] for (uint i = 0; i < BM; i++) {
			[[unroll]] for (uint j = 0; j < BN; j++) acc[i * BN + j] = fma(av[i], bv[j], acc[i * BN + j]);
		}
	}
	[[unroll]] for (uint e = 0; e < BM * BN; e++) red[e * NT + tid] = acc[e];
	barrier();
	for (uint s = NT / 2; s > 0; s >>= 1) {
		if (tid < s) {
			[[unroll]] for (uint e = 0; e < BM * BN; e++) red[e * NT + tid] += red[e * NT + tid + s];
		}
		barrier();
	}
	if (tid < BM * BN) {
		uint m = m0 + tid / BN, col = c0 + tid % BN;
		if (m < kg && col < cols) c[p.offC + (g * kg + m) * cols + col] = red[tid * NT];
	}
}
