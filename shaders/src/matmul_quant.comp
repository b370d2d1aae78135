#version 450
// Products with a quantised matrix Q (R rows of K weights in ggml blocks along K) and
// the decoding of such a matrix to f32.
//
// MODE 0, product: D[r][c] = Q_r · F_c for C rows F_c of K floats, written at
// o[offO + z*sO + r*rs + c*cs] (x @ wᵀ and w @ y differ only in those strides). A
// workgroup takes rows r = x, x + groups.x, ... and the CR rows of F of chunk y; its
// threads split the row into units of 32 weights (a Q4_0 or Q8_0 block, or one of the
// eight sub-blocks of a Q4_K super-block), decode a unit into registers once and
// multiply it with every F row of the chunk, then reduce across the workgroup. Batch
// entries are z, with F advancing by sF and the output by sO.
//
// MODE 1, decode: one thread per unit writes its 32 weights to o[offO + 32*unit ...].
//
// The blocks are read from 32-bit words (a block's start is 2-byte aligned at best),
// so bytes and float16 scales are assembled from words.
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint FMT = 0;  // 0 Q4_0, 1 Q8_0, 2 Q4_K
layout(constant_id = 2) const uint CR = 8;   // rows of F per workgroup
layout(constant_id = 3) const uint MODE = 0; // 0 product, 1 decode

layout(set = 0, binding = 0) readonly buffer Q { uint q[]; };
layout(set = 0, binding = 1) readonly buffer F { float f[]; };
layout(set = 0, binding = 2) buffer O { float o[]; };

layout(push_constant) uniform Push {
	uint offQ, offF, offO; // in words
	uint R, K, C;          // rows of Q, weights per row, rows of F
	uint rs, cs;           // output strides of r and c
	uint sF, sO;           // batch strides
	uint rowBytes;         // bytes of one row of Q
} p;

shared float red[CR * gl_WorkGroupSize.x];

// byteAt returns the byte at byte offset b of q.
uint byteAt(uint b) { return (q[b >> 2] >> ((b & 3u) * 8u)) & 0xffu; }

// u16At returns the 16 bits at even byte offset b.
uint u16At(uint b) { return (q[b >> 2] >> ((b & 2u) * 8u)) & 0xffffu; }

// wordAt returns the four bytes starting at byte offset b, which may be unaligned.
uint wordAt(uint b) {
	uint lo = q[b >> 2];
	uint sh = (b & 3u) * 8u;
	if (sh == 0u) return lo;
	return (lo >> sh) | (q[(b >> 2) + 1u] << (32u - sh));
}

float halfAt(uint b) { return unpackHalf2x16(u16At(b)).x; }

// decode writes the 32 weights of unit u of the row starting at byte base.
void decode(uint base, uint u, out float w[32]) {
	if (FMT == 0u) { // Q4_0: f16 scale, 16 bytes of nibbles; byte j holds weights j and j+16
		uint b = base + 18u * u;
		float d = halfAt(b);
		[[unroll]] for (uint i = 0u; i < 4u; i++) {
			uint v = wordAt(b + 2u + 4u * i);
			[[unroll]] for (uint j = 0u; j < 4u; j++) {
				uint by = (v >> (8u * j)) & 0xffu;
				w[4u * i + j] = d * (float(by & 15u) - 8.0);
				w[4u * i + j + 16u] = d * (float(by >> 4u) - 8.0);
			}
		}
	} else if (FMT == 1u) { // Q8_0: f16 scale, 32 int8 values
		uint b = base + 34u * u;
		float d = halfAt(b);
		[[unroll]] for (uint i = 0u; i < 8u; i++) {
			uint v = wordAt(b + 2u + 4u * i);
			[[unroll]] for (uint j = 0u; j < 4u; j++) {
				w[4u * i + j] = d * float(bitfieldExtract(int(v), int(8u * j), 8));
			}
		}
	} else { // Q4_K: sub-block s of super-block u/8
		uint b = base + 144u * (u >> 3u);
		uint s = u & 7u;
		float d = halfAt(b), dmin = halfAt(b + 2u);
		uint sc, m;
		if (s < 4u) {
			sc = byteAt(b + 4u + s) & 63u;
			m = byteAt(b + 8u + s) & 63u;
		} else {
			uint hi = byteAt(b + 8u + s);
			sc = (hi & 15u) | ((byteAt(b + s) >> 6u) << 4u);
			m = (hi >> 4u) | ((byteAt(b + 4u + s) >> 6u) << 4u);
		}
		float dl = d * float(sc), ml = dmin * float(m);
		uint qb = b + 16u + 32u * (s >> 1u); // 32 bytes shared by sub-blocks 2g and 2g+1
		uint shift = 4u * (s & 1u);
		[[unroll]] for (uint i = 0u; i < 8u; i++) {
			uint v = q[(qb >> 2) + i]; // super-blocks are 144 bytes: qb is word-aligned when base is
			[[unroll]] for (uint j = 0u; j < 4u; j++) {
				w[4u * i + j] = dl * float((v >> (8u * j + shift)) & 15u) - ml;
			}
		}
	}
}

void main() {
	const uint units = p.K / 32u;
	const uint qbase = p.offQ * 4u;
	if (MODE == 1u) {
		uint total = p.R * units;
		for (uint u = gl_GlobalInvocationID.x; u < total; u += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
			uint r = u / units;
			float w[32];
			decode(qbase + r * p.rowBytes, u - r * units, w);
			[[unroll]] for (uint i = 0u; i < 32u; i++) o[p.offO + 32u * u + i] = w[i];
		}
		return;
	}
	const uint T = gl_WorkGroupSize.x;
	const uint t = gl_LocalInvocationID.x;
	const uint c0 = gl_WorkGroupID.y * CR;
	const uint fbase = p.offF + gl_WorkGroupID.z * p.sF;
	const uint obase = p.offO + gl_WorkGroupID.z * p.sO;
	for (uint r = gl_WorkGroupID.x; r < p.R; r += gl_NumWorkGroups.x) {
		float acc[CR];
		[[unroll]] for (uint c = 0u; c < CR; c++) acc[c] = 0.0;
		for (uint u = t; u < units; u += T) {
			float w[32];
			decode(qbase + r * p.rowBytes, u, w);
			[[unroll]] for (uint c = 0u; c < CR; c++) {
				if (c0 + c < p.C) {
					uint fo = fbase + (c0 + c) * p.K + 32u * u;
					float s = 0.0;
					[[unroll]] for (uint i = 0u; i < 32u; i++) s = fma(w[i], f[fo + i], s);
					acc[c] += s;
				}
			}
		}
		[[unroll]] for (uint c = 0u; c < CR; c++) red[c * T + t] = acc[c];
		barrier();
		for (uint h = T / 2u; h > 0u; h >>= 1u) {
			if (t < h) {
				[[unroll]] for (uint c = 0u; c < CR; c++) red[c * T + t] += red[c * T + t + h];
			}
			barrier();
		}
		if (t == 0u) {
			for (uint c = 0u; c < CR; c++) {
				if (c0 + c < p.C) o[obase + r * p.rs + (c0 + c) * p.cs] = red[c * T];
			}
		}
		barrier();
	}
}
