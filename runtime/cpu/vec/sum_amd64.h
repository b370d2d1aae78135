// Macros of Sum's lane order (sum.go), shared by the sums (sum_amd64.s) and the norm
// passes that sum a row as they write it (norm_amd64.s).

// CVT16 widens the float32 lanes 0-7 in f0 (xf0 its low half) and 8-15 in f1 to
// float64 in Y12-Y15 (lanes 0-3, 4-7, 8-11, 12-15).
#define CVT16(f0, xf0, f1, xf1) \
	VCVTPS2PD xf0, Y12; \
	VEXTRACTF128 $1, f0, X13; \
	VCVTPS2PD X13, Y13; \
	VCVTPS2PD xf1, Y14; \
	VEXTRACTF128 $1, f1, X15; \
	VCVTPS2PD X15, Y15

// WIDEN adds the float32 lanes 0-7 in f0 and 8-15 in f1, widened, to the float64
// running sums of lanes 0-3, 4-7, 8-11 and 12-15 in a0-a3, with Y12-Y15 as scratch.
#define WIDEN(f0, xf0, f1, xf1, a0, a1, a2, a3) \
	CVT16(f0, xf0, f1, xf1); \
	VADDPD Y12, a0, a0; \
	VADDPD Y13, a1, a1; \
	VADDPD Y14, a2, a2; \
	VADDPD Y15, a3, a3

// WIDENM is WIDEN with the float64 running sums in memory (m0-m3, 32 bytes each).
#define WIDENM(f0, xf0, f1, xf1, m0, m1, m2, m3) \
	CVT16(f0, xf0, f1, xf1); \
	VADDPD m0, Y12, Y12; \
	VADDPD m1, Y13, Y13; \
	VADDPD m2, Y14, Y14; \
	VADDPD m3, Y15, Y15; \
	VMOVUPD Y12, m0; \
	VMOVUPD Y13, m1; \
	VMOVUPD Y14, m2; \
	VMOVUPD Y15, m3

// ZEROM clears the float64 running sums in memory (m0-m3, 32 bytes each), with Y12.
#define ZEROM(m0, m1, m2, m3) \
	VXORPD Y12, Y12, Y12; \
	VMOVUPD Y12, m0; \
	VMOVUPD Y12, m1; \
	VMOVUPD Y12, m2; \
	VMOVUPD Y12, m3

// MERGE merges the float64 lanes a0-a3 into the low lane of x0 (a0's low half) as
// sumGo merges them, with x1 as scratch.
#define MERGE(a0, a1, a2, a3, x0, x1) \
	VADDPD a1, a0, a0; \
	VADDPD a3, a2, a2; \
	MERGE2(a0, a2, x0, x1)

// MERGE2 merges the float64 lanes a0-a1 (lanes 0-3 and 4-7 of a sum, or the halves
// already added pairwise) into the low lane of x0 (a0's low half), with x1 as scratch.
#define MERGE2(a0, a1, x0, x1) \
	VADDPD a1, a0, a0; \
	VEXTRACTF128 $1, a0, x1; \
	VADDPD x1, x0, x0; \
	VPERMILPD $1, x0, x1; \
	VADDSD x1, x0, x0

// MERGEM merges the float64 running sums in memory (m0-m3) as MERGE and stores the sum
// at d, with Y12-Y15 as scratch.
#define MERGEM(m0, m1, m2, m3, d) \
	VMOVUPD m0, Y12; \
	VMOVUPD m1, Y13; \
	VMOVUPD m2, Y14; \
	VMOVUPD m3, Y15; \
	MERGE(Y12, Y13, Y14, Y15, X12, X13); \
	VMOVSD X12, d
