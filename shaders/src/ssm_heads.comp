#version 450
// The per-head recurrences RWKV-6 (OP 0), gated linear attention (OP 1) and RWKV-7
// (OP 2); tensor/ops_ssm.go states them. One workgroup runs one (sequence, head) with
// one invocation per line of the S×S state, held in registers: a column in the forward
// passes of RWKV-6 and GLA and a row in RWKV-7's, so each invocation computes its own
// output element without a reduction; the backward passes take the other orientation
// where that saves reductions (rows for RWKV-6 and GLA, columns for RWKV-7). The
// token's vectors go through shared memory; sums across lines go through red.
//
// MODE 0: forward. y and the final state are written packed as the op's output.
// MODE 1: backward. The state is run forward once keeping a checkpoint every CK tokens
//         (scratch), then the chunks are taken in reverse: the chunk's states are
//         recomputed from its checkpoint into scratch and the gradient of the state
//         is carried back through it token by token, writing every input's gradient.
//         RWKV-6's ∂u is left per sequence in scratch, for MODE 2.
// MODE 2: RWKV-6's ∂u, summed over the sequences (one workgroup per head).
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint MODE = 0;
layout(constant_id = 3) const uint CK = 32;

layout(set = 0, binding = 0) readonly buffer V0 { float v0[]; };
layout(set = 0, binding = 1) readonly buffer V1 { float v1[]; };
layout(set = 0, binding = 2) readonly buffer V2 { float v2[]; };
layout(set = 0, binding = 3) readonly buffer V3 { float v3[]; };
layout(set = 0, binding = 4) readonly buffer V4 { float v4[]; };
layout(set = 0, binding = 5) readonly buffer V5 { float v5[]; };
layout(set = 0, binding = 6) readonly buffer U { float bu[]; };
layout(set = 0, binding = 7) readonly buffer S0 { float bs0[]; };
layout(set = 0, binding = 8) readonly buffer GY { float bgy[]; };
layout(set = 0, binding = 9) buffer O { float o[]; };
layout(set = 0, binding = 10) buffer WS { float ws[]; };

layout(push_constant) uniform Push {
	uint B, T, H;
	uint offV0, offV1, offV2, offV3, offV4, offV5;
	uint offU, offS0, offGY, offO, offWS;
	float scale;
} p;

const uint S = gl_WorkGroupSize.x;
const uint NV = OP == 2u ? 6u : 4u; // token vectors

shared float vec[8][S]; // the token's vectors, then the output gradient (6), then u (7)
shared float red[S][S + 1];
shared float sum[S];

float line[S]; // this invocation's line of the state
float lam[S];  // its line of the state's gradient

uint l; // this invocation's line
uint b, h;

uint tokenOff(uint t) { return ((b * p.T + t) * p.H + h) * S; }
uint perSeq() { return p.T * p.H * S + p.H * S * S; }

float readVec(uint k, uint i) {
	switch (k) {
	case 0u: return v0[p.offV0 + i];
	case 1u: return v1[p.offV1 + i];
	case 2u: return v2[p.offV2 + i];
	case 3u: return v3[p.offV3 + i];
	case 4u: return v4[p.offV4 + i];
	}
	return v5[p.offV5 + i];
}

// loadToken puts token t's vectors (and, with grad, its output gradient) in shared.
void loadToken(uint t, bool grad) {
	barrier();
	uint off = tokenOff(t) + l;
	for (uint k = 0u; k < NV; k++) vec[k][l] = readVec(k, off);
	if (grad) vec[6][l] = bgy[p.offGY + b * perSeq() + (t * p.H + h) * S + l];
	barrier();
}

// Token vector names per op.
float R(uint i) { return vec[0][i]; }                       // wkv6 r, gla q, wkv7 r
float K(uint i) { return OP == 2u ? vec[2][i] : vec[1][i]; }
float Vv(uint i) { return OP == 2u ? vec[3][i] : vec[2][i]; }
float Wd(uint i) { return OP == 2u ? vec[1][i] : vec[3][i]; } // decay / gate
float Aa(uint i) { return vec[4][i]; }
float Bb(uint i) { return vec[5][i]; }
float G(uint i) { return vec[6][i]; }
float Uu(uint i) { return vec[7][i]; }

// colSum returns, for this invocation, Σ over lines of red[line][l], after every
// invocation has written its row of red.
float colSum() {
	barrier();
	float s = 0.0;
	for (uint i = 0u; i < S; i++) s += red[i][l];
	barrier();
	return s;
}

