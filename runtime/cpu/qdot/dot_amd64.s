#include "textflag.h"

// The AVX2 dot products of qdot (native_amd64.go has their contracts). The activations
// come as int16 with a float scale per block of 32 (Prepare). Weights are widened to
// int16 (VPMOVSXBW, after masking and offsetting nibbles), multiplied with the
// activations and summed in pairs into int32 (VPMADDWD), converted once per block and
// scaled by the block's weight scale times its activation scale into the float total,
// which two accumulators carry so that consecutive blocks do not wait on each other.
// The scales of eight blocks are converted together (VCVTPH2PS) onto the stack.

#define HSUM \
	VADDPS Y8, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0

// SCALES8 converts the float16 scales of the eight blocks of size bytes at SI and
// multiplies them by the activations' eight block scales at (R8), onto the stack.
#define SCALES8(size) \
	VPINSRW $0, 0(SI), X10, X10 \
	VPINSRW $1, size(SI), X10, X10 \
	VPINSRW $2, 2*size(SI), X10, X10 \
	VPINSRW $3, 3*size(SI), X10, X10 \
	VPINSRW $4, 4*size(SI), X10, X10 \
	VPINSRW $5, 5*size(SI), X10, X10 \
	VPINSRW $6, 6*size(SI), X10, X10 \
	VPINSRW $7, 7*size(SI), X10, X10 \
	VCVTPH2PS X10, Y10 \
	VMULPS (R8), Y10, Y10 \
	VMOVUPS Y10, 0(SP) \
	ADDQ $32, R8

// Q8BODY multiplies the 32 int8 weights at off+2(SI) with the activations at DI and adds
// the sum times the scale at so(SP) into TOTAL; DI moves on.
#define Q8BODY(off, so, TOTAL) \
	VPMOVSXBW off+2(SI), Y2 \
	VPMADDWD (DI), Y2, Y3 \
	VPMOVSXBW off+18(SI), Y4 \
	VPMADDWD 32(DI), Y4, Y4 \
	VPADDD Y4, Y3, Y3 \
	VCVTDQ2PS Y3, Y3 \
	VBROADCASTSS so(SP), Y1 \
	VFMADD231PS Y3, Y1, TOTAL \
	ADDQ $64, DI

// Q4BODY: the 16 bytes of nibbles at off+2(SI), byte j holding weight j (low) and j+16
// (high), offset by 8 (Y13 holds 8 in every byte).
#define Q4BODY(off, so, TOTAL) \
	VMOVDQU off+2(SI), X2 \
	VPSRLW $4, X2, X4 \
	VPAND X15, X2, X3 \
	VPAND X15, X4, X4 \
	VPSUBB X13, X3, X3 \
	VPSUBB X13, X4, X4 \
	VPMOVSXBW X3, Y5 \
	VPMADDWD (DI), Y5, Y6 \
	VPMOVSXBW X4, Y5 \
	VPMADDWD 32(DI), Y5, Y7 \
	VPADDD Y7, Y6, Y6 \
	VCVTDQ2PS Y6, Y6 \
	VBROADCASTSS so(SP), Y1 \
	VFMADD231PS Y6, Y1, TOTAL \
	ADDQ $64, DI

// EIGHT runs BODY over eight blocks of size bytes, alternating accumulators.
#define EIGHT(BODY, size) \
	SCALES8(size) \
	BODY(0, 0, Y0) \
	BODY(size, 4, Y8) \
	BODY(2*size, 8, Y0) \
	BODY(3*size, 12, Y8) \
	BODY(4*size, 16, Y0) \
	BODY(5*size, 20, Y8) \
	BODY(6*size, 24, Y0) \
	BODY(7*size, 28, Y8) \
	ADDQ $8*size, SI

// ONE runs BODY over one block (the tail of a row), with its scale.
#define ONE(BODY, size) \
	MOVWLZX 0(SI), BX \
	VMOVD BX, X1 \
	VCVTPH2PS X1, X1 \
	VMULSS (R8), X1, X1 \
	VMOVSS X1, 0(SP) \
	ADDQ $4, R8 \
	BODY(0, 0, Y0) \
	ADDQ $size, SI

// func dotQ8_0(row *byte, x *int16, scales *float32, blocks int) float32
TEXT ·dotQ8_0(SB), NOSPLIT, $32-36
	MOVQ row+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ scales+16(FP), R8
	MOVQ blocks+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	MOVQ CX, DX
	SHRQ $3, DX
	ANDQ $7, CX
	TESTQ DX, DX
	JZ   q8tail

q8group:
	EIGHT(Q8BODY, 34)
	DECQ DX
	JNZ  q8group

q8tail:
	TESTQ CX, CX
	JZ   q8done

q8one:
	ONE(Q8BODY, 34)
	DECQ CX
	JNZ  q8one

q8done:
	HSUM
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// func dotQ4_0(row *byte, x *int16, scales *float32, blocks int) float32
TEXT ·dotQ4_0(SB), NOSPLIT, $32-36
	MOVQ row+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ scales+16(FP), R8
	MOVQ blocks+24(FP), CX
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x08080808, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	MOVQ CX, DX
	SHRQ $3, DX
	ANDQ $7, CX
	TESTQ DX, DX
	JZ   q4tail

