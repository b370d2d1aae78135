#version 450
// Flash-attention forward: O = softmax(Q Kᵀ·scale + mask) V for Q (B, Tq, D), K (B, Tk, D),
// V (B, Tk, Dv). A workgroup owns BQ queries of one batch entry (gl_WorkGroupID.y) and
// walks the keys in tiles of BKV held in shared memory, keeping each query's running
// maximum m and sum l (online softmax), so the Tq×Tk scores never reach memory. CAUSAL
// hides keys j > i and skips key tiles wholly above the diagonal; MASK adds a mask
// broadcast through strides: row and column strides, and up to three leading axes
// (sizes l0..l2, strides s0..s2) that decompose the batch index. A query whose keys are
// all hidden gets 0/0 = NaN, as the additive -Inf composition does. D and Dv are at most
// DMAX. With heads > 1 the operands are (B/heads, T, heads, D) (the AttentionBTHD
// layout): batch entry bt is head bt % heads, and its rows are heads·D floats apart.

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint BQ = 16;
layout(constant_id = 2) const uint BKV = 32;
layout(constant_id = 3) const uint DMAX = 64;
layout(constant_id = 4) const bool CAUSAL = false;
layout(constant_id = 5) const bool MASK = false;

layout(set = 0, binding = 0) readonly buffer Q { float q[]; };
layout(set = 0, binding = 1) readonly buffer K { float k[]; };
layout(set = 0, binding = 2) readonly buffer V { float v[]; };
layout(set = 0, binding = 3) readonly buffer Mk { float mk[]; };
layout(set = 0, binding = 4) writeonly buffer O { float o[]; };

layout(push_constant) uniform Push {
	uint tq, tk, d, dv;
	uint offQ, offK, offV, offM, offO;
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

shared float qs[BQ * DMAX];
shared float ks[BKV * KS];
shared float vs[BKV * DMAX];
shared float ss[BQ * BKV];
// Output accumulators live in shared memory rather than registers: each thread updates
// the same elements every tile, and a register array would need unrolled loops that
// make the shader slow to compile (over a minute on lavapipe) for little gain, since
// each element's update is a BKV-long dot product.
shared float os[BQ * DMAX];
shared float rowM[BQ];
shared float rowL[BQ];
shared float rowA[BQ];

void main() {
	const uint tid = gl_LocalInvocationID.x;
	const uint bt = gl_WorkGroupID.y;
	const uint q0 = gl_WorkGroupID.x * BQ;
	const uint qb = p.offQ + rowBase(bt, p.tq, p.d);
	const uint kb = p.offK + rowBase(bt, p.tk, p.d);
	const uint vb = p.offV + rowBase(bt, p.tk, p.dv);
	const uint ob = p.offO + rowBase(bt, p.tq, p.dv);
	const uint ld = p.heads * p.d, ldv = p.heads * p.dv;
	uint mb = p.offM;
	if (MASK) {
		uint i2 = bt % p.l2, r = bt / p.l2;
		mb += i2 * p.s2 + (r % p.l1) * p.s1 + (r / p.l1) * p.s0;
	}

	for (uint e = tid; e < BQ * DMAX; e += NT) {
		uint i = e / DMAX, t = e % DMAX;
		qs[e] = (q0 + i < p.tq && t < p.d) ? q[qb + (q0 + i) * ld + t] : 0.0;
	}
	for (uint e = tid; e < BQ * DMAX; e += NT) os[e] = 0.0;
	if (tid < BQ) {
		rowM[tid] = NEG_INF;
		rowL[tid] = 0.0;
	}

	const uint kEnd = CAUSAL ? min(p.tk, q0 + BQ) : p.tk;
	for (uint k0 = 0; k0 < kEnd; k0 += BKV) {
		barrier();
		for (uint e = tid; e < BKV * DMAX; e += NT) {
			uint j = e / DMAX, t = e % DMAX;
			bool in_ = k0 + j < p.tk;
			ks[j * KS + t] = (in_ && t < p.d) ? k[kb + (k0 + j) * ld + t] : 0.0;
			vs[e] = (in_ && t < p.dv) ? v[vb + (k0 + j) * ldv + t] : 0.0;
		}
		barrier();
		for (uint e = tid; e < BQ * BKV; e += NT) {
			uint i = e / BKV, j = e % BKV;
			float s = NEG_INF;
			if (k0 + j < p.tk && !(CAUSAL && k0 + j > q0 + i)) {
				float dot = 0.0;
				for (uint t = 0; t < p.d; t++) dot = fma(qs[i * DMAX + t], ks[j * KS + t], dot);
				s = dot * p.scale;
				if (MASK && q0 + i < p.tq) s += mk[mb + (q0 + i) * p.mRow + (k0 + j) * p.mCol];
			}
			ss[e] = s;
		}
		barrier();
		if (tid < BQ) {
			float mOld = rowM[tid], mx = mOld;
			for (uint j = 0; j < BKV; j++) mx = max(mx, ss[tid * BKV + j]);
			// While every score so far is -Inf, p = exp(-Inf) = 0 and nothing accumulates.
			float base = mx == NEG_INF ? 0.0 : mx;
			float sum = 0.0;
			for (uint j = 0; j < BKV; j++) {
				float pj = exp(ss[tid * BKV + j] - base);
				ss[tid * BKV + j] = pj;
				sum += pj;
			}
			float alpha = exp(mOld - base);
			rowA[tid] = alpha;
			rowL[tid] = rowL[tid] * alpha + sum;
			rowM[tid] = mx;
		}
		barrier();
		for (uint e = tid; e < BQ * DMAX; e += NT) {
			uint i = e / DMAX, t = e % DMAX;
			if (t >= p.dv) continue;
			float a = os[e] * rowA[i];
			for (uint j = 0; j < BKV; j++) a = fma(ss[i * BKV + j], vs[j * DMAX + t], a);
			os[e] = a;
		}
	}
	barrier();
	for (uint e = tid; e < BQ * DMAX; e += NT) {
		uint i = e / DMAX, t = e % DMAX;
		if (q0 + i < p.tq && t < p.dv) o[ob + (q0 + i) * ldv + t] = os[e] / rowL[i];
	}
}
