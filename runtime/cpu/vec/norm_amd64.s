#include "textflag.h"
#include "sum_amd64.h"

// Layer-norm row loops in float64 lanes (norm.go): AVX2, and the forward's statistics
// and normalisation in AVX-512 too (8 float64 lanes a vector, the same bits).

// NORMALIZE is the body of normalizeAVX2 and normalizeAVX512, in vectors of width
// float64 lanes: V0-V2, M (mean) and I (inv) vector registers of that width, H the half
// one that takes V0 narrowed (by CVT) to float32; loop, nogamma, nobeta and done are
// its labels.
#define NORMALIZE(width, V0, V1, V2, M, I, H, CVT, loop, nogamma, nobeta, done) \
	MOVQ y_base+0(FP), DI; \
	MOVQ x_base+24(FP), SI; \
	MOVQ x_len+32(FP), CX; \
	MOVQ gamma_base+48(FP), R8; \
	MOVQ gamma_len+56(FP), R9; \
	MOVQ beta_base+72(FP), R10; \
	MOVQ beta_len+80(FP), R11; \
	VBROADCASTSD mean+96(FP), M; \
	VBROADCASTSD inv+104(FP), I; \
	ANDQ $-width, CX; \
	XORQ AX, AX; \
loop: \
	CMPQ AX, CX; \
	JGE  done; \
	VCVTPS2PD (SI)(AX*4), V0; \
	VSUBPD M, V0, V0; \
	VMULPD I, V0, V0; \
	TESTQ R9, R9; \
	JEQ  nogamma; \
	VCVTPS2PD (R8)(AX*4), V1; \
	VMULPD V1, V0, V0; \
nogamma: \
	TESTQ R11, R11; \
	JEQ  nobeta; \
	VCVTPS2PD (R10)(AX*4), V2; \
	VADDPD V2, V0, V0; \
nobeta: \
	CVT V0, H; \
	VMOVUPS H, (DI)(AX*4); \
	ADDQ $width, AX; \
	JMP  loop; \
done: \
	MOVQ CX, ret+112(FP); \
	VZEROUPPER; \
	RET

// func sqDevAVX2(x []float32, mean float64) (int, float64)
// Four vectors of four float64 running sums of (x-mean)² over whole groups of sixteen,
// merged as sqDevGo merges them.
TEXT ·sqDevAVX2(SB), NOSPLIT, $0-48
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	ANDQ $-16, CX
	XORQ AX, AX
	VBROADCASTSD mean+24(FP), Y8
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sqloop:
	CMPQ AX, CX
	JGE  sqdone
	VCVTPS2PD (SI)(AX*4), Y4
	VCVTPS2PD 16(SI)(AX*4), Y5
	VCVTPS2PD 32(SI)(AX*4), Y6
	VCVTPS2PD 48(SI)(AX*4), Y7
	VSUBPD Y8, Y4, Y4
	VSUBPD Y8, Y5, Y5
	VSUBPD Y8, Y6, Y6
	VSUBPD Y8, Y7, Y7
	VMULPD Y4, Y4, Y4
	VMULPD Y5, Y5, Y5
	VMULPD Y6, Y6, Y6
	VMULPD Y7, Y7, Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ $16, AX
	JMP  sqloop

sqdone:
	MERGE(Y0, Y1, Y2, Y3, X0, X1)
	MOVQ CX, ret+32(FP)
	VMOVSD X0, ret1+40(FP)
	VZEROUPPER
	RET

// func normalizeAVX2(y, x, gamma, beta []float32, mean, inv float64) int
// y = float32((x-mean)·inv·gamma + beta) over whole groups of four, with separate
// roundings as the Go code; the gamma and beta steps are skipped when they are empty.
TEXT ·normalizeAVX2(SB), NOSPLIT, $0-120
	NORMALIZE(4, Y0, Y1, Y2, Y8, Y9, X0, VCVTPD2PSY, nloop, nogamma, nobeta, ndone)

