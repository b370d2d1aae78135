#include "textflag.h"

// STEP performs one rank-1 update of the 6x16 accumulator tile held in Y4..Y15:
// two 8-wide vectors of the packed B row at offset bo (bytes) from DI, and six broadcast
// values of the packed A column at offset ao (bytes) from SI.
#define STEP(ao, bo) \
	VMOVUPS bo(DI), Y0; \
	VMOVUPS bo+32(DI), Y1; \
	VBROADCASTSS ao(SI), Y2; \
	VFMADD231PS Y0, Y2, Y4; \
	VFMADD231PS Y1, Y2, Y5; \
	VBROADCASTSS ao+4(SI), Y3; \
	VFMADD231PS Y0, Y3, Y6; \
	VFMADD231PS Y1, Y3, Y7; \
	VBROADCASTSS ao+8(SI), Y2; \
	VFMADD231PS Y0, Y2, Y8; \
	VFMADD231PS Y1, Y2, Y9; \
	VBROADCASTSS ao+12(SI), Y3; \
	VFMADD231PS Y0, Y3, Y10; \
	VFMADD231PS Y1, Y3, Y11; \
	VBROADCASTSS ao+16(SI), Y2; \
	VFMADD231PS Y0, Y2, Y12; \
	VFMADD231PS Y1, Y2, Y13; \
	VBROADCASTSS ao+20(SI), Y3; \
	VFMADD231PS Y0, Y3, Y14; \
	VFMADD231PS Y1, Y3, Y15

// ADDROW adds two accumulators to the 16 floats at DX and stores them back, then
// advances DX by one row of C.
#define ADDROW(lo, hi) \
	VADDPS (DX), lo, lo; \
	VMOVUPS lo, (DX); \
	VADDPS 32(DX), hi, hi; \
	VMOVUPS hi, 32(DX); \
	ADDQ R8, DX

// func kernelAVX2(k int, a, b, c []float32, ldc int)
TEXT ·kernelAVX2(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a_base+8(FP), SI
	MOVQ b_base+32(FP), DI
	MOVQ c_base+56(FP), DX
	MOVQ ldc+80(FP), R8
	SHLQ $2, R8

	// Bring the C tile towards L1 while the products are computed.
	MOVQ DX, R9
	PREFETCHT0 (R9)
	PREFETCHT0 60(R9)
	ADDQ R8, R9
	PREFETCHT0 (R9)
	PREFETCHT0 60(R9)
	ADDQ R8, R9
	PREFETCHT0 (R9)
	PREFETCHT0 60(R9)
	ADDQ R8, R9
	PREFETCHT0 (R9)
	PREFETCHT0 60(R9)
	ADDQ R8, R9
	PREFETCHT0 (R9)
	PREFETCHT0 60(R9)
	ADDQ R8, R9
	PREFETCHT0 (R9)
	PREFETCHT0 60(R9)

	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

	MOVQ CX, BX
	SHRQ $2, BX
	JZ   tail

loop4:
	PREFETCHT0 384(SI)
	PREFETCHT0 512(DI)
	STEP(0, 0)
	STEP(24, 64)
	STEP(48, 128)
	STEP(72, 192)
	ADDQ $96, SI
	ADDQ $256, DI
	DECQ BX
	JNZ  loop4

tail:
	ANDQ $3, CX
	JZ   store

loop1:
	STEP(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop1

store:
	ADDROW(Y4, Y5)
	ADDROW(Y6, Y7)
	ADDROW(Y8, Y9)
	ADDROW(Y10, Y11)
	ADDROW(Y12, Y13)
	ADDROW(Y14, Y15)
	VZEROUPPER
	RET

// func axpyAVX2(alpha float32, x, y []float32)
// y[i] += alpha * x[i] for i < len(y); x has at least len(y) elements.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-56
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ y_base+32(FP), DI
	MOVQ y_len+40(FP), CX
	MOVQ CX, BX
	SHRQ $5, BX
	JZ   axpy8

axpy32:
	VMOVUPS (DI), Y1
	VMOVUPS 32(DI), Y2
	VMOVUPS 64(DI), Y3
	VMOVUPS 96(DI), Y4
	VFMADD231PS (SI), Y0, Y1
	VFMADD231PS 32(SI), Y0, Y2
	VFMADD231PS 64(SI), Y0, Y3
	VFMADD231PS 96(SI), Y0, Y4
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ BX
	JNZ  axpy32

axpy8:
	ANDQ $31, CX
	MOVQ CX, BX
	SHRQ $3, BX
	JZ   axpy1

axpy8loop:
	VMOVUPS (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ BX
	JNZ  axpy8loop

axpy1:
	ANDQ $7, CX
	JZ   axpydone

axpy1loop:
	VMOVSS (DI), X1
	VFMADD231SS (SI), X0, X1
	VMOVSS X1, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JNZ  axpy1loop

axpydone:
	VZEROUPPER
	RET

// func dotAVX2(x, y []float32) float32
// Returns the sum of x[i]*y[i] for i < len(x); y has at least len(x) elements.
TEXT ·dotAVX2(SB), NOSPLIT, $0-52
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ y_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ CX, BX
	SHRQ $5, BX
	JZ   dot8

dot32:
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	DECQ BX
	JNZ  dot32

dot8:
	ANDQ $31, CX
	MOVQ CX, BX
	SHRQ $3, BX
	JZ   dotsum

dot8loop:
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ BX
	JNZ  dot8loop

dotsum:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	ANDQ $7, CX
	JZ   dotdone

dot1:
	VMOVSS (SI), X4
	VFMADD231SS (DI), X4, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JNZ  dot1

dotdone:
	VMOVSS X0, ret+48(FP)
	VZEROUPPER
	RET
