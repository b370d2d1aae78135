#version 450
// Max and average pooling over planes of H×W (1-D has H = KH = 1) and their gradients.
// Windows are clipped to the input: padding never enters a maximum, and an average
// divides by the clipped window's size unless INCLUDE_PAD. MODE (opcodes.glsl) max_pool,
// avg_pool: one thread per output. max_pool_grad, avg_pool_grad: one thread per input
// element gathers from every window that covers it, in window order, so no atomics are
// needed; the max gradient goes to each window's FIRST maximum (row-major).
#include "opcodes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const bool INCLUDE_PAD = false;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };  // X (GY for avg_pool_grad)
layout(set = 0, binding = 1) readonly buffer B { float b[]; };  // GY (max_pool_grad)
layout(set = 0, binding = 2) writeonly buffer Cbuf { float c[]; };

layout(push_constant) uniform Push {
	uint planes, H, W, OH, OW;
	uint KH, KW, SH, SW, PT, PL;
	uint offA, offB, offC;
} p;

// window returns the clipped input rows [r.x, r.y) and columns [r.z, r.w) of output (oy, ox).
ivec4 window(uint oy, uint ox) {
	int y0 = int(oy * p.SH) - int(p.PT), x0 = int(ox * p.SW) - int(p.PL);
	return ivec4(max(y0, 0), min(y0 + int(p.KH), int(p.H)), max(x0, 0), min(x0 + int(p.KW), int(p.W)));
}

// argmax returns the plane index of the first largest input of window r in plane base.
uint argmax(uint base, ivec4 r) {
	uint best = uint(r.x) * p.W + uint(r.z);
	float m = a[base + best];
	for (int y = r.x; y < r.y; y++) {
		for (int x = r.z; x < r.w; x++) {
			float v = a[base + uint(y) * p.W + uint(x)];
			if (v > m) {
				m = v;
				best = uint(y) * p.W + uint(x);
			}
		}
	}
	return best;
}

float divisor(ivec4 r) {
	if (INCLUDE_PAD) return float(p.KH * p.KW);
	return float((r.y - r.x) * (r.w - r.z));
}

void main() {
	uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
	uint inPlane = p.H * p.W, outPlane = p.OH * p.OW;
	if (MODE == CONV_POOL_MAX_POOL || MODE == CONV_POOL_AVG_POOL) {
		for (uint e = gl_GlobalInvocationID.x; e < p.planes * outPlane; e += stride) {
			uint pl = e / outPlane, pix = e % outPlane;
			ivec4 r = window(pix / p.OW, pix % p.OW);
			uint base = p.offA + pl * inPlane;
			float v;
			if (MODE == CONV_POOL_MAX_POOL) {
				v = a[base + argmax(base, r)];
			} else {
				v = 0.0;
				for (int y = r.x; y < r.y; y++) {
					for (int x = r.z; x < r.w; x++) v += a[base + uint(y) * p.W + uint(x)];
				}
				v /= divisor(r);
			}
			c[p.offC + e] = v;
		}
		return;
	}
	for (uint e = gl_GlobalInvocationID.x; e < p.planes * inPlane; e += stride) {
		uint pl = e / inPlane, pix = e % inPlane;
		int iy = int(pix / p.W), ix = int(pix % p.W);
		// Windows oy with oy*SH - PT <= iy < oy*SH - PT + KH, likewise for ox.
		int ylo = max(0, (iy + int(p.PT) - int(p.KH) + int(p.SH)) / int(p.SH));
		int yhi = min(int(p.OH) - 1, (iy + int(p.PT)) / int(p.SH));
		int xlo = max(0, (ix + int(p.PL) - int(p.KW) + int(p.SW)) / int(p.SW));
		int xhi = min(int(p.OW) - 1, (ix + int(p.PL)) / int(p.SW));
		uint base = p.offA + pl * inPlane;
		uint gbase = pl * outPlane;
		float acc = 0.0;
		for (int oy = ylo; oy <= yhi; oy++) {
			for (int ox = xlo; ox <= xhi; ox++) {
				ivec4 r = window(uint(oy), uint(ox));
				uint o = gbase + uint(oy) * p.OW + uint(ox);
				if (MODE == CONV_POOL_MAX_POOL_GRAD) {
					if (argmax(base, r) == pix) acc += b[p.offB + o];
				} else {
					acc += a[p.offA + o] / divisor(r); // CONV_POOL_AVG_POOL_GRAD
				}
			}
		}
		c[p.offC + e] = acc;
	}
}