// wkv7SA puts Σ_j a[j]·S[i][j] in sum[i], from column lines (backward orientation).
void wkv7SA() {
	for (uint i = 0u; i < S; i++) red[l][i] = Aa(l) * line[i];
	sum[l] = colSum();
	barrier();
}

// step advances this invocation's line by the token in shared, in the backward
// orientation (rows for OP 0 and 1, columns for OP 2).
void step() {
	if (OP == 0u || OP == 1u) {
		float d = Wd(l), k = K(l);
		for (uint j = 0u; j < S; j++) line[j] = d * line[j] + k * Vv(j);
	} else {
		wkv7SA();
		float w = Wd(l), k = K(l), bb = Bb(l);
		for (uint i = 0u; i < S; i++) line[i] = line[i] * w + Vv(i) * k + sum[i] * bb;
	}
}

uint seqHead() { return b * p.H + h; }
uint chunks() { return (p.T + CK - 1u) / CK; }
uint wsBase() { return p.offWS + seqHead() * ((chunks() + CK + 1u) * S * S + S); }
uint ckOff(uint c) { return wsBase() + c * S * S + l * S; }
uint chunkOff(uint i) { return wsBase() + (chunks() + i) * S * S + l * S; }

// gradOut is the offset of the gradient of token vector k (or, k == NV, of u for
// RWKV-6 and of s0 otherwise).
uint vecSize() { return p.B * p.T * p.H * S; }
uint gradVec(uint k) { return p.offO + k * vecSize(); }
uint gradS0() { return p.offO + NV * vecSize() + (OP == 0u ? p.H * S : 0u); }

void forward() {
	uint base = (b * p.H + h) * S * S;
	// Forward orientation: columns for OP 0 and 1, rows for OP 2.
	for (uint e = 0u; e < S; e++) line[e] = OP == 2u ? bs0[p.offS0 + base + l * S + e] : bs0[p.offS0 + base + e * S + l];
	if (OP == 0u) {
		barrier();
		vec[7][l] = bu[p.offU + h * S + l];
	}
	for (uint t = 0u; t < p.T; t++) {
		loadToken(t, false);
		float y = 0.0;
		if (OP == 0u) { // column l: y[l] = Σ_i r[i]·(u[i]·k[i]·v[l] + S[i][l])
			float vl = Vv(l);
			for (uint i = 0u; i < S; i++) {
				y += R(i) * (Uu(i) * K(i) * vl + line[i]);
				line[i] = Wd(i) * line[i] + K(i) * vl;
			}
		} else if (OP == 1u) {
			float vl = Vv(l);
			for (uint i = 0u; i < S; i++) {
				line[i] = Wd(i) * line[i] + K(i) * vl;
				y += R(i) * line[i];
			}
			y *= p.scale;
		} else { // row l
			float sa = 0.0;
			for (uint j = 0u; j < S; j++) sa += Aa(j) * line[j];
			float vl = Vv(l);
			for (uint j = 0u; j < S; j++) {
				line[j] = line[j] * Wd(j) + vl * K(j) + sa * Bb(j);
				y += line[j] * R(j);
			}
		}
		o[p.offO + b * perSeq() + (t * p.H + h) * S + l] = y;
	}
	uint so = p.offO + b * perSeq() + p.T * p.H * S + h * S * S;
	for (uint e = 0u; e < S; e++) {
		if (OP == 2u) o[so + l * S + e] = line[e];
		else o[so + e * S + l] = line[e];
	}
}