// func sqDevAVX512(x []float32, mean float64) (int, float64)
// The running sums of lanes 0-7 in Z0 and 8-15 in Z1, merged as sqDevGo merges them.
TEXT ·sqDevAVX512(SB), NOSPLIT, $0-48
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	ANDQ $-16, CX
	XORQ AX, AX
	VBROADCASTSD mean+24(FP), Z8
	VXORPD Z0, Z0, Z0
	VXORPD Z1, Z1, Z1

sq512loop:
	CMPQ AX, CX
	JGE  sq512done
	VCVTPS2PD (SI)(AX*4), Z4
	VCVTPS2PD 32(SI)(AX*4), Z5
	VSUBPD Z8, Z4, Z4
	VSUBPD Z8, Z5, Z5
	VMULPD Z4, Z4, Z4
	VMULPD Z5, Z5, Z5
	VADDPD Z4, Z0, Z0
	VADDPD Z5, Z1, Z1
	ADDQ $16, AX
	JMP  sq512loop

sq512done:
	VEXTRACTF64X4 $1, Z0, Y4
	VADDPD Y4, Y0, Y0
	VEXTRACTF64X4 $1, Z1, Y5
	VADDPD Y5, Y1, Y1
	MERGE2(Y0, Y1, X0, X1)
	MOVQ CX, ret+32(FP)
	VMOVSD X0, ret1+40(FP)
	VZEROUPPER
	RET

// func normalizeAVX512(y, x, gamma, beta []float32, mean, inv float64) int
// normalizeAVX2 over whole groups of eight.
TEXT ·normalizeAVX512(SB), NOSPLIT, $0-120
	NORMALIZE(8, Z0, Z1, Z2, Z8, Z9, Y0, VCVTPD2PS, n512loop, n512nogamma, n512nobeta, n512done)

// CENTRE8 does eight elements of NormCentre at offset off: xc in Y0, sq in Y2.
#define CENTRE8(off) \
	VMOVUPS off(SI)(AX*4), Y0; \
	VSUBPS  Y1, Y0, Y0; \
	VMOVUPS Y0, off(DI)(AX*4); \
	VMULPS  Y0, Y0, Y2; \
	VMOVUPS Y2, off(R11)(AX*4)

// func normCentreAVX2(xc, sq, x, mean []float32, n int, sums []float64)
// Row r: xc = x - mean[r], sq = xc·xc; n is a multiple of 8. Where sums is not nil (then
// n is a multiple of 16), sums[r] = the sum of the row of sq in Sum's order: float32
// lanes in Y8 and Y9 over each chunk of sumChunk elements, widened into float64 lanes
// kept in the frame.
TEXT ·normCentreAVX2(SB), NOSPLIT, $128-128
	MOVQ xc_base+0(FP), DI
	MOVQ sq_base+24(FP), R11
	MOVQ x_base+48(FP), SI
	MOVQ mean_base+72(FP), R8
	MOVQ mean_len+80(FP), R9
	MOVQ n+96(FP), CX
	MOVQ sums_base+104(FP), R12
	XORQ AX, AX
	XORQ BX, BX
	TESTQ R12, R12
	JNZ  centreSumRow

centreRow:
	CMPQ BX, R9
	JGE  centreDone
	VBROADCASTSS (R8)(BX*4), Y1
	LEAQ (AX)(CX*1), DX

centreCol:
	CENTRE8(0)
	ADDQ    $8, AX
	CMPQ    AX, DX
	JLT     centreCol
	INCQ    BX
	JMP     centreRow

centreSumRow:
	CMPQ BX, R9
	JGE  centreDone
	VBROADCASTSS (R8)(BX*4), Y1
	ZEROM(0(SP), 32(SP), 64(SP), 96(SP))
	XORQ R10, R10 // the column

centreSumChunk:
	CMPQ R10, CX
	JGE  centreSumMerge
	LEAQ 256(R10), DX // sumChunk
	CMPQ DX, CX
	CMOVQGT CX, DX
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9

