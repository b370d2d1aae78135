#include "textflag.h"
#include "flush_amd64.h"

// func sgdAVX2(c *SGDConsts, nesterov bool, p, g, vel []float32) int
// One SGD step (sgd.go) over whole vectors of eight, the operations of sgdGo in its
// order, with MXCSR's DAZ and FTZ bits set (subnormals are zero), restoring the
// caller's MXCSR.
TEXT ·sgdAVX2(SB), NOSPLIT, $8-96
	FLUSH_SUBNORMALS
	MOVQ c+0(FP), R8
	MOVBLZX nesterov+8(FP), R10
	MOVQ p_base+16(FP), DI
	MOVQ p_len+24(FP), CX
	MOVQ g_base+40(FP), SI
	MOVQ vel_base+64(FP), DX
	ANDQ $-8, CX
	XORQ AX, AX
	VBROADCASTSS 0(R8), Y8
	VBROADCASTSS 4(R8), Y9
	VBROADCASTSS 8(R8), Y10

sgdloop:
	CMPQ AX, CX
	JGE  sgddone
	VMOVUPS (DI)(AX*4), Y0
	VMULPS Y0, Y9, Y1
	VADDPS (SI)(AX*4), Y1, Y1 // g' = g + wd·p
	VMULPS (DX)(AX*4), Y8, Y2
	VADDPS Y1, Y2, Y2 // vel = μ·vel + g'
	VMOVUPS Y2, (DX)(AX*4)
	TESTQ R10, R10
	JZ    sgdstep
	VMULPS Y2, Y8, Y2
	VADDPS Y2, Y1, Y2 // g' + μ·vel
sgdstep:
	VMULPS Y2, Y10, Y2
	VSUBPS Y2, Y0, Y0 // p - lr·s
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  sgdloop

sgddone:
	RESTORE_MXCSR
	MOVQ CX, ret+88(FP)
	VZEROUPPER
	RET