void backward() {
	uint base = (b * p.H + h) * S * S;
	bool rows = OP != 2u;
	// The initial state, in the backward orientation.
	for (uint e = 0u; e < S; e++) line[e] = rows ? bs0[p.offS0 + base + l * S + e] : bs0[p.offS0 + base + e * S + l];
	if (OP == 0u) {
		barrier();
		vec[7][l] = bu[p.offU + h * S + l];
	}
	for (uint t = 0u; t < p.T; t++) {
		if (t % CK == 0u) {
			for (uint e = 0u; e < S; e++) ws[ckOff(t / CK) + e] = line[e];
		}
		loadToken(t, false);
		step();
	}
	uint gs = p.offGY + b * perSeq() + p.T * p.H * S + h * S * S;
	for (uint e = 0u; e < S; e++) lam[e] = rows ? bgy[gs + l * S + e] : bgy[gs + e * S + l];
	float du = 0.0;
	for (uint c = chunks(); c-- > 0u;) {
		uint t0 = c * CK, t1 = min(p.T, t0 + CK);
		for (uint e = 0u; e < S; e++) {
			line[e] = ws[ckOff(c) + e];
			ws[chunkOff(0u) + e] = line[e];
		}
		for (uint t = t0; t < t1; t++) {
			loadToken(t, false);
			step();
			for (uint e = 0u; e < S; e++) ws[chunkOff(t - t0 + 1u) + e] = line[e];
		}
		for (uint t = t1; t-- > t0;) {
			loadToken(t, true);
			uint prev = chunkOff(t - t0), cur = chunkOff(t - t0 + 1u);
			uint go = tokenOff(t);
			if (OP == 0u) { // row l
				float gv = 0.0, ruk = 0.0;
				for (uint j = 0u; j < S; j++) {
					gv += G(j) * Vv(j);
					ruk += R(j) * Uu(j) * K(j);
				}
				float gs2 = 0.0, lv = 0.0, lp = 0.0;
				for (uint j = 0u; j < S; j++) {
					float sp = ws[prev + j];
					gs2 += G(j) * sp;
					lv += lam[j] * Vv(j);
					lp += lam[j] * sp;
					red[l][j] = lam[j] * K(l);
				}
				o[gradVec(0u) + go + l] = Uu(l) * K(l) * gv + gs2;
				du += R(l) * K(l) * gv;
				o[gradVec(1u) + go + l] = R(l) * Uu(l) * gv + lv;
				o[gradVec(3u) + go + l] = lp;
				o[gradVec(2u) + go + l] = colSum() + G(l) * ruk;
				for (uint j = 0u; j < S; j++) lam[j] = Wd(l) * lam[j] + R(l) * G(j);
			} else if (OP == 1u) { // row l
				float ql = p.scale * R(l);
				float gsum = 0.0, lv = 0.0, lp = 0.0;
				for (uint j = 0u; j < S; j++) {
					lam[j] += ql * G(j);
					gsum += G(j) * ws[cur + j];
					lv += lam[j] * Vv(j);
					lp += lam[j] * ws[prev + j];
					red[l][j] = lam[j] * K(l);
				}
				o[gradVec(0u) + go + l] = p.scale * gsum;
				o[gradVec(1u) + go + l] = lv;
				o[gradVec(3u) + go + l] = lp;
				o[gradVec(2u) + go + l] = colSum();
				for (uint j = 0u; j < S; j++) lam[j] *= Wd(l);
			} else { // column l; line[i] is S_{t-1}[i][l]
				for (uint i = 0u; i < S; i++) line[i] = ws[prev + i];
				wkv7SA(); // sum[i] = a·S_{t-1}[i][:]
				float rl = R(l);
				float dr = 0.0, dw = 0.0, dk = 0.0, db = 0.0;
				for (uint i = 0u; i < S; i++) {
					lam[i] += G(i) * rl;
					dr += G(i) * ws[cur + i];
					dw += lam[i] * line[i];
					dk += lam[i] * Vv(i);
					db += lam[i] * sum[i];
				}
				o[gradVec(0u) + go + l] = dr;
				o[gradVec(1u) + go + l] = dw;
				o[gradVec(2u) + go + l] = dk;
				o[gradVec(5u) + go + l] = db;
				// ∂v[i] = Σ_j Λ[i][j]·k[j] and ∂(a·S)[i] = Σ_j Λ[i][j]·b[j]: sums across columns.
				for (uint i = 0u; i < S; i++) red[l][i] = lam[i] * K(l);
				o[gradVec(3u) + go + l] = colSum();
				for (uint i = 0u; i < S; i++) red[l][i] = lam[i] * Bb(l);
				float dsa = colSum();
				barrier();
				sum[l] = dsa;
				barrier();
				float da = 0.0;
				for (uint i = 0u; i < S; i++) {
					da += sum[i] * line[i];
					lam[i] = lam[i] * Wd(l) + sum[i] * Aa(l);
				}
				o[gradVec(4u) + go + l] = da;
			}
		}
	}
	for (uint e = 0u; e < S; e++) {
		if (rows) o[gradS0() + base + l * S + e] = lam[e];
		else o[gradS0() + base + e * S + l] = lam[e];
	}
	if (OP == 0u) ws[wsBase() + (chunks() + CK + 1u) * S * S + l] = du;
}

void main() {
	l = gl_LocalInvocationID.x;
	if (MODE == 2u) { // ∂u[h][l] = Σ_b (per-sequence sums)
		h = gl_WorkGroupID.x;
		float s = 0.0;
		for (b = 0u; b < p.B; b++) s += ws[wsBase() + (chunks() + CK + 1u) * S * S + l];
		o[p.offO + 4u * vecSize() + h * S + l] = s;
		return;
	}
	b = gl_WorkGroupID.x / p.H;
	h = gl_WorkGroupID.x % p.H;
	if (MODE == 0u) forward();
	else backward();
}