centreSumCol:
	CENTRE8(0)
	VADDPS  Y2, Y8, Y8
	CENTRE8(32)
	VADDPS  Y2, Y9, Y9
	ADDQ    $16, AX
	ADDQ    $16, R10
	CMPQ    R10, DX
	JLT     centreSumCol
	WIDENM(Y8, X8, Y9, X9, 0(SP), 32(SP), 64(SP), 96(SP))
	JMP     centreSumChunk

centreSumMerge:
	MERGEM(0(SP), 32(SP), 64(SP), 96(SP), (R12)(BX*8))
	INCQ BX
	JMP  centreSumRow

centreDone:
	VZEROUPPER
	RET

// MID8 does eight elements of NormGradMid at offset off (R15 the column, for gamma):
// xhat in Y0, g in Y5, p in Y2; noGamma, haveG and next are labels of its own.
#define MID8(off, noGamma, haveG, next) \
	VMOVUPS off(SI)(AX*4), Y0; \
	VMULPS  Y1, Y0, Y0; \
	VMOVUPS Y0, off(DI)(AX*4); \
	TESTQ   R14, R14; \
	JZ      noGamma; \
	VMOVUPS off(R13)(AX*4), Y5; \
	VMULPS  off(R14)(R15*4), Y5, Y5; \
	VMOVUPS Y5, off(R12)(AX*4); \
	JMP     haveG; \
noGamma: \
	VMOVUPS off(R12)(AX*4), Y5; \
haveG: \
	VMULPS  Y0, Y5, Y2; \
	VMOVUPS Y2, off(R10)(AX*4); \
	TESTQ   R11, R11; \
	JZ      next; \
	VMULPS  off(R13)(AX*4), Y0, Y3; \
	VMOVUPS Y3, off(R11)(AX*4); \
next:

// func normGradMidAVX2(xhat, p, dgp, g, xc, gy, gamma, rstd []float32, n int, sums []float64)
// Row r: g = gy·gamma where gamma is not nil (R15 its column), xhat = xc·rstd[r],
// p = g·xhat and, where dgp is not nil, dgp = gy·xhat. Where sums is not nil (then n is
// a multiple of 16), sums[r] and sums[rows+r] = the sums of the rows of p and g in Sum's
// order, as normCentreAVX2's: float32 lanes in Y8-Y9 (p) and Y10-Y11 (g), float64 lanes
// in the frame (p's at 0, g's at 128).
TEXT ·normGradMidAVX2(SB), NOSPLIT, $256-224
	MOVQ xhat_base+0(FP), DI
	MOVQ p_base+24(FP), R10
	MOVQ dgp_base+48(FP), R11
	MOVQ g_base+72(FP), R12
	MOVQ xc_base+96(FP), SI
	MOVQ gy_base+120(FP), R13
	MOVQ gamma_base+144(FP), R14
	MOVQ rstd_base+168(FP), R8
	MOVQ rstd_len+176(FP), R9
	MOVQ n+192(FP), CX
	XORQ AX, AX
	XORQ BX, BX
	MOVQ sums_base+200(FP), DX
	TESTQ DX, DX
	JNZ  midSumRow

midRow:
	CMPQ BX, R9
	JGE  midDone
	VBROADCASTSS (R8)(BX*4), Y1
	LEAQ (AX)(CX*1), DX
	XORQ R15, R15

midCol:
	MID8(0, midNoGamma, midHaveG, midNext)
	ADDQ    $8, AX
	ADDQ    $8, R15
	CMPQ    AX, DX
	JLT     midCol
	INCQ    BX
	JMP     midRow

midSumRow:
	CMPQ BX, R9
	JGE  midDone
	VBROADCASTSS (R8)(BX*4), Y1
	ZEROM(0(SP), 32(SP), 64(SP), 96(SP))
	ZEROM(128(SP), 160(SP), 192(SP), 224(SP))
	XORQ R15, R15

