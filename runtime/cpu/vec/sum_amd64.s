#include "textflag.h"

// Sums of float32 data in float64 lanes (sum.go), AVX2.

// SUM16 adds the sixteen floats at (SI)(AX*4), widened, to the running sums Y0-Y3
// (four lanes each), with Y4-Y7 as scratch; SUMMERGE merges Y0-Y3 into X0 in sumGo's
// order. sumAVX2 and sumEachAVX2 share them, so a row's sum is Sum's.
#define SUM16 \
	VCVTPS2PD (SI)(AX*4), Y4; \
	VCVTPS2PD 16(SI)(AX*4), Y5; \
	VCVTPS2PD 32(SI)(AX*4), Y6; \
	VCVTPS2PD 48(SI)(AX*4), Y7; \
	VADDPD Y4, Y0, Y0; \
	VADDPD Y5, Y1, Y1; \
	VADDPD Y6, Y2, Y2; \
	VADDPD Y7, Y3, Y3

#define SUMMERGE \
	VADDPD Y1, Y0, Y0; \
	VADDPD Y3, Y2, Y2; \
	VADDPD Y2, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPD X1, X0, X0; \
	VPERMILPD $1, X0, X1; \
	VADDSD X1, X0, X0

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
	SUM16
	ADDQ $16, AX
	JMP  sumloop

sumdone:
	SUMMERGE
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

// func sumRowsAVX2(a []float64, x []float32, rows, stride int) int
// a[j] += x[r·stride+j] for r < rows, in row order, over the columns of whole groups of
// eight; returns how many columns that was. The running sums of a strip of 32 columns
// (then 8) stay in registers while the rows stream past, so a costs one load and one
// store per strip instead of one per row.
TEXT ·sumRowsAVX2(SB), NOSPLIT, $0-72
	MOVQ a_base+0(FP), DI
	MOVQ a_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ rows+48(FP), R8
	MOVQ stride+56(FP), R9
	SHLQ $2, R9
	ANDQ $-8, CX
	XORQ AX, AX

strip32:
	LEAQ 32(AX), BX
	CMPQ BX, CX
	JGT  strip8
	VMOVUPD 0(DI)(AX*8), Y0
	VMOVUPD 32(DI)(AX*8), Y1
	VMOVUPD 64(DI)(AX*8), Y2
	VMOVUPD 96(DI)(AX*8), Y3
	VMOVUPD 128(DI)(AX*8), Y4
	VMOVUPD 160(DI)(AX*8), Y5
	VMOVUPD 192(DI)(AX*8), Y6
	VMOVUPD 224(DI)(AX*8), Y7
	LEAQ (SI)(AX*4), R10
	MOVQ R8, R11

rows32:
	TESTQ R11, R11
	JZ   store32
	VCVTPS2PD 0(R10), Y8
	VADDPD Y8, Y0, Y0
	VCVTPS2PD 16(R10), Y9
	VADDPD Y9, Y1, Y1
	VCVTPS2PD 32(R10), Y8
	VADDPD Y8, Y2, Y2
	VCVTPS2PD 48(R10), Y9
	VADDPD Y9, Y3, Y3
	VCVTPS2PD 64(R10), Y8
	VADDPD Y8, Y4, Y4
	VCVTPS2PD 80(R10), Y9
	VADDPD Y9, Y5, Y5
	VCVTPS2PD 96(R10), Y8
	VADDPD Y8, Y6, Y6
	VCVTPS2PD 112(R10), Y9
	VADDPD Y9, Y7, Y7
	ADDQ R9, R10
	DECQ R11
	JMP  rows32

store32:
	VMOVUPD Y0, 0(DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	VMOVUPD Y2, 64(DI)(AX*8)
	VMOVUPD Y3, 96(DI)(AX*8)
	VMOVUPD Y4, 128(DI)(AX*8)
	VMOVUPD Y5, 160(DI)(AX*8)
	VMOVUPD Y6, 192(DI)(AX*8)
	VMOVUPD Y7, 224(DI)(AX*8)
	MOVQ BX, AX
	JMP  strip32

strip8:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT  rowsdone
	VMOVUPD (DI)(AX*8), Y0
	VMOVUPD 32(DI)(AX*8), Y1
	LEAQ (SI)(AX*4), R10
	MOVQ R8, R11

rows8:
	TESTQ R11, R11
	JZ   store8
	VCVTPS2PD (R10), Y8
	VADDPD Y8, Y0, Y0
	VCVTPS2PD 16(R10), Y9
	VADDPD Y9, Y1, Y1
	ADDQ R9, R10
	DECQ R11
	JMP  rows8

store8:
	VMOVUPD Y0, (DI)(AX*8)
	VMOVUPD Y1, 32(DI)(AX*8)
	MOVQ BX, AX
	JMP  strip8

rowsdone:
	MOVQ AX, ret+64(FP)
	VZEROUPPER
	RET

// func sumEachAVX2(d []float64, x []float32, row int)
// d[r] = the sum of x[r·row:(r+1)·row] for every r < len(d), as sumAVX2 sums a row;
// row is a multiple of 16.
TEXT ·sumEachAVX2(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), R8
	MOVQ x_base+24(FP), SI
	MOVQ row+48(FP), CX
	XORQ DX, DX

eachrow:
	CMPQ DX, R8
	JGE  eachdone
	XORQ AX, AX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

eachloop:
	CMPQ AX, CX
	JGE  eachmerge
	SUM16
	ADDQ $16, AX
	JMP  eachloop

eachmerge:
	SUMMERGE
	VMOVSD X0, (DI)(DX*8)
	LEAQ (SI)(CX*4), SI
	INCQ DX
	JMP  eachrow

eachdone:
	VZEROUPPER
	RET
