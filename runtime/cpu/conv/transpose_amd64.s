#include "textflag.h"

// func transpose8AVX2(dst []float32, ldd int, src []float32, ld int, n int)
//
// dst[j·ldd + i] = src[i·ld + j] for i < 8 and j < n, n a multiple of 8: eight rows of
// src, eight columns at a time, through the usual 8×8 transpose (unpack pairs, shuffle
// quads, swap 128-bit halves). The caller guarantees the bounds.
TEXT ·transpose8AVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ ldd+24(FP), R10
	MOVQ src_base+32(FP), SI
	MOVQ ld+56(FP), R8
	MOVQ n+64(FP), CX
	SHRQ $3, CX
	JZ done
	SHLQ $2, R8               // ld in bytes
	LEAQ (R8)(R8*2), R9       // 3·ld
	SHLQ $2, R10              // ldd in bytes
	LEAQ (R10)(R10*2), R11    // 3·ldd

loop:
	LEAQ (SI)(R8*4), BX
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R8*1), Y1
	VMOVUPS (SI)(R8*2), Y2
	VMOVUPS (SI)(R9*1), Y3
	VMOVUPS (BX), Y4
	VMOVUPS (BX)(R8*1), Y5
	VMOVUPS (BX)(R8*2), Y6
	VMOVUPS (BX)(R9*1), Y7
	VUNPCKLPS Y1, Y0, Y8      // r0 r1 pairs of columns 0 1 | 4 5
	VUNPCKHPS Y1, Y0, Y9      // columns 2 3 | 6 7
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0 // rows 0-3 of column 0 | 4
	VSHUFPS $0xEE, Y10, Y8, Y1 // column 1 | 5
	VSHUFPS $0x44, Y11, Y9, Y2 // column 2 | 6
	VSHUFPS $0xEE, Y11, Y9, Y3 // column 3 | 7
	VSHUFPS $0x44, Y14, Y12, Y4 // rows 4-7
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	LEAQ (DI)(R10*4), DX
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R10*1)
	VMOVUPS Y10, (DI)(R10*2)
	VMOVUPS Y11, (DI)(R11*1)
	VMOVUPS Y12, (DX)
	VMOVUPS Y13, (DX)(R10*1)
	VMOVUPS Y14, (DX)(R10*2)
	VMOVUPS Y15, (DX)(R11*1)
	ADDQ $32, SI
	LEAQ (DI)(R10*8), DI
	DECQ CX
	JNZ loop
	VZEROUPPER

done:
	RET
