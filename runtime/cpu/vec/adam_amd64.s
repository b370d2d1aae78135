#include "textflag.h"
#include "flush_amd64.h"

// func adamAVX2(c *AdamConsts, p, g, m, v []float32) int
// One Adam step (adam.go) over whole vectors of eight, the operations of adamGo in its
// order; the square root of a float32 is correctly rounded either way. It runs with
// MXCSR's DAZ and FTZ bits set (subnormals are zero), restoring the caller's MXCSR.
TEXT ·adamAVX2(SB), NOSPLIT, $8-112
	FLUSH_SUBNORMALS
	MOVQ c+0(FP), R8
	MOVQ p_base+8(FP), DI
	MOVQ p_len+16(FP), CX
	MOVQ g_base+32(FP), SI
	MOVQ m_base+56(FP), DX
	MOVQ v_base+80(FP), BX
	ANDQ $-8, CX
	XORQ AX, AX
	VBROADCASTSS 0(R8), Y8
	VBROADCASTSS 4(R8), Y9
	VBROADCASTSS 8(R8), Y10
	VBROADCASTSS 12(R8), Y11
	VBROADCASTSS 16(R8), Y12
	VBROADCASTSS 20(R8), Y13
	VBROADCASTSS 24(R8), Y14
	VBROADCASTSS 28(R8), Y15
	VBROADCASTSS 32(R8), Y6
	VBROADCASTSS 36(R8), Y7

adamloop:
	CMPQ AX, CX
	JGE  adamdone
	VMOVUPS (DI)(AX*4), Y0
	VMULPS Y0, Y12, Y2
	VADDPS (SI)(AX*4), Y2, Y1
	VMULPS (DX)(AX*4), Y8, Y2
	VMULPS Y1, Y9, Y3
	VADDPS Y3, Y2, Y2
	VMOVUPS Y2, (DX)(AX*4)
	VMULPS Y1, Y11, Y3
	VMULPS Y1, Y3, Y3
	VMULPS (BX)(AX*4), Y10, Y4
	VADDPS Y3, Y4, Y4
	VMOVUPS Y4, (BX)(AX*4)
	VMULPS Y2, Y14, Y2
	VMULPS Y2, Y13, Y2
	VMULPS Y4, Y15, Y4
	VSQRTPS Y4, Y4
	VADDPS Y6, Y4, Y4
	VDIVPS Y4, Y2, Y2
	VMULPS Y0, Y7, Y0
	VSUBPS Y2, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  adamloop

adamdone:
	RESTORE_MXCSR
	MOVQ CX, ret+104(FP)
	VZEROUPPER
	RET
