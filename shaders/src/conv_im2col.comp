#version 450
// Im2Col: X (N, C, H, W) unfolds to (N, C*KH*KW, OH, OW); row c*KK + t of an output
// position holds channel c at kernel tap t, 0 where the window covers padding. One
// thread per output element, grid-stride.

#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer Cbuf { float c[]; };

#define X a
#define XOFF p.offA
#include "conv_common.glsl"

void main() {
	uint KK = p.KH * p.KW, plane = p.OH * p.OW;
	uint total = p.N * p.C * KK * plane;
	for (uint e = gl_GlobalInvocationID.x; e < total; e += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
		uint pix = e % plane, r = e / plane;
		uint t = r % KK, nc = r / KK;
		c[p.offC + e] = im2col(nc / p.C, nc % p.C, t, pix);
	}
}
