#version 450
// Rotary position embedding of X (rows of T positions × D features): pairs (2i, 2i+1)
// with 2i < DIMS become (x0 cos θ - x1 sin θ, x0 sin θ + x1 cos θ) with θ = float(pos)·F_i,
// one f32 product as on the CPU; features from DIMS on are copied. The frequencies F_i
// (tensor.RoPEFrequencies) are computed on the host and read from a buffer, so they are
// exactly the host's. θ is reduced modulo 2π in three parts (Cody-Waite) before sin and cos,
// whose accuracy Vulkan only bounds on [-π, π]. Positions are I32, or I64 (POS64, read
// as their low words). One thread per output pair, grid-stride.

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool POS64 = false;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer P { int pos[]; };
layout(set = 0, binding = 2) readonly buffer Fq { float freq[]; };
layout(set = 0, binding = 3) writeonly buffer Cbuf { float c[]; };

layout(push_constant) uniform Push {
	uint rows, T, D, dims;
	uint offA, offP, offF, offC;
} p;

// 2π split so that k·C1 and k·C2 are exact for the multiples k that occur.
const float C1 = 6.28125;
const float C2 = 1.9353071693331003e-3;
const float C3 = 1.0253131677018246e-11;

void main() {
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
		precise float theta = float(ps) * freq[p.offF + i];
		precise float kq = round(theta * 0.15915494309189535);
		precise float r = ((theta - kq * C1) - kq * C2) - kq * C3;
		float cs = cos(r), sn = sin(r);
		float x0 = a[p.offA + base + 2 * i], x1 = a[p.offA + base + 2 * i + 1];
		c[p.offC + base + 2 * i] = x0 * cs - x1 * sn;
		c[p.offC + base + 2 * i + 1] = x0 * sn + x1 * cs;
	}
}
