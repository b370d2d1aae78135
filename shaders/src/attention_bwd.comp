#version 450
// Flash-attention backward (FlashAttention-2) for Q (B, Tq, D), K (B, Tk, D), V (B, Tk, Dv)
// and the output gradient G (B, Tq, Dv), in three passes chosen by PASS at compile time so
// each declares only the shared memory it uses:
//
//   PASS 0, statistics: per query i, lse_i = log Σ_j exp(s_ij) (online over key tiles, as
//     the forward) and δ_i = G_i·O_i, written as (lse, δ) pairs. X is O.
//   PASS 1, ∂Q: a workgroup owns BQ queries and walks the key tiles:
//     ∂Q_i = scale · Σ_j ∂S_ij K_j.
//   PASS 2, ∂K|∂V: a workgroup owns BKV keys and walks the query tiles:
//     ∂V_j = Σ_i P_ij G_i and ∂K_j = scale · Σ_i ∂S_ij Q_i, written side by side as rows
//     of D+Dv.
//
// with s = Q Kᵀ·scale + mask, P = exp(s - lse) and ∂S = P·(G Vᵀ - δ). The probabilities
// are recomputed per tile from the statistics, so no Tq×Tk matrix reaches memory, and
// every output element has one owner (no atomics). CAUSAL hides keys j > i and skips
// tiles wholly above the diagonal; MASK adds a mask broadcast through strides as in
// attention.comp. D and Dv are at most DMAX. With heads > 1 the operands but the
// statistics are (B/heads, T, heads, D) as in attention.comp; the statistics are
// (B, Tq, 2) in either layout.

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BQ = 16;
layout(constant_id = 2) const uint BKV = 32;
layout(constant_id = 3) const uint DMAX = 64;
layout(constant_id = 4) const bool CAUSAL = false;
layout(constant_id = 5) const bool MASK = false;

layout(set = 0, binding = 0) readonly buffer Q { float q[]; };
layout(set = 0, binding = 1) readonly buffer K { float k[]; };
layout(set = 0, binding = 2) readonly buffer X { float x[]; }; // V, or O for the statistics
layout(set = 0, binding = 3) readonly buffer G { float g[]; };
layout(set = 0, binding = 4) readonly buffer St { float st[]; };
layout(set = 0, binding = 5) readonly buffer Mk { float mk[]; };
layout(set = 0, binding = 6) writeonly buffer Out { float outv[]; };

layout(push_constant) uniform Push {
	uint tq, tk, d, dv;
	uint offQ, offK, offX, offG, offS, offM, offO;
	float scale;
	uint mRow, mCol;
	uint l1, l2;
	uint s0, s1, s2;
	uint heads;
} p;

const uint NT = gl_WorkGroupSize.x;
const uint KS = DMAX + 1; // padded key rows: threads reading consecutive keys hit different banks
const float NEG_INF = -1.0 / 0.0;

// rowBase is the offset of row 0 of batch entry bt in an operand of n rows of w floats
// per head; the entry's rows are p.heads·w apart.
uint rowBase(uint bt, uint n, uint w) {
	return ((bt / p.heads) * n * p.heads + bt % p.heads) * w;
}

// maskBase is the mask's offset for batch entry bt.
uint maskBase(uint bt) {
	uint i2 = bt % p.l2, r = bt / p.l2;
	return p.offM + i2 * p.s2 + (r % p.l1) * p.s1 + (r / p.l1) * p.s0;
}

// visible reports whether query qi sees key kj (both in range, not hidden by causality).
bool visible(uint qi, uint kj) {
	return qi < p.tq && kj < p.tk && !(CAUSAL && kj > qi);
}

#if PASS == 0

shared float qs[BQ * DMAX];
shared float ks[BKV * KS];
shared float ss[BQ * BKV];
shared float rowM[BQ];
shared float rowL[BQ];

