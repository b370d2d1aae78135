#include "textflag.h"
#include "sum_amd64.h"

// Sums of float32 data (sum.go), AVX2.

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

// func addRowsAVX2(p, x []float32, rows, stride int) int
// p[j] += x[r·stride+j] for r < rows, in row order, over the columns of whole groups of
// eight; returns how many columns that was. The running sums of a strip of 64 columns
// (then 8) stay in registers while the rows stream past, so p costs one load and one
// store per strip instead of one per row.
TEXT ·addRowsAVX2(SB), NOSPLIT, $0-72
	MOVQ p_base+0(FP), DI
	MOVQ p_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ rows+48(FP), R8
	MOVQ stride+56(FP), R9
	SHLQ $2, R9
	ANDQ $-8, CX
	XORQ AX, AX

strip64:
	LEAQ 64(AX), BX
	CMPQ BX, CX
	JGT  strip8
	VMOVUPS 0(DI)(AX*4), Y0
	VMOVUPS 32(DI)(AX*4), Y1
	VMOVUPS 64(DI)(AX*4), Y2
	VMOVUPS 96(DI)(AX*4), Y3
	VMOVUPS 128(DI)(AX*4), Y4
	VMOVUPS 160(DI)(AX*4), Y5
	VMOVUPS 192(DI)(AX*4), Y6
	VMOVUPS 224(DI)(AX*4), Y7
	LEAQ (SI)(AX*4), R10
	MOVQ R8, R11

rows64:
	VADDPS 0(R10), Y0, Y0
	VADDPS 32(R10), Y1, Y1
	VADDPS 64(R10), Y2, Y2
	VADDPS 96(R10), Y3, Y3
	VADDPS 128(R10), Y4, Y4
	VADDPS 160(R10), Y5, Y5
	VADDPS 192(R10), Y6, Y6
	VADDPS 224(R10), Y7, Y7
	ADDQ R9, R10
	DECQ R11
	JNZ  rows64
	VMOVUPS Y0, 0(DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	VMOVUPS Y4, 128(DI)(AX*4)
	VMOVUPS Y5, 160(DI)(AX*4)
	VMOVUPS Y6, 192(DI)(AX*4)
	VMOVUPS Y7, 224(DI)(AX*4)
	MOVQ BX, AX
	JMP  strip64

strip8:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT  rowsdone
	VMOVUPS (DI)(AX*4), Y0
	LEAQ (SI)(AX*4), R10
	MOVQ R8, R11

rows8:
	VADDPS (R10), Y0, Y0
	ADDQ R9, R10
	DECQ R11
	JNZ  rows8
	VMOVUPS Y0, (DI)(AX*4)
	MOVQ BX, AX
	JMP  strip8

rowsdone:
	MOVQ AX, ret+64(FP)
	VZEROUPPER
	RET

// func sumEachAVX2(d []float64, x []float32, row int)
// d[r] = the sum of x[r·row:(r+1)·row] for every r < len(d), as sumGo sums a row of
// whole groups: the float32 lanes 0-7 and 8-15 in Y8 and Y9 over each chunk of
// sumChunk elements, widened into the float64 lanes in Y0-Y3. Rows go two at a time
// (the second in Y10-Y11 and Y4-Y7), so one row's additions fill the other's latency.
// row is a multiple of 16.
TEXT ·sumEachAVX2(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), R8
	MOVQ x_base+24(FP), SI
	MOVQ row+48(FP), CX
	LEAQ (SI)(CX*4), R9 // the second row of a pair
	XORQ DX, DX

pairrow:
	LEAQ 2(DX), R10
	CMPQ R10, R8
	JGT  eachrow
	XORQ AX, AX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

pairchunk:
	CMPQ AX, CX
	JGE  pairmerge
	LEAQ 256(AX), BX // sumChunk
	CMPQ BX, CX
	CMOVQGT CX, BX
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

pairloop:
	VADDPS (SI)(AX*4), Y8, Y8
	VADDPS 32(SI)(AX*4), Y9, Y9
	VADDPS (R9)(AX*4), Y10, Y10
	VADDPS 32(R9)(AX*4), Y11, Y11
	ADDQ $16, AX
	CMPQ AX, BX
	JLT  pairloop
	WIDEN(Y8, X8, Y9, X9, Y0, Y1, Y2, Y3)
	WIDEN(Y10, X10, Y11, X11, Y4, Y5, Y6, Y7)
	JMP  pairchunk

pairmerge:
	MERGE(Y0, Y1, Y2, Y3, X0, X1)
	MERGE(Y4, Y5, Y6, Y7, X4, X5)
	VMOVSD X0, (DI)(DX*8)
	VMOVSD X4, 8(DI)(DX*8)
	LEAQ (SI)(CX*8), SI
	LEAQ (R9)(CX*8), R9
	MOVQ R10, DX
	JMP  pairrow

eachrow:
	CMPQ DX, R8
	JGE  eachdone
	XORQ AX, AX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

eachchunk:
	CMPQ AX, CX
	JGE  eachmerge
	LEAQ 256(AX), BX // sumChunk
	CMPQ BX, CX
	CMOVQGT CX, BX
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9

eachloop:
	VADDPS (SI)(AX*4), Y8, Y8
	VADDPS 32(SI)(AX*4), Y9, Y9
	ADDQ $16, AX
	CMPQ AX, BX
	JLT  eachloop
	WIDEN(Y8, X8, Y9, X9, Y0, Y1, Y2, Y3)
	JMP  eachchunk

eachmerge:
	MERGE(Y0, Y1, Y2, Y3, X0, X1)
	VMOVSD X0, (DI)(DX*8)
	LEAQ (SI)(CX*4), SI
	INCQ DX
	JMP  eachrow

eachdone:
	VZEROUPPER
	RET
