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
	MOVQ DI, R12
	MOVQ SI, R13
	MOVQ R10, BX
wpiece:
	PREFETCHT0 (R13)(AX*1)
	VMOVUPS (R13), Y0
	VMOVUPS -32(R13)(R11*1), Y1
	VMOVUPS Y0, (R12)
	VMOVUPS Y1, -32(R12)(R11*1)
	ADDQ R11, R13
	ADDQ R8, R12
	DECQ BX
	JNZ  wpiece
	PREFETCHT0 (SI)(DX*1)
	ADDQ R9, SI
	ADDQ R11, DI
	DECQ CX
	JNZ  wide
	VZEROUPPER
	RET
narrow:
	MOVQ DI, R12
	MOVQ SI, R13
	MOVQ R10, BX
npiece:
	PREFETCHT0 (R13)(AX*1)
	VMOVUPS (R13), X0
	VMOVUPS -16(R13)(R11*1), X1
	VMOVUPS X0, (R12)
	VMOVUPS X1, -16(R12)(R11*1)
	ADDQ R11, R13
	ADDQ R8, R12
	DECQ BX
	JNZ  npiece
	PREFETCHT0 (SI)(DX*1)
	ADDQ R9, SI
	ADDQ R11, DI
	DECQ CX
	JNZ  narrow
	RET