q4group:
	EIGHT(Q4BODY, 18)
	DECQ DX
	JNZ  q4group

q4tail:
	TESTQ CX, CX
	JZ   q4done

q4one:
	ONE(Q4BODY, 18)
	DECQ CX
	JNZ  q4one

q4done:
	HSUM
	VMOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// KSUB multiplies one sub-block of 32 unsigned nibbles, held as bytes in Y (X its low
// half), with the activations at DI, and adds the sum times the scale at off(SP) into
// TOTAL; DI moves on.
#define KSUB(Y, X, off, TOTAL) \
	VPMOVZXBW X, Y5 \
	VPMADDWD (DI), Y5, Y6 \
	VEXTRACTI128 $1, Y, X7 \
	VPMOVZXBW X7, Y5 \
	VPMADDWD 32(DI), Y5, Y7 \
	VPADDD Y7, Y6, Y6 \
	VCVTDQ2PS Y6, Y6 \
	VBROADCASTSS off(SP), Y1 \
	VFMADD231PS Y6, Y1, TOTAL \
	ADDQ $64, DI

// KPAIR multiplies the 32 bytes at off(SI): low nibbles are sub-block 2g, high nibbles
// sub-block 2g+1 (scales at so and so+4 on the stack).
#define KPAIR(off, so) \
	VMOVDQU off(SI), Y2 \
	VPAND Y15, Y2, Y3 \
	VPSRLW $4, Y2, Y4 \
	VPAND Y15, Y4, Y4 \
	KSUB(Y3, X3, so, Y0) \
	KSUB(Y4, X4, so+4, Y8)

// func dotQ4K(row *byte, x *int16, scales, sums *float32, blocks int) float32
// Whole Q4_K super-blocks of 144 bytes: f16 d and dmin, 12 bytes of 6-bit scales and
// mins, 128 bytes of nibbles. Per super-block the eight scales and mins are unpacked
// with 32-bit word operations (bytes 0-3 hold scales 0-3 and the top bits of scales
// 4-7, bytes 4-7 the mins likewise, bytes 8-11 the low nibbles of scales and mins 4-7),
// widened to floats, and multiplied by d (dmin) and the activations' block scales
// (sums); the scales go to the stack for the sub-blocks, the mins times the
// activations' sums are subtracted at the end.
TEXT ·dotQ4K(SB), NOSPLIT, $32-44
	MOVQ row+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ scales+16(FP), R8
	MOVQ sums+24(FP), R9
	MOVQ blocks+32(FP), CX
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VXORPS Y0, Y0, Y0
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9 // Σ min·sum, subtracted at the end
	TESTQ CX, CX
	JZ   kdone

kblock:
	// d and dmin.
	MOVL (SI), AX
	VMOVD AX, X10
	VCVTPH2PS X10, X10
	VBROADCASTSS X10, Y11 // d
	VPSHUFD $0x55, X10, X10
	VBROADCASTSS X10, Y12 // dmin
	// The 6-bit scales (R10: 0-3, R12: 4-7) and mins (R11: 0-3, R13: 4-7).
	MOVL 4(SI), AX  // bytes 0-3
	MOVL 8(SI), BX  // bytes 4-7
	MOVL 12(SI), DX // bytes 8-11
	MOVL AX, R10
	ANDL $0x3f3f3f3f, R10
	MOVL BX, R11
	ANDL $0x3f3f3f3f, R11
	MOVL DX, R12
	ANDL $0x0f0f0f0f, R12
	SHRL $6, AX
	ANDL $0x03030303, AX
	SHLL $4, AX
	ORL  AX, R12
	MOVL DX, R13
	SHRL $4, R13
	ANDL $0x0f0f0f0f, R13
	SHRL $6, BX
	ANDL $0x03030303, BX
	SHLL $4, BX
	ORL  BX, R13
	VMOVD R10, X13
	VPINSRD $1, R12, X13, X13
	VPMOVZXBD X13, Y13
	VCVTDQ2PS Y13, Y13
	VMULPS Y11, Y13, Y13
	VMULPS (R8), Y13, Y13
	VMOVUPS Y13, 0(SP)
	VMOVD R11, X14
	VPINSRD $1, R13, X14, X14
	VPMOVZXBD X14, Y14
	VCVTDQ2PS Y14, Y14
	VMULPS Y12, Y14, Y14
	VFMADD231PS (R9), Y14, Y9
	ADDQ $16, SI
	KPAIR(0, 0)
	KPAIR(32, 8)
	KPAIR(64, 16)
	KPAIR(96, 24)
	ADDQ $128, SI
	ADDQ $32, R8
	ADDQ $32, R9
	DECQ CX
	JNZ  kblock

kdone:
	VSUBPS Y9, Y0, Y0
	HSUM
	VMOVSS X0, ret+40(FP)
	VZEROUPPER
	RET