midSumChunk:
	CMPQ R15, CX
	JGE  midSumMerge
	LEAQ 256(R15), DX // sumChunk
	CMPQ DX, CX
	CMOVQGT CX, DX
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

midSumCol:
	MID8(0, midSumNoGamma0, midSumHaveG0, midSumNext0)
	VADDPS  Y2, Y8, Y8
	VADDPS  Y5, Y10, Y10
	MID8(32, midSumNoGamma1, midSumHaveG1, midSumNext1)
	VADDPS  Y2, Y9, Y9
	VADDPS  Y5, Y11, Y11
	ADDQ    $16, AX
	ADDQ    $16, R15
	CMPQ    R15, DX
	JLT     midSumCol
	WIDENM(Y8, X8, Y9, X9, 0(SP), 32(SP), 64(SP), 96(SP))
	WIDENM(Y10, X10, Y11, X11, 128(SP), 160(SP), 192(SP), 224(SP))
	JMP     midSumChunk

midSumMerge:
	MOVQ sums_base+200(FP), DX
	MERGEM(0(SP), 32(SP), 64(SP), 96(SP), (DX)(BX*8))
	LEAQ (DX)(R9*8), DX // the sums of g
	MERGEM(128(SP), 160(SP), 192(SP), 224(SP), (DX)(BX*8))
	INCQ BX
	JMP  midSumRow

midDone:
	VZEROUPPER
	RET

// func normGradOutAVX2(dx, g, xhat, m1, m2, rstd, add []float32, n int)
// Row r: dx = rstd[r]·(g - (xhat·m1[r] + m2[r])) + add, without m2 or add where nil.
TEXT ·normGradOutAVX2(SB), NOSPLIT, $0-176
	MOVQ dx_base+0(FP), DI
	MOVQ g_base+24(FP), R12
	MOVQ xhat_base+48(FP), SI
	MOVQ m1_base+72(FP), R8
	MOVQ m2_base+96(FP), R10
	MOVQ rstd_base+120(FP), R11
	MOVQ rstd_len+128(FP), R9
	MOVQ add_base+144(FP), R13
	MOVQ n+168(FP), CX
	XORQ AX, AX
	XORQ BX, BX

outRow:
	CMPQ BX, R9
	JGE  outDone
	VBROADCASTSS (R8)(BX*4), Y1
	VBROADCASTSS (R11)(BX*4), Y3
	LEAQ (AX)(CX*1), DX
	TESTQ R10, R10
	JZ   outColNoM2
	VBROADCASTSS (R10)(BX*4), Y2

outCol:
	VMOVUPS (SI)(AX*4), Y0
	VMULPS  Y1, Y0, Y0
	VADDPS  Y2, Y0, Y0
	VMOVUPS (R12)(AX*4), Y4
	VSUBPS  Y0, Y4, Y4
	VMULPS  Y3, Y4, Y4
	TESTQ   R13, R13
	JZ      outStore
	VADDPS  (R13)(AX*4), Y4, Y4

outStore:
	VMOVUPS Y4, (DI)(AX*4)
	ADDQ    $8, AX
	CMPQ    AX, DX
	JLT     outCol
	INCQ    BX
	JMP     outRow

outColNoM2:
	VMOVUPS (SI)(AX*4), Y0
	VMULPS  Y1, Y0, Y0
	VMOVUPS (R12)(AX*4), Y4
	VSUBPS  Y0, Y4, Y4
	VMULPS  Y3, Y4, Y4
	TESTQ   R13, R13
	JZ      outStoreNoM2
	VADDPS  (R13)(AX*4), Y4, Y4

outStoreNoM2:
	VMOVUPS Y4, (DI)(AX*4)
	ADDQ    $8, AX
	CMPQ    AX, DX
	JLT     outColNoM2
	INCQ    BX
	JMP     outRow

outDone:
	VZEROUPPER
	RET
