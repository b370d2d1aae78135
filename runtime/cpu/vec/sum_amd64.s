#include "textflag.h"

// Sums of float32 data in float64 lanes (sum.go), AVX2.

// func sumAVX2(x []float32) (int, float64)
// Four vectors of four float64 running sums over whole groups of sixteen, merged as
// sumGo merges them.
TEXT ·sumAVX2(SB), NOSPLIT, $0-40
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	ANDQ $-16, CX
	XORQ AX, AX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sumloop:
	CMPQ AX, CX
	JGE  sumdone
	VCVTPS2PD (SI)(AX*4), Y4
	VCVTPS2PD 16(SI)(AX*4), Y5
	VCVTPS2PD 32(SI)(AX*4), Y6
	VCVTPS2PD 48(SI)(AX*4), Y7
	VADDPD Y4, Y0, Y0
	VADDPD Y5, Y1, Y1
	VADDPD Y6, Y2, Y2
	VADDPD Y7, Y3, Y3
	ADDQ $16, AX
	JMP  sumloop

sumdone:
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VPERMILPD $1, X0, X1
	VADDSD X1, X0, X0
	MOVQ CX, ret+24(FP)
	VMOVSD X0, ret1+32(FP)
	VZEROUPPER
	RET

// func sumIntoAVX2(a []float64, x []float32) int
// a[i] += x[i] over whole groups of eight; returns how many elements that was.
TEXT ·sumIntoAVX2(SB), NOSPLIT, $0-56
	MOVQ a_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX

intoloop:
	CMPQ AX, CX
	JGE  intodone
	VCVTPS2PD (SI)(AX*4), Y0
	VCVTPS2PD 16(SI)(AX*4), Y1
	VADDPD (DI)(AX*8), Y0, Y0
	VADDPD 32(DI)(AX*8), Y1, Y1
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	ADDQ $8, AX
	JMP  intoloop

intodone:
	MOVQ CX, ret+48(FP)
	VZEROUPPER
	RET