void main() {
	const uint tid = gl_LocalInvocationID.x;
	const uint bt = gl_WorkGroupID.y;
	const uint q0 = gl_WorkGroupID.x * BQ;
	const uint qb = p.offQ + rowBase(bt, p.tq, p.d);
	const uint kb = p.offK + rowBase(bt, p.tk, p.d);
	const uint ld = p.heads * p.d;
	const uint mb = MASK ? maskBase(bt) : 0;

	for (uint e = tid; e < BQ * DMAX; e += NT) {
		uint i = e / DMAX, t = e % DMAX;
		qs[e] = (q0 + i < p.tq && t < p.d) ? q[qb + (q0 + i) * ld + t] : 0.0;
	}
	if (tid < BQ) {
		rowM[tid] = NEG_INF;
		rowL[tid] = 0.0;
	}
	const uint kEnd = CAUSAL ? min(p.tk, q0 + BQ) : p.tk;
	for (uint k0 = 0; k0 < kEnd; k0 += BKV) {
		barrier();
		for (uint e = tid; e < BKV * DMAX; e += NT) {
			uint j = e / DMAX, t = e % DMAX;
			ks[j * KS + t] = (k0 + j < p.tk && t < p.d) ? k[kb + (k0 + j) * ld + t] : 0.0;
		}
		barrier();
		for (uint e = tid; e < BQ * BKV; e += NT) {
			uint i = e / BKV, j = e % BKV;
			float s = NEG_INF;
			if (visible(q0 + i, k0 + j)) {
				float dot = 0.0;
				for (uint t = 0; t < p.d; t++) dot = fma(qs[i * DMAX + t], ks[j * KS + t], dot);
				s = dot * p.scale;
				if (MASK) s += mk[mb + (q0 + i) * p.mRow + (k0 + j) * p.mCol];
			}
			ss[e] = s;
		}
		barrier();
		if (tid < BQ) {
			float mOld = rowM[tid], mx = mOld;
			for (uint j = 0; j < BKV; j++) mx = max(mx, ss[tid * BKV + j]);
			float base = mx == NEG_INF ? 0.0 : mx;
			float sum = 0.0;
			for (uint j = 0; j < BKV; j++) sum += exp(ss[tid * BKV + j] - base);
			rowL[tid] = rowL[tid] * exp(mOld - base) + sum;
			rowM[tid] = mx;
		}
	}
	barrier();
	if (tid < BQ && q0 + tid < p.tq) {
		uint row = bt * p.tq + q0 + tid;
		uint at = rowBase(bt, p.tq, p.dv) + (q0 + tid) * p.heads * p.dv;
		float delta = 0.0;
		for (uint t = 0; t < p.dv; t++) delta = fma(g[p.offG + at + t], x[p.offX + at + t], delta);
		float m = rowM[tid];
		outv[p.offO + 2 * row] = m == NEG_INF ? NEG_INF : m + log(rowL[tid]);
		outv[p.offO + 2 * row + 1] = delta;
	}
}

#elif PASS == 1

shared float qs[BQ * DMAX];
shared float gs[BQ * DMAX];
shared float ks[BKV * KS];
shared float vs[BKV * KS];
shared float dss[BQ * BKV];
shared float acc[BQ * DMAX];
shared float rowLse[BQ];
shared float rowDelta[BQ];

void main() {
	const uint tid = gl_LocalInvocationID.x;
	const uint bt = gl_WorkGroupID.y;
	const uint q0 = gl_WorkGroupID.x * BQ;
	const uint qb = p.offQ + rowBase(bt, p.tq, p.d);
	const uint gb = p.offG + rowBase(bt, p.tq, p.dv);
	const uint kb = p.offK + rowBase(bt, p.tk, p.d);
	const uint vb = p.offX + rowBase(bt, p.tk, p.dv);
	const uint ld = p.heads * p.d, ldv = p.heads * p.dv;
	const uint mb = MASK ? maskBase(bt) : 0;

	for (uint e = tid; e < BQ * DMAX; e += NT) {
		uint i = e / DMAX, t = e % DMAX;
		bool in_ = q0 + i < p.tq;
		qs[e] = (in_ && t < p.d) ? q[qb + (q0 + i) * ld + t] : 0.0;
		gs[e] = (in_ && t < p.dv) ? g[gb + (q0 + i) * ldv + t] : 0.0;
		acc[e] = 0.0;
	}
	if (tid < BQ) {
		uint row = bt * p.tq + min(q0 + tid, p.tq - 1);
		rowLse[tid] = st[p.offS + 2 * row];
		rowDelta[tid] = st[p.offS + 2 * row + 1];
	}
	const uint kEnd = CAUSAL ? min(p.tk, q0 + BQ) : p.tk;
	for (uint k0 = 0; k0 < kEnd; k0 += BKV) {
		barrier();
		for (uint e = tid; e < BKV * DMAX; e += NT) {
			uint j = e / DMAX, t = e % DMAX;
			bool in_ = k0 + j < p.tk;
			ks[j * KS + t] = (in_ && t < p.d) ? k[kb + (k0 + j) * ld + t] : 0.0;
			vs[j * KS + t] = (in_ && t < p.dv) ? x[vb + (k0 + j) * ldv + t] : 0.0;
		}
		barrier();
		for (uint e = tid; e < BQ * BKV; e += NT) {
			uint i = e / BKV, j = e % BKV;
			float ds = 0.0;
			if (visible(q0 + i, k0 + j)) {
				float s = 0.0, dp = 0.0;
				for (uint t = 0; t < p.d; t++) s = fma(qs[i * DMAX + t], ks[j * KS + t], s);
				for (uint t = 0; t < p.dv; t++) dp = fma(gs[i * DMAX + t], vs[j * KS + t], dp);
				s *= p.scale;
				if (MASK) s += mk[mb + (q0 + i) * p.mRow + (k0 + j) * p.mCol];
				ds = exp(s - rowLse[i]) * (dp - rowDelta[i]);
			}
			dss[e] = ds;
		}
		barrier();
		for (uint e = tid; e < BQ * DMAX; e += NT) {
			uint i = e / DMAX, t = e % DMAX;
			if (t >= p.d) continue;
			float a = acc[e];
			for (uint j = 0; j < BKV; j++) a = fma(dss[i * BKV + j], ks[j * KS + t], a);
			acc[e] = a;
		}
	}
	barrier();
	for (uint e = tid; e < BQ * DMAX; e += NT) {
		uint i = e / DMAX, t = e % DMAX;
		if (q0 + i < p.tq && t < p.d) outv[p.offO + rowBase(bt, p.tq, p.d) + (q0 + i) * ld + t] = acc[e] * p.scale;
	}
}

