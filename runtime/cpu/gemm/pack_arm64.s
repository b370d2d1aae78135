#include "textflag.h"

// func transpose4NEON(dst []float32, ldd int, src []float32, ld int, k int)
// dst[p·ldd + i] = src[i·ld + p] for i < 4 and p < k, k a multiple of 8 (a multiple of
// 4 suffices here): four rows of src become k rows of four. Per 4 columns: TRN1/TRN2 of
// 32-bit lanes pair rows 0-1 and 2-3, then of 64-bit halves make the columns.
TEXT ·transpose4NEON(SB), NOSPLIT, $0-72
	MOVD dst_base+0(FP), R5
	MOVD ldd+24(FP), R8
	LSL  $2, R8
	MOVD src_base+32(FP), R1
	MOVD ld+56(FP), R9
	LSL  $2, R9
	MOVD k+64(FP), R0
	LSR  $2, R0
	CBZ  R0, done
	ADD  R9, R1, R2
	ADD  R9, R2, R3
	ADD  R9, R3, R4
loop:
	VLD1.P 16(R1), [V0.S4]
	VLD1.P 16(R2), [V1.S4]
	VLD1.P 16(R3), [V2.S4]
	VLD1.P 16(R4), [V3.S4]
	VTRN1  V1.S4, V0.S4, V4.S4   // r0[0] r1[0] r0[2] r1[2]
	VTRN2  V1.S4, V0.S4, V5.S4   // r0[1] r1[1] r0[3] r1[3]
	VTRN1  V3.S4, V2.S4, V6.S4   // r2[0] r3[0] r2[2] r3[2]
	VTRN2  V3.S4, V2.S4, V7.S4   // r2[1] r3[1] r2[3] r3[3]
	VTRN1  V6.D2, V4.D2, V16.D2  // column 0
	VTRN1  V7.D2, V5.D2, V17.D2  // column 1
	VTRN2  V6.D2, V4.D2, V18.D2  // column 2
	VTRN2  V7.D2, V5.D2, V19.D2  // column 3
	VST1.P [V16.S4], (R5)(R8)
	VST1.P [V17.S4], (R5)(R8)
	VST1.P [V18.S4], (R5)(R8)
	VST1.P [V19.S4], (R5)(R8)
	SUBS   $1, R0
	BNE    loop
done:
	RET
