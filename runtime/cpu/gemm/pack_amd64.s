#include "textflag.h"

// func transpose4AVX2(dst []float32, ldd int, src []float32, ld int, k int)
// dst[p·ldd + i] = src[i·ld + p] for i < 4 and p < k, k a multiple of 8: four rows of
// src become k rows of four. Per 8 columns: two unpacks and two shuffles per pair of
// rows leave columns p and p+4 in the two 128-bit lanes of one register.
TEXT ·transpose4AVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ ldd+24(FP), R8
	SHLQ $2, R8
	MOVQ src_base+32(FP), SI
	MOVQ ld+56(FP), R9
	SHLQ $2, R9
	MOVQ k+64(FP), CX
	SHRQ $3, CX
	JZ   done
	LEAQ (SI)(R9*2), R10 // row 2
	LEAQ (R8)(R8*2), R11 // 3·ldd
	LEAQ (DI)(R8*4), R12 // dst row 4
loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R9*1), Y1
	VMOVUPS (R10), Y2
	VMOVUPS (R10)(R9*1), Y3
	VUNPCKLPS Y1, Y0, Y4 // r0[0] r1[0] r0[1] r1[1] | r0[4] r1[4] r0[5] r1[5]
	VUNPCKHPS Y1, Y0, Y5 // r0[2] r1[2] r0[3] r1[3] | r0[6] r1[6] r0[7] r1[7]
	VUNPCKLPS Y3, Y2, Y6
	VUNPCKHPS Y3, Y2, Y7
	VSHUFPS $0x44, Y6, Y4, Y0 // column 0 | column 4
	VSHUFPS $0xEE, Y6, Y4, Y1 // column 1 | column 5
	VSHUFPS $0x44, Y7, Y5, Y2 // column 2 | column 6
	VSHUFPS $0xEE, Y7, Y5, Y3 // column 3 | column 7
	VMOVUPS X0, (DI)
	VMOVUPS X1, (DI)(R8*1)
	VMOVUPS X2, (DI)(R8*2)
	VMOVUPS X3, (DI)(R11*1)
	VEXTRACTF128 $1, Y0, (R12)
	VEXTRACTF128 $1, Y1, (R12)(R8*1)
	VEXTRACTF128 $1, Y2, (R12)(R8*2)
	VEXTRACTF128 $1, Y3, (R12)(R11*1)
	ADDQ $32, SI
	ADDQ $32, R10
	LEAQ (DI)(R8*8), DI
	LEAQ (R12)(R8*8), R12
	DECQ CX
	JNZ  loop
done:
	VZEROUPPER
	RET

