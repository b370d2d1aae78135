#include "textflag.h"

// The AVX2 dot products of qdot (native_amd64.go has their contracts). Weights are
// widened eight at a time to int32 (VPMOVSXBD, or VPMOVZXBD after masking nibbles),
// converted to float32 and multiplied with x; each block's sum is scaled by the block's
// float16 scale (VCVTPH2PS) into the running total, which two accumulators carry so
// that consecutive blocks do not wait on each other.

// BLOCKSCALE loads the float16 at off(SI) and broadcasts it as float32 into Y.
#define BLOCKSCALE(off, Y, X) \
	MOVWLZX off(SI), BX \
	VMOVD BX, X \
	VCVTPH2PS X, X \
	VBROADCASTSS X, Y

// func dotQ8_0(row *byte, x *float32, blocks int) float32
TEXT ·dotQ8_0(SB), NOSPLIT, $0-28
	MOVQ row+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ blocks+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	TESTQ CX, CX
	JZ   q8done

q8loop:
	BLOCKSCALE(0, Y1, X1)
	VPMOVSXBD 2(SI), Y2
	VCVTDQ2PS Y2, Y2
	VMULPS    (DI), Y2, Y3
	VPMOVSXBD 10(SI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS 32(DI), Y4, Y3
	VPMOVSXBD 18(SI), Y2
	VCVTDQ2PS Y2, Y2
	VFMADD231PS 64(DI), Y2, Y3
	VPMOVSXBD 26(SI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS 96(DI), Y4, Y3
	VFMADD231PS Y3, Y1, Y0
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JZ   q8done
	// The second block of the pair goes to Y8.
	BLOCKSCALE(0, Y1, X1)
	VPMOVSXBD 2(SI), Y2
	VCVTDQ2PS Y2, Y2
	VMULPS    (DI), Y2, Y3
	VPMOVSXBD 10(SI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS 32(DI), Y4, Y3
	VPMOVSXBD 18(SI), Y2
	VCVTDQ2PS Y2, Y2
	VFMADD231PS 64(DI), Y2, Y3
	VPMOVSXBD 26(SI), Y4
	VCVTDQ2PS Y4, Y4
	VFMADD231PS 96(DI), Y4, Y3
	VFMADD231PS Y3, Y1, Y8
	ADDQ $34, SI
	ADDQ $128, DI
	DECQ CX
	JNZ  q8loop

q8done:
	VADDPS Y8, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// Q4PART widens the eight bytes in the low half of X (nibbles) to floats, subtracts 8
// (Y14) and multiplies with off(DI), adding into ACC (MUL starts it).
#define Q4PART(X, off, ACC) \
	VPMOVZXBD X, Y5 \
	VCVTDQ2PS Y5, Y5 \
	VSUBPS Y14, Y5, Y5 \
	VFMADD231PS off(DI), Y5, ACC

#define Q4BLOCK(TOTAL) \
	BLOCKSCALE(0, Y1, X1) \
	VMOVDQU 2(SI), X2 \
	VPAND X15, X2, X3 \
	VPSRLW $4, X2, X4 \
	VPAND X15, X4, X4 \
	VXORPS Y7, Y7, Y7 \
	Q4PART(X3, 0, Y7) \
	VPSRLDQ $8, X3, X3 \
	Q4PART(X3, 32, Y7) \
	Q4PART(X4, 64, Y7) \
	VPSRLDQ $8, X4, X4 \
	Q4PART(X4, 96, Y7) \
	VFMADD231PS Y7, Y1, TOTAL \
	ADDQ $18, SI \
	ADDQ $128, DI

// func dotQ4_0(row *byte, x *float32, blocks int) float32
TEXT ·dotQ4_0(SB), NOSPLIT, $0-28
	MOVQ row+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ blocks+16(FP), CX
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, X15
	MOVL $0x41000000, AX // 8.0
	VMOVD AX, X14
	VBROADCASTSS X14, Y14
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	TESTQ CX, CX
	JZ   q4done

q4loop:
	Q4BLOCK(Y0)
	DECQ CX
	JZ   q4done
	Q4BLOCK(Y8)
	DECQ CX
	JNZ  q4loop

q4done:
	VADDPS Y8, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// KPART widens eight nibble bytes of X, multiplies with off(DI) into Y6 and adds off(DI)
// into Y7 (the sub-block's Σx).
#define KPART(X, off) \
	VPMOVZXBD X, Y5 \
	VCVTDQ2PS Y5, Y5 \
	VMOVUPS off(DI), Y9 \
	VFMADD231PS Y9, Y5, Y6 \
	VADDPS Y9, Y7, Y7

// KSUB sums one sub-block of 32 nibbles held in the 32 bytes of Y (the bytes already
// masked to one nibble each) against x at DI: Σq·x into Y6, Σx into Y7; then adds
// scale·Σq·x − min·Σx into Y0, the scale and min taken from (R8) and (R9), and moves DI
// and R8, R9 on.
#define KSUB(Y, X) \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7 \
	KPART(X, 0) \
	VPSRLDQ $8, X, X10 \
	KPART(X10, 32) \
	VEXTRACTI128 $1, Y, X10 \
	KPART(X10, 64) \
	VPSRLDQ $8, X10, X10 \
	KPART(X10, 96) \
	VBROADCASTSS (R8), Y11 \
	VBROADCASTSS (R9), Y12 \
	VFMADD231PS Y6, Y11, Y0 \
	VFNMADD231PS Y7, Y12, Y8 \
	ADDQ $128, DI \
	ADDQ $4, R8 \
	ADDQ $4, R9

// func dotQ4KBlock(qs *byte, x *float32, scales, mins *[8]float32) float32
// One super-block: 128 bytes of nibbles, 256 floats of x, the eight sub-blocks' scales
// and mins already multiplied by the super-block's d and dmin.
TEXT ·dotQ4KBlock(SB), NOSPLIT, $0-36
	MOVQ qs+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ scales+16(FP), R8
	MOVQ mins+24(FP), R9
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	MOVQ $4, CX

kloop:
	VMOVDQU (SI), Y2
	VPAND Y15, Y2, Y3
	VPSRLW $4, Y2, Y4
	VPAND Y15, Y4, Y4
	KSUB(Y3, X3)
	KSUB(Y4, X4)
	ADDQ $32, SI
	DECQ CX
	JNZ  kloop

	VADDPS Y8, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET
