#include "textflag.h"

// The 2×2 windows of stride 2 (halving pools) eight at a time with AVX2. Lanes hold the
// windows in the order 0 1 4 5 | 2 3 6 7 after VSHUFPS splits a row's 16 floats into
// even and odd columns; VPERMPD $0xD8 converts between that order and 0..7.

// MAXN sets d to the largest of x and y as Go's max does: NaN when either is NaN, and +0
// for a tie of -0 and +0. VMAXPS gives its first operand on a tie or a NaN, so the
// maxima taken both ways differ only there: their AND is +0 for zeros of both signs,
// and the NaNs are blended in after it. t is scratch.
#define MAXN(x, y, d, t) \
	VMAXPS x, y, d \
	VMAXPS y, x, t \
	VANDPS t, d, d \
	VCMPPS $3, x, x, t \
	VBLENDVPS t, x, d, d \
	VCMPPS $3, y, y, t \
	VBLENDVPS t, y, d, d

// func max2x2AVX2(dst, top, bot []float32) int
TEXT ·max2x2AVX2(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ top_base+24(FP), SI
	MOVQ bot_base+48(FP), DX
	SHRQ $3, CX
	MOVQ CX, AX
	SHLQ $3, AX
	MOVQ AX, ret+72(FP)
	TESTQ CX, CX
	JZ maxdone

maxloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS (DX), Y2
	VMOVUPS 32(DX), Y3
	MAXN(Y0, Y2, Y4, Y6)
	MAXN(Y1, Y3, Y5, Y7)
	VSHUFPS $0x88, Y5, Y4, Y0
	VSHUFPS $0xDD, Y5, Y4, Y1
	MAXN(Y0, Y1, Y2, Y6)
	VPERMPD $0xD8, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $32, DI
	DECQ CX
	JNZ maxloop
	VZEROUPPER

maxdone:
	RET

// func maxGrad2x2AVX2(dtop, dbot, top, bot, g []float32) int
//
// Each window's gradient goes to its first largest input (a later one only when
// strictly greater, so a NaN wins only as the first), zero to the other three: every
// element under the windows is written.
TEXT ·maxGrad2x2AVX2(SB), NOSPLIT, $0-128
	MOVQ dtop_base+0(FP), DI
	MOVQ dbot_base+24(FP), R8
	MOVQ top_base+48(FP), SI
	MOVQ bot_base+72(FP), DX
	MOVQ g_base+96(FP), R9
	MOVQ g_len+104(FP), CX
	SHRQ $3, CX
	MOVQ CX, AX
	SHLQ $3, AX
	MOVQ AX, ret+120(FP)
	TESTQ CX, CX
	JZ graddone

gradloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS (DX), Y2
	VMOVUPS 32(DX), Y3
	VSHUFPS $0x88, Y1, Y0, Y4 // top left
	VSHUFPS $0xDD, Y1, Y0, Y5 // top right
	VSHUFPS $0x88, Y3, Y2, Y6 // bottom left
	VSHUFPS $0xDD, Y3, Y2, Y7 // bottom right
	VMOVAPS Y4, Y8            // running maximum
	VCMPPS $0x1E, Y8, Y5, Y9  // c1: top right > max
	VBLENDVPS Y9, Y5, Y8, Y8
	VCMPPS $0x1E, Y8, Y6, Y10 // c2: bottom left > max
	VBLENDVPS Y10, Y6, Y8, Y8
	VCMPPS $0x1E, Y8, Y7, Y11 // c3: bottom right > max: selects bottom right
	VANDNPS Y10, Y11, Y12     // c2 &^ c3: selects bottom left
	VORPS Y10, Y11, Y13
	VANDNPS Y9, Y13, Y14      // c1 &^ (c2 | c3): selects top right
	VORPS Y9, Y13, Y15        // none of them: top left
	VMOVUPS (R9), Y0
	VPERMPD $0xD8, Y0, Y0
	VANDNPS Y0, Y15, Y1
	VANDPS Y0, Y14, Y2
	VANDPS Y0, Y12, Y3
	VANDPS Y0, Y11, Y4
	VUNPCKLPS Y2, Y1, Y5
	VUNPCKHPS Y2, Y1, Y6
	VUNPCKLPS Y4, Y3, Y7
	VUNPCKHPS Y4, Y3, Y8
	VMOVUPS Y5, (DI)
	VMOVUPS Y6, 32(DI)
	VMOVUPS Y7, (R8)
	VMOVUPS Y8, 32(R8)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	ADDQ $64, R8
	ADDQ $32, R9
	DECQ CX
	JNZ gradloop
	VZEROUPPER

graddone:
	RET

// The same four windows at a time in 128-bit registers, for rows of 4 to 7 windows.
// VSHUFPS on a 128-bit register keeps the windows in order: no VPERMPD.

// func max2x2x4AVX2(dst, top, bot []float32) int
TEXT ·max2x2x4AVX2(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ top_base+24(FP), SI
	MOVQ bot_base+48(FP), DX
	SHRQ $2, CX
	MOVQ CX, AX
	SHLQ $2, AX
	MOVQ AX, ret+72(FP)
	TESTQ CX, CX
	JZ max4done

max4loop:
	VMOVUPS (SI), X0
	VMOVUPS 16(SI), X1
	VMOVUPS (DX), X2
	VMOVUPS 16(DX), X3
	MAXN(X0, X2, X4, X6)
	MAXN(X1, X3, X5, X7)
	VSHUFPS $0x88, X5, X4, X0
	VSHUFPS $0xDD, X5, X4, X1
	MAXN(X0, X1, X2, X6)
	VMOVUPS X2, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $16, DI
	DECQ CX
	JNZ max4loop

max4done:
	RET

// func maxGrad2x2x4AVX2(dtop, dbot, top, bot, g []float32) int
TEXT ·maxGrad2x2x4AVX2(SB), NOSPLIT, $0-128
	MOVQ dtop_base+0(FP), DI
	MOVQ dbot_base+24(FP), R8
	MOVQ top_base+48(FP), SI
	MOVQ bot_base+72(FP), DX
	MOVQ g_base+96(FP), R9
	MOVQ g_len+104(FP), CX
	SHRQ $2, CX
	MOVQ CX, AX
	SHLQ $2, AX
	MOVQ AX, ret+120(FP)
	TESTQ CX, CX
	JZ grad4done

grad4loop:
	VMOVUPS (SI), X0
	VMOVUPS 16(SI), X1
	VMOVUPS (DX), X2
	VMOVUPS 16(DX), X3
	VSHUFPS $0x88, X1, X0, X4
	VSHUFPS $0xDD, X1, X0, X5
	VSHUFPS $0x88, X3, X2, X6
	VSHUFPS $0xDD, X3, X2, X7
	VMOVAPS X4, X8
	VCMPPS $0x1E, X8, X5, X9
	VBLENDVPS X9, X5, X8, X8
	VCMPPS $0x1E, X8, X6, X10
	VBLENDVPS X10, X6, X8, X8
	VCMPPS $0x1E, X8, X7, X11
	VANDNPS X10, X11, X12
	VORPS X10, X11, X13
	VANDNPS X9, X13, X14
	VORPS X9, X13, X15
	VMOVUPS (R9), X0
	VANDNPS X0, X15, X1
	VANDPS X0, X14, X2
	VANDPS X0, X12, X3
	VANDPS X0, X11, X4
	VUNPCKLPS X2, X1, X5
	VUNPCKHPS X2, X1, X6
	VUNPCKLPS X4, X3, X7
	VUNPCKHPS X4, X3, X8
	VMOVUPS X5, (DI)
	VMOVUPS X6, 16(DI)
	VMOVUPS X7, (R8)
	VMOVUPS X8, 16(R8)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $16, R9
	DECQ CX
	JNZ grad4loop

grad4done:
	RET