#elif PASS == 2

shared float ks[BKV * KS];
shared float vs[BKV * KS];
shared float qs[BQ * DMAX];
shared float gs[BQ * DMAX];
shared float ps[BQ * BKV];
shared float dss[BQ * BKV];
shared float dk[BKV * DMAX];
shared float dvAcc[BKV * DMAX];
shared float rowLse[BQ];
shared float rowDelta[BQ];

void main() {
	const uint tid = gl_LocalInvocationID.x;
	const uint bt = gl_WorkGroupID.y;
	const uint k0 = gl_WorkGroupID.x * BKV;
	const uint qb = p.offQ + rowBase(bt, p.tq, p.d);
	const uint gb = p.offG + rowBase(bt, p.tq, p.dv);
	const uint kb = p.offK + rowBase(bt, p.tk, p.d);
	const uint vb = p.offX + rowBase(bt, p.tk, p.dv);
	const uint ld = p.heads * p.d, ldv = p.heads * p.dv;
	const uint mb = MASK ? maskBase(bt) : 0;

	for (uint e = tid; e < BKV * DMAX; e += NT) {
		uint j = e / DMAX, t = e % DMAX;
		bool in_ = k0 + j < p.tk;
		ks[j * KS + t] = (in_ && t < p.d) ? k[kb + (k0 + j) * ld + t] : 0.0;
		vs[j * KS + t] = (in_ && t < p.dv) ? x[vb + (k0 + j) * ldv + t] : 0.0;
		dk[e] = 0.0;
		dvAcc[e] = 0.0;
	}
	// Queries before k0 see none of these keys under a causal mask.
	const uint qStart = CAUSAL ? k0 / BQ * BQ : 0;
	for (uint q0 = qStart; q0 < p.tq; q0 += BQ) {
		barrier();
		for (uint e = tid; e < BQ * DMAX; e += NT) {
			uint i = e / DMAX, t = e % DMAX;
			bool in_ = q0 + i < p.tq;
			qs[e] = (in_ && t < p.d) ? q[qb + (q0 + i) * ld + t] : 0.0;
			gs[e] = (in_ && t < p.dv) ? g[gb + (q0 + i) * ldv + t] : 0.0;
		}
		if (tid < BQ) {
			uint row = bt * p.tq + min(q0 + tid, p.tq - 1);
			rowLse[tid] = st[p.offS + 2 * row];
			rowDelta[tid] = st[p.offS + 2 * row + 1];
		}
		barrier();
		for (uint e = tid; e < BQ * BKV; e += NT) {
			uint i = e / BKV, j = e % BKV;
			float pr = 0.0, ds = 0.0;
			if (visible(q0 + i, k0 + j)) {
				float s = 0.0, dp = 0.0;
				for (uint t = 0; t < p.d; t++) s = fma(qs[i * DMAX + t], ks[j * KS + t], s);
				for (uint t = 0; t < p.dv; t++) dp = fma(gs[i * DMAX + t], vs[j * KS + t], dp);
				s *= p.scale;
				if (MASK) s += mk[mb + (q0 + i) * p.mRow + (k0 + j) * p.mCol];
				pr = exp(s - rowLse[i]);
				ds = pr * (dp - rowDelta[i]);
			}
			ps[e] = pr;
			dss[e] = ds;
		}
		barrier();
		for (uint e = tid; e < BKV * DMAX; e += NT) {
			uint j = e / DMAX, t = e % DMAX;
			if (t < p.dv) {
				float a = dvAcc[e];
				for (uint i = 0; i < BQ; i++) a = fma(ps[i * BKV + j], gs[i * DMAX + t], a);
				dvAcc[e] = a;
			}
			if (t < p.d) {
				float a = dk[e];
				for (uint i = 0; i < BQ; i++) a = fma(dss[i * BKV + j], qs[i * DMAX + t], a);
				dk[e] = a;
			}
		}
	}
	barrier();
	const uint w = p.d + p.dv;
	for (uint e = tid; e < BKV * DMAX; e += NT) {
		uint j = e / DMAX, t = e % DMAX;
		if (k0 + j >= p.tk) continue;
		uint row = p.offO + rowBase(bt, p.tk, w) + (k0 + j) * p.heads * w;
		if (t < p.d) outv[row + t] = dk[e] * p.scale;
		if (t < p.dv) outv[row + p.d + t] = dvAcc[e];
	}
}

#endif
