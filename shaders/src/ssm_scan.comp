#version 450
// Mamba's selective scan (tensor/ops_ssm.go): every (sequence, channel) is an
// independent recurrence over time of a state of NS values, held in registers.
//
// MODE 0: forward, one invocation per (sequence, channel); y and the final state are
//         written packed as the op's output.
// MODE 1: backward. A workgroup takes WG channels of one sequence (y = sequence): it
//         runs forward keeping a checkpoint every CK tokens, then takes the chunks in
//         reverse, recomputing their states into scratch and carrying ∂L/∂h back. ∂B
//         and ∂C, shared by all channels, are summed over the workgroup in shared
//         memory and left per workgroup in scratch; ∂A is left per sequence.
// MODE 2: the sums over workgroups (∂B, ∂C) and over sequences (∂A).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint NS = 16; // state size N
layout(constant_id = 2) const uint MODE = 0;
layout(constant_id = 3) const uint CK = 32;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer DT { float dt[]; };
layout(set = 0, binding = 2) readonly buffer A { float a[]; };
layout(set = 0, binding = 3) readonly buffer BM { float bm[]; };
layout(set = 0, binding = 4) readonly buffer CM { float cm[]; };
layout(set = 0, binding = 5) readonly buffer H0 { float h0[]; };
layout(set = 0, binding = 6) readonly buffer GY { float gy[]; };
layout(set = 0, binding = 7) buffer O { float o[]; };
layout(set = 0, binding = 8) buffer WS { float ws[]; };

layout(push_constant) uniform Push {
	uint B, T, D;
	uint offX, offDT, offA, offB, offC, offH0, offGY, offO, offWS;
} p;

const uint WG = gl_WorkGroupSize.x;

shared float red[2 * NS][WG];

uint perSeq() { return p.T * p.D + p.D * NS; }
uint chunks() { return (p.T + CK - 1u) / CK; }
uint perChannel() { return (chunks() + CK + 1u) * NS; }
uint groups() { return (p.D + WG - 1u) / WG; }
// Scratch: per (sequence, channel) checkpoints and chunk states, then ∂B and ∂C per
// workgroup of channels, then ∂A per sequence.
uint partB() { return p.offWS + p.B * p.D * perChannel(); }
uint partC() { return partB() + groups() * p.B * p.T * NS; }
uint partA() { return partC() + groups() * p.B * p.T * NS; }
// Gradient layout: x, dt, A, B, C, h0.
uint btd() { return p.B * p.T * p.D; }
uint gA() { return p.offO + 2u * btd(); }
uint gB() { return gA() + p.D * NS; }
uint gC() { return gB() + p.B * p.T * NS; }
uint gH0() { return gC() + p.B * p.T * NS; }

float h[NS];

void advance(uint b, uint t, uint d) {
	uint i = (b * p.T + t) * p.D + d;
	float delta = dt[p.offDT + i], xv = x[p.offX + i];
	uint r = (b * p.T + t) * NS;
	for (uint n = 0u; n < NS; n++) {
		h[n] = exp(delta * a[p.offA + d * NS + n]) * h[n] + delta * bm[p.offB + r + n] * xv;
	}
}

void forward() {
	for (uint q = gl_GlobalInvocationID.x; q < p.B * p.D; q += gl_NumWorkGroups.x * WG) {
		uint b = q / p.D, d = q % p.D;
		for (uint n = 0u; n < NS; n++) h[n] = h0[p.offH0 + (b * p.D + d) * NS + n];
		for (uint t = 0u; t < p.T; t++) {
			advance(b, t, d);
			uint r = (b * p.T + t) * NS;
			float y = 0.0;
			for (uint n = 0u; n < NS; n++) y += cm[p.offC + r + n] * h[n];
			o[p.offO + b * perSeq() + t * p.D + d] = y;
		}
		for (uint n = 0u; n < NS; n++) o[p.offO + b * perSeq() + p.T * p.D + d * NS + n] = h[n];
	}
}

