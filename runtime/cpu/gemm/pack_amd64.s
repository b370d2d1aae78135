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

// LOADROW loads the row at addr into z and, when it was the last of the CX rows (row
// next-1), goes on to the shuffles: rows past CX are not read.
#define LOADROW(addr, z, next) \
	VMOVUPS addr, z \
	CMPQ CX, $next \
	JEQ  tloaded

// UNPACK2 interleaves the elements of a and b: the low pair of each 128-bit lane into
// lo, the high pair into hi.
#define UNPACK2(a, b, lo, hi) \
	VUNPCKLPS b, a, lo \
	VUNPCKHPS b, a, hi

// SHUF2 is the shuffle op of a and b with the selector il into lo and ih into hi.
#define SHUF2(op, il, ih, a, b, lo, hi) \
	op $il, b, a, lo \
	op $ih, b, a, hi

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
	LOADROW((SI), Z0, 1)
	LOADROW((SI)(R9*1), Z1, 2)
	LOADROW((SI)(R9*2), Z2, 3)
	LOADROW((SI)(R11*1), Z3, 4)
	LOADROW((R10), Z4, 5)
	LOADROW((R10)(R9*1), Z5, 6)
	LOADROW((R10)(R9*2), Z6, 7)
	LOADROW((R10)(R11*1), Z7, 8)
	LOADROW((R12), Z8, 9)
	LOADROW((R12)(R9*1), Z9, 10)
	LOADROW((R12)(R9*2), Z10, 11)
	LOADROW((R12)(R11*1), Z11, 12)
	LOADROW((R13), Z12, 13)
	LOADROW((R13)(R9*1), Z13, 14)
	LOADROW((R13)(R9*2), Z14, 15)
	VMOVUPS (R13)(R11*1), Z15
tloaded:
	UNPACK2(Z0, Z1, Z16, Z17)
	UNPACK2(Z2, Z3, Z18, Z19)
	UNPACK2(Z4, Z5, Z20, Z21)
	UNPACK2(Z6, Z7, Z22, Z23)
	UNPACK2(Z8, Z9, Z24, Z25)
	UNPACK2(Z10, Z11, Z26, Z27)
	UNPACK2(Z12, Z13, Z28, Z29)
	UNPACK2(Z14, Z15, Z30, Z31)
	SHUF2(VSHUFPS, 0x44, 0xEE, Z16, Z18, Z0, Z1)
	SHUF2(VSHUFPS, 0x44, 0xEE, Z17, Z19, Z2, Z3)
	SHUF2(VSHUFPS, 0x44, 0xEE, Z20, Z22, Z4, Z5)
	SHUF2(VSHUFPS, 0x44, 0xEE, Z21, Z23, Z6, Z7)
	SHUF2(VSHUFPS, 0x44, 0xEE, Z24, Z26, Z8, Z9)
	SHUF2(VSHUFPS, 0x44, 0xEE, Z25, Z27, Z10, Z11)
	SHUF2(VSHUFPS, 0x44, 0xEE, Z28, Z30, Z12, Z13)
	SHUF2(VSHUFPS, 0x44, 0xEE, Z29, Z31, Z14, Z15)
	SHUF2(VSHUFF32X4, 0x44, 0xEE, Z0, Z4, Z16, Z17)
	SHUF2(VSHUFF32X4, 0x44, 0xEE, Z8, Z12, Z18, Z19)
	SHUF2(VSHUFF32X4, 0x44, 0xEE, Z1, Z5, Z20, Z21)
	SHUF2(VSHUFF32X4, 0x44, 0xEE, Z9, Z13, Z22, Z23)
	SHUF2(VSHUFF32X4, 0x44, 0xEE, Z2, Z6, Z24, Z25)
	SHUF2(VSHUFF32X4, 0x44, 0xEE, Z10, Z14, Z26, Z27)
	SHUF2(VSHUFF32X4, 0x44, 0xEE, Z3, Z7, Z28, Z29)
	SHUF2(VSHUFF32X4, 0x44, 0xEE, Z11, Z15, Z30, Z31)
	SHUF2(VSHUFF32X4, 0x88, 0xDD, Z16, Z18, Z0, Z4)
	SHUF2(VSHUFF32X4, 0x88, 0xDD, Z17, Z19, Z8, Z12)
	SHUF2(VSHUFF32X4, 0x88, 0xDD, Z20, Z22, Z1, Z5)
	SHUF2(VSHUFF32X4, 0x88, 0xDD, Z21, Z23, Z9, Z13)
	SHUF2(VSHUFF32X4, 0x88, 0xDD, Z24, Z26, Z2, Z6)
	SHUF2(VSHUFF32X4, 0x88, 0xDD, Z25, Z27, Z10, Z14)
	SHUF2(VSHUFF32X4, 0x88, 0xDD, Z28, Z30, Z3, Z7)
	SHUF2(VSHUFF32X4, 0x88, 0xDD, Z29, Z31, Z11, Z15)
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
