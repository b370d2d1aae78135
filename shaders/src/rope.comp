#version 450
// Rotary position embedding of X (rows of T positions × D features): pairs (2i, 2i+1)
// with 2i < DIMS become (x0 cos θ - x1 sin θ, x0 sin θ + x1 cos θ) with θ = float(pos)·F_i,
// one f32 product as on the CPU; features from DIMS on are copied. The frequencies F_i
// (tensor.RoPEFrequencies, at most 64) are specialisation constants F0..F63, so they are exactly
// the host's. θ is reduced modulo 2π in three parts (Cody-Waite) before sin and cos,
// whose accuracy Vulkan only bounds on [-π, π]. Positions are I32, or I64 (POS64, read
// as their low words). One thread per output pair, grid-stride.

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool POS64 = false;
layout(constant_id = 2) const float F0 = 0.0;
layout(constant_id = 3) const float F1 = 0.0;
layout(constant_id = 4) const float F2 = 0.0;
layout(constant_id = 5) const float F3 = 0.0;
layout(constant_id = 6) const float F4 = 0.0;
layout(constant_id = 7) const float F5 = 0.0;
layout(constant_id = 8) const float F6 = 0.0;
layout(constant_id = 9) const float F7 = 0.0;
layout(constant_id = 10) const float F8 = 0.0;
layout(constant_id = 11) const float F9 = 0.0;
layout(constant_id = 12) const float F10 = 0.0;
layout(constant_id = 13) const float F11 = 0.0;
layout(constant_id = 14) const float F12 = 0.0;
layout(constant_id = 15) const float F13 = 0.0;
layout(constant_id = 16) const float F14 = 0.0;
layout(constant_id = 17) const float F15 = 0.0;
layout(constant_id = 18) const float F16 = 0.0;
layout(constant_id = 19) const float F17 = 0.0;
layout(constant_id = 20) const float F18 = 0.0;
layout(constant_id = 21) const float F19 = 0.0;
layout(constant_id = 22) const float F20 = 0.0;
layout(constant_id = 23) const float F21 = 0.0;
layout(constant_id = 24) const float F22 = 0.0;
layout(constant_id = 25) const float F23 = 0.0;
layout(constant_id = 26) const float F24 = 0.0;
layout(constant_id = 27) const float F25 = 0.0;
layout(constant_id = 28) const float F26 = 0.0;
layout(constant_id = 29) const float F27 = 0.0;
layout(constant_id = 30) const float F28 = 0.0;
layout(constant_id = 31) const float F29 = 0.0;
layout(constant_id = 32) const float F30 = 0.0;
layout(constant_id = 33) const float F31 = 0.0;
layout(constant_id = 34) const float F32 = 0.0;
layout(constant_id = 35) const float F33 = 0.0;
layout(constant_id = 36) const float F34 = 0.0;
layout(constant_id = 37) const float F35 = 0.0;
layout(constant_id = 38) const float F36 = 0.0;
layout(constant_id = 39) const float F37 = 0.0;
layout(constant_id = 40) const float F38 = 0.0;
layout(constant_id = 41) const float F39 = 0.0;
layout(constant_id = 42) const float F40 = 0.0;
layout(constant_id = 43) const float F41 = 0.0;
layout(constant_id = 44) const float F42 = 0.0;
layout(constant_id = 45) const float F43 = 0.0;
layout(constant_id = 46) const float F44 = 0.0;
layout(constant_id = 47) const float F45 = 0.0;
layout(constant_id = 48) const float F46 = 0.0;
layout(constant_id = 49) const float F47 = 0.0;
layout(constant_id = 50) const float F48 = 0.0;
layout(constant_id = 51) const float F49 = 0.0;
layout(constant_id = 52) const float F50 = 0.0;
layout(constant_id = 53) const float F51 = 0.0;
layout(constant_id = 54) const float F52 = 0.0;
layout(constant_id = 55) const float F53 = 0.0;
layout(constant_id = 56) const float F54 = 0.0;
layout(constant_id = 57) const float F55 = 0.0;
layout(constant_id = 58) const float F56 = 0.0;
layout(constant_id = 59) const float F57 = 0.0;
layout(constant_id = 60) const float F58 = 0.0;
layout(constant_id = 61) const float F59 = 0.0;
layout(constant_id = 62) const float F60 = 0.0;
layout(constant_id = 63) const float F61 = 0.0;
layout(constant_id = 64) const float F62 = 0.0;
layout(constant_id = 65) const float F63 = 0.0;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer P { int pos[]; };
layout(set = 0, binding = 2) writeonly buffer Cbuf { float c[]; };

layout(push_constant) uniform Push {
	uint rows, T, D, dims;
	uint offA, offP, offC;
} p;

// 2π split so that k·C1 and k·C2 are exact for the multiples k that occur.
const float C1 = 6.28125;
const float C2 = 1.9353071693331003e-3;
const float C3 = 1.0253131677018246e-11;

void main() {
	float freq[64] = float[](F0, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13, F14, F15, F16, F17, F18, F19, F20, F21, F22, F23, F24, F25, F26, F27, F28, F29, F30, F31, F32, F33, F34, F35, F36, F37, F38, F39, F40, F41, F42, F43, F44, F45, F46, F47, F48, F49, F50, F51, F52, F53, F54, F55, F56, F57, F58, F59, F60, F61, F62, F63);
	uint half_ = p.dims / 2, rest = p.D - p.dims;
	uint perRow = half_ + rest;
	uint total = p.rows * perRow;
	for (uint e = gl_GlobalInvocationID.x; e < total; e += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
		uint row = e / perRow, i = e % perRow;
		uint base = row * p.D;
		if (i >= half_) {
			uint f = p.dims + (i - half_);
			c[p.offC + base + f] = a[p.offA + base + f];
			continue;
		}
		uint t = row % p.T;
		int ps = POS64 ? pos[p.offP + 2 * t] : pos[p.offP + t];
		precise float theta = float(ps) * freq[i];
		precise float kq = round(theta * 0.15915494309189535);
		precise float r = ((theta - kq * C1) - kq * C2) - kq * C3;
		float cs = cos(r), sn = sin(r);
		float x0 = a[p.offA + base + 2 * i], x1 = a[p.offA + base + 2 * i + 1];
		c[p.offC + base + 2 * i] = x0 * cs - x1 * sn;
		c[p.offC + base + 2 * i + 1] = x0 * sn + x1 * cs;
	}
}