void backward() {
	uint l = gl_LocalInvocationID.x;
	uint g = gl_WorkGroupID.x, b = gl_WorkGroupID.y;
	uint d = g * WG + l;
	bool live = d < p.D;
	uint dc = min(d, p.D - 1u); // idle invocations shadow a real channel and contribute zeros
	uint base = p.offWS + (b * p.D + dc) * perChannel();
	for (uint n = 0u; n < NS; n++) h[n] = h0[p.offH0 + (b * p.D + dc) * NS + n];
	for (uint t = 0u; t < p.T; t++) {
		if (t % CK == 0u && live) {
			for (uint n = 0u; n < NS; n++) ws[base + (t / CK) * NS + n] = h[n];
		}
		advance(b, t, dc);
	}
	float lam[NS], dA[NS];
	for (uint n = 0u; n < NS; n++) {
		lam[n] = gy[p.offGY + b * perSeq() + p.T * p.D + dc * NS + n];
		dA[n] = 0.0;
	}
	uint cbase = base + chunks() * NS;
	for (uint c = chunks(); c-- > 0u;) {
		uint t0 = c * CK, t1 = min(p.T, t0 + CK);
		for (uint n = 0u; n < NS; n++) h[n] = ws[base + c * NS + n];
		for (uint t = t0; t < t1; t++) {
			advance(b, t, dc);
			if (live) {
				for (uint n = 0u; n < NS; n++) ws[cbase + (t - t0 + 1u) * NS + n] = h[n];
			}
		}
		if (live) {
			for (uint n = 0u; n < NS; n++) ws[cbase + n] = ws[base + c * NS + n];
		}
		for (uint t = t1; t-- > t0;) {
			uint i = (b * p.T + t) * p.D + dc;
			float delta = dt[p.offDT + i], xv = x[p.offX + i];
			float gv = live ? gy[p.offGY + b * perSeq() + t * p.D + dc] : 0.0;
			uint r = (b * p.T + t) * NS;
			uint prev = cbase + (t - t0) * NS, cur = prev + NS;
			float dDelta = 0.0, dX = 0.0;
			for (uint n = 0u; n < NS; n++) {
				float lt = lam[n] + cm[p.offC + r + n] * gv;
				float an = a[p.offA + dc * NS + n];
				float e = exp(delta * an);
				float hp = live ? ws[prev + n] : 0.0;
				float hc = live ? ws[cur + n] : 0.0;
				float dAt = lt * hp * e;
				dDelta += dAt * an + lt * bm[p.offB + r + n] * xv;
				dA[n] += dAt * delta;
				red[n][l] = live ? lt * delta * xv : 0.0;
				red[NS + n][l] = gv * hc;
				dX += lt * delta * bm[p.offB + r + n];
				lam[n] = e * lt;
			}
			if (live) {
				o[p.offO + i] = dX;
				o[p.offO + btd() + i] = dDelta;
			}
			barrier();
			if (l < 2u * NS) {
				float s = 0.0;
				for (uint k = 0u; k < WG; k++) s += red[l][k];
				uint part = l < NS ? partB() : partC();
				ws[part + (g * p.B + b) * p.T * NS + t * NS + (l % NS)] = s;
			}
			barrier();
		}
	}
	if (live) {
		for (uint n = 0u; n < NS; n++) {
			o[gH0() + (b * p.D + d) * NS + n] = lam[n];
			ws[partA() + (b * p.D + d) * NS + n] = dA[n];
		}
	}
}

void sums() {
	uint bt = p.B * p.T * NS;
	for (uint q = gl_GlobalInvocationID.x; q < bt + p.D * NS; q += gl_NumWorkGroups.x * WG) {
		if (q < bt) {
			float sb = 0.0, sc = 0.0;
			for (uint g = 0u; g < groups(); g++) {
				sb += ws[partB() + g * bt + q];
				sc += ws[partC() + g * bt + q];
			}
			o[gB() + q] = sb;
			o[gC() + q] = sc;
		} else {
			uint dn = q - bt;
			float s = 0.0;
			for (uint b = 0u; b < p.B; b++) s += ws[partA() + b * p.D * NS + dn];
			o[gA() + dn] = s;
		}
	}
}

void main() {
	if (MODE == 0u) forward();
	else if (MODE == 1u) backward();
	else sums();
}