// func copyPanelsAVX2(dst []float32, kb int, src []float32, ld, rows, panels int)
// dst[t·16·kb + p·16 + j] = src[p·ld + t·16 + j] for p < rows, t < panels and j < 16:
// rows of a B as stored into `panels` adjacent packed panels (packBChunk). It is
// copyStripsAVX2 with width 16.
TEXT ·copyPanelsAVX2(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ kb+24(FP), R8
	MOVQ src_base+32(FP), SI
	MOVQ ld+56(FP), R9
	MOVQ rows+64(FP), CX
	MOVQ panels+72(FP), R10
	MOVQ $16, R11
	JMP  copyStrips<>(SB)

// func copyStripsAVX2(dst []float32, kb int, src []float32, ld, rows, width, strips int)
// dst[t·width·kb + p·width + j] = src[p·ld + t·width + j] for p < rows, t < strips and
// j < width, 4 <= width <= 16: the packing of a transposed A (strips of mr) and of a B
// as stored (panels of 16).
TEXT ·copyStripsAVX2(SB), NOSPLIT, $0-88
	MOVQ dst_base+0(FP), DI
	MOVQ kb+24(FP), R8
	MOVQ src_base+32(FP), SI
	MOVQ ld+56(FP), R9
	MOVQ rows+64(FP), CX
	MOVQ width+72(FP), R11
	MOVQ strips+80(FP), R10
	JMP  copyStrips<>(SB)

// STRIPROW copies one row's piece of every strip (R10 of them, R11 bytes each, R8 bytes
// apart in dst) with two overlapping moves of the registers r0 and r1 (back bytes, the
// registers' size negated, from the piece's end), prefetching each piece copyAhead rows
// on and the row's last byte, and steps to the next row with CX counted down: copyStrips'
// loop at the width of YMM (pieces of 8 floats or more) or XMM registers (fewer).
#define STRIPROW(r0, r1, back, piece) \
	MOVQ DI, R12 \
	MOVQ SI, R13 \
	MOVQ R10, BX \
piece: \
	PREFETCHT0 (R13)(AX*1) \
	VMOVUPS (R13), r0 \
	VMOVUPS back(R13)(R11*1), r1 \
	VMOVUPS r0, (R12) \
	VMOVUPS r1, back(R12)(R11*1) \
	ADDQ R11, R13 \
	ADDQ R8, R12 \
	DECQ BX \
	JNZ  piece \
	PREFETCHT0 (SI)(DX*1) \
	ADDQ R9, SI \
	ADDQ R11, DI \
	DECQ CX

// copyStrips is the body of copyStripsAVX2, its arguments in registers: DI dst, R8 kb,
// SI src, R9 ld, CX rows (at least 1), R11 width, R10 strips (at least 1). Row by row, it
// copies the row's piece of every strip with two overlapping loads and stores (8 floats
// at each end of the piece, 4 below a width of 8) and prefetches the same columns
// copyAhead rows on (past the last row too: a prefetch never faults, so one loop serves
// every row): each piece's first byte and the row's last, which with pieces of at most
// 64 bytes touches every line of the row. Consecutive rows lie ld floats apart (16 KiB
// for a 4096-wide operand, on another page each), so the hardware prefetchers, which
// stay within a page, do not fetch them ahead.
TEXT copyStrips<>(SB), NOSPLIT, $0
	SHLQ $2, R11 // piece width in bytes
	IMULQ R11, R8 // strip stride in bytes: width·4·kb
	SHLQ $2, R9
	MOVQ R9, AX
	SHLQ $5, AX // copyAhead (32) rows, in bytes
	MOVQ R11, DX
	IMULQ R10, DX
	ADDQ AX, DX
	DECQ DX // the row's last byte, copyAhead rows on
	CMPQ R11, $32
	JLT  narrow
wide:
	STRIPROW(Y0, Y1, -32, wpiece)
	JNZ  wide
	VZEROUPPER
	RET
narrow:
	STRIPROW(X0, X1, -16, npiece)
	JNZ  narrow
	RET

// func transpose16AVX512(dst []float32, ldd int, src []float32, ld, rows, k int)
// dst[p·ldd + i] = src[i·ld + p] for i < rows and p < k, 1 <= rows <= 16, k a multiple of
// 16: up to sixteen rows of src become k rows of `rows` values, sixteen columns at a
// time. The rows are loaded into Z0-Z15 (those past `rows` are not, and their lanes are
// not stored) and transposed in four rounds of shuffles: unpacks pair the rows,
// VSHUFPS makes the columns of four rows within each 128-bit lane, and two rounds of
// VSHUFF32X4 gather each column's four lanes; each column is stored with the mask of
// `rows` lanes. So a B panel (16 rows) is written a full cache line at a time and an A
// strip (mr rows) in one pass over its rows, where transpose4AVX2 takes four rows a
// pass and writes 16 bytes at a time.
TEXT ·transpose16AVX512(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ ldd+24(FP), R8
	SHLQ $2, R8
	MOVQ src_base+32(FP), SI
	MOVQ ld+56(FP), R9
	SHLQ $2, R9
	MOVQ rows+64(FP), CX
	MOVQ k+72(FP), DX
	SHRQ $4, DX
	JZ   tdone
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1 // the lanes of the rows
	LEAQ (R9)(R9*2), R11 // 3·ld
	LEAQ (R8)(R8*2), R14 // 3·ldd
tloop:
	LEAQ (SI)(R9*4), R10 // row 4
	LEAQ (SI)(R9*8), R12 // row 8
	LEAQ (R10)(R9*8), R13 // row 12
	VMOVUPS (SI), Z0
	CMPQ CX, $1
	JEQ  tloaded
	VMOVUPS (SI)(R9*1), Z1
	CMPQ CX, $2
	JEQ  tloaded
	VMOVUPS (SI)(R9*2), Z2
	CMPQ CX, $3
	JEQ  tloaded
	VMOVUPS (SI)(R11*1), Z3
	CMPQ CX, $4
	JEQ  tloaded
	VMOVUPS (R10), Z4
	CMPQ CX, $5
	JEQ  tloaded
	VMOVUPS (R10)(R9*1), Z5
	CMPQ CX, $6
	JEQ  tloaded
	VMOVUPS (R10)(R9*2), Z6
	CMPQ CX, $7
	JEQ  tloaded
	VMOVUPS (R10)(R11*1), Z7
	CMPQ CX, $8
	JEQ  tloaded
	VMOVUPS (R12), Z8
	CMPQ CX, $9
	JEQ  tloaded
	VMOVUPS (R12)(R9*1), Z9
	CMPQ CX, $10
	JEQ  tloaded
	VMOVUPS (R12)(R9*2), Z10
	CMPQ CX, $11
	JEQ  tloaded
	VMOVUPS (R12)(R11*1), Z11
	CMPQ CX, $12
	JEQ  tloaded
	VMOVUPS (R13), Z12
	CMPQ CX, $13
	JEQ  tloaded
	VMOVUPS (R13)(R9*1), Z13
	CMPQ CX, $14
	JEQ  tloaded
	VMOVUPS (R13)(R9*2), Z14
	CMPQ CX, $15
	JEQ  tloaded
	VMOVUPS (R13)(R11*1), Z15
tloaded:
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	VSHUFPS $0x44, Z18, Z16, Z0
	VSHUFPS $0xEE, Z18, Z16, Z1
	VSHUFPS $0x44, Z19, Z17, Z2
	VSHUFPS $0xEE, Z19, Z17, Z3
	VSHUFPS $0x44, Z22, Z20, Z4
	VSHUFPS $0xEE, Z22, Z20, Z5
	VSHUFPS $0x44, Z23, Z21, Z6
	VSHUFPS $0xEE, Z23, Z21, Z7
	VSHUFPS $0x44, Z26, Z24, Z8
	VSHUFPS $0xEE, Z26, Z24, Z9
	VSHUFPS $0x44, Z27, Z25, Z10
	VSHUFPS $0xEE, Z27, Z25, Z11
	VSHUFPS $0x44, Z30, Z28, Z12
	VSHUFPS $0xEE, Z30, Z28, Z13
	VSHUFPS $0x44, Z31, Z29, Z14
	VSHUFPS $0xEE, Z31, Z29, Z15
	VSHUFF32X4 $0x44, Z4, Z0, Z16
	VSHUFF32X4 $0xEE, Z4, Z0, Z17
	VSHUFF32X4 $0x44, Z12, Z8, Z18
	VSHUFF32X4 $0xEE, Z12, Z8, Z19
	VSHUFF32X4 $0x44, Z5, Z1, Z20
	VSHUFF32X4 $0xEE, Z5, Z1, Z21
	VSHUFF32X4 $0x44, Z13, Z9, Z22
	VSHUFF32X4 $0xEE, Z13, Z9, Z23
	VSHUFF32X4 $0x44, Z6, Z2, Z24
	VSHUFF32X4 $0xEE, Z6, Z2, Z25
	VSHUFF32X4 $0x44, Z14, Z10, Z26
	VSHUFF32X4 $0xEE, Z14, Z10, Z27
	VSHUFF32X4 $0x44, Z7, Z3, Z28
	VSHUFF32X4 $0xEE, Z7, Z3, Z29
	VSHUFF32X4 $0x44, Z15, Z11, Z30
	VSHUFF32X4 $0xEE, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z18, Z16, Z0
	VSHUFF32X4 $0xDD, Z18, Z16, Z4
	VSHUFF32X4 $0x88, Z19, Z17, Z8
	VSHUFF32X4 $0xDD, Z19, Z17, Z12
	VSHUFF32X4 $0x88, Z22, Z20, Z1
	VSHUFF32X4 $0xDD, Z22, Z20, Z5
	VSHUFF32X4 $0x88, Z23, Z21, Z9
	VSHUFF32X4 $0xDD, Z23, Z21, Z13
	VSHUFF32X4 $0x88, Z26, Z24, Z2
	VSHUFF32X4 $0xDD, Z26, Z24, Z6
	VSHUFF32X4 $0x88, Z27, Z25, Z10
	VSHUFF32X4 $0xDD, Z27, Z25, Z14
	VSHUFF32X4 $0x88, Z30, Z28, Z3
	VSHUFF32X4 $0xDD, Z30, Z28, Z7
	VSHUFF32X4 $0x88, Z31, Z29, Z11
	VSHUFF32X4 $0xDD, Z31, Z29, Z15
	LEAQ (DI)(R8*4), R10 // column 4
	LEAQ (DI)(R8*8), R12 // column 8
	LEAQ (R10)(R8*8), R13 // column 12
	VMOVUPS Z0, K1, (DI)
	VMOVUPS Z1, K1, (DI)(R8*1)
	VMOVUPS Z2, K1, (DI)(R8*2)
	VMOVUPS Z3, K1, (DI)(R14*1)
	VMOVUPS Z4, K1, (R10)
	VMOVUPS Z5, K1, (R10)(R8*1)
	VMOVUPS Z6, K1, (R10)(R8*2)
	VMOVUPS Z7, K1, (R10)(R14*1)
	VMOVUPS Z8, K1, (R12)
	VMOVUPS Z9, K1, (R12)(R8*1)
	VMOVUPS Z10, K1, (R12)(R8*2)
	VMOVUPS Z11, K1, (R12)(R14*1)
	VMOVUPS Z12, K1, (R13)
	VMOVUPS Z13, K1, (R13)(R8*1)
	VMOVUPS Z14, K1, (R13)(R8*2)
	VMOVUPS Z15, K1, (R13)(R14*1)
	ADDQ $64, SI
	LEAQ (R13)(R8*4), DI
	DECQ DX
	JNZ  tloop
tdone:
	VZEROUPPER
	RET
