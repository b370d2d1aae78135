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

// func maxGrad2x2RowsAVX512(dz, z, g []float32, rows, ow, w int, relu bool)
//
// The gradient under rows output rows of ow windows whose input rows (w elements, w
// being 2·ow or 2·ow+1) follow each other in z and dz: maxGrad2x2AVX2's result, and
// with relu zero wherever z is not greater than zero (Where(z > 0, ·, 0)), the column
// no window covers included, in one call. Eight windows (two rows of sixteen inputs)
// at a time in their own layout, with no shuffles across lanes: each lane takes its
// window's four inputs from its pair (VPERMILPS) and the choice is made in mask
// registers. The row's last eight windows or fewer, and that column, go through the
// same code under a write mask, so every element of a row is written by one
// instruction that read it first (dz may be z's memory). Registers: SI, DX the input
// rows, DI, R8 the output rows, R9 the gradients of the row, CX the window index; K0
// the even lanes, K6 and K7 the input and gradient masks.
TEXT ·maxGrad2x2RowsAVX512(SB), NOSPLIT, $0-97
	MOVQ dz_base+0(FP), DI
	MOVQ z_base+24(FP), SI
	MOVQ g_base+48(FP), R9
	MOVQ rows+72(FP), R12
	MOVQ ow+80(FP), R13
	MOVQ w+88(FP), BX
	TESTQ R12, R12
	JZ rowsdone
	MOVQ R13, CX
	ANDQ $7, CX
	MOVL $1, R11
	SHLL CX, R11
	DECL R11         // gradient mask of the last windows: ow mod 8 bits
	ANDQ $-8, R13    // windows in full groups of eight
	MOVQ BX, CX
	SUBQ R13, CX
	SUBQ R13, CX
	MOVL $1, R10
	SHLL CX, R10
	DECL R10         // input mask of the row's end: w - 2·R13 bits (0 when none is left)
	SHLQ $2, BX      // w in bytes
	LEAQ (SI)(BX*1), DX
	LEAQ (DI)(BX*1), R8
	MOVL $0x5555, AX
	KMOVW AX, K0
	VXORPS Z31, Z31, Z31

row:
	MOVL $0xFFFF, AX
	KMOVW AX, K6
	MOVL $0xFF, AX
	KMOVW AX, K7
	XORQ CX, CX

group:
	CMPQ CX, R13
	JNE windows
	TESTL R10, R10
	JZ nextrow
	KMOVW R10, K6
	KMOVW R11, K7

windows:
	VMOVUPS.Z (SI)(CX*8), K6, Z0 // top: pairs (left, right) of eight windows
	VMOVUPS.Z (DX)(CX*8), K6, Z1 // bottom
	VMOVUPS.Z (R9)(CX*4), K7, Y2
	VPMOVZXDQ Y2, Z2
	VPSLLQ $32, Z2, Z3
	VPORD Z3, Z2, Z2             // each window's gradient in both lanes of its pair
	VPERMILPS $0xA0, Z0, Z4      // top left
	VPERMILPS $0xF5, Z0, Z5      // top right
	VPERMILPS $0xA0, Z1, Z6      // bottom left
	VPERMILPS $0xF5, Z1, Z7      // bottom right
	VCMPPS $0x1E, Z4, Z5, K1     // c1: top right > top left
	VMOVAPS Z5, K1, Z4           // running maximum
	VCMPPS $0x1E, Z4, Z6, K2     // c2: bottom left > max
	VMOVAPS Z6, K2, Z4
	VCMPPS $0x1E, Z4, Z7, K3     // c3: bottom right > max
	KORW K3, K2, K4
	KXORW K0, K1, K5
	KANDNW K5, K4, K5            // top: left lanes where none of c1..c3, right where c1 alone
	KANDNW K3, K0, K4            // bottom right: c3
	KANDNW K2, K3, K2
	KANDW K0, K2, K2             // bottom left: c2 and not c3
	KORW K2, K4, K4
	CMPB relu+96(FP), $0
	JEQ store
	VCMPPS $0x1E, Z31, Z0, K1    // ReLU's gradient mask: z > 0
	KANDW K1, K5, K5
	VCMPPS $0x1E, Z31, Z1, K1
	KANDW K1, K4, K4

store:
	VMOVAPS.Z Z2, K5, Z8
	VMOVAPS.Z Z2, K4, Z9
	VMOVUPS Z8, K6, (DI)(CX*8)
	VMOVUPS Z9, K6, (R8)(CX*8)
	ADDQ $8, CX
	CMPQ CX, R13
	JLE group

nextrow:
	MOVQ ow+80(FP), AX
	LEAQ (R9)(AX*4), R9
	LEAQ (SI)(BX*2), SI
	LEAQ (DX)(BX*2), DX
	LEAQ (DI)(BX*2), DI
	LEAQ (R8)(BX*2), R8
	DECQ R12
	JNZ row
	VZEROUPPER

rowsdone:
	RET

// MAXN16 is MAXN in sixteen lanes, with K1 for the NaN lanes.
#define MAXN16(x, y, d, t) \
	VMAXPS x, y, d \
	VMAXPS y, x, t \
	VPANDD t, d, d \
	VCMPPS $3, x, x, K1 \
	VMOVAPS x, K1, d \
	VCMPPS $3, y, y, K1 \
	VMOVAPS y, K1, d

// func max2x2RowsAVX512(y, z []float32, rows, ow, w int, relu bool)
//
// The forward pass of maxGrad2x2RowsAVX512's rows, eight windows at a time in the same
// layout and with the same masks: the two rows' maximum, then each pair's (VPERMILPS
// swaps the pair), the even lanes packed into eight outputs (VPMOVQD), and with relu
// the largest of that and zero, as Go's max.
TEXT ·max2x2RowsAVX512(SB), NOSPLIT, $0-73
	MOVQ y_base+0(FP), R9
	MOVQ z_base+24(FP), SI
	MOVQ rows+48(FP), R12
	MOVQ ow+56(FP), R13
	MOVQ w+64(FP), BX
	TESTQ R12, R12
	JZ fwddone
	MOVQ R13, CX
	ANDQ $7, CX
	MOVL $1, R11
	SHLL CX, R11
	DECL R11
	ANDQ $-8, R13
	MOVQ BX, CX
	SUBQ R13, CX
	SUBQ R13, CX
	MOVL $1, R10
	SHLL CX, R10
	DECL R10
	SHLQ $2, BX
	LEAQ (SI)(BX*1), DX
	VXORPS Z31, Z31, Z31

fwdrow:
	MOVL $0xFFFF, AX
	KMOVW AX, K6
	MOVL $0xFF, AX
	KMOVW AX, K7
	XORQ CX, CX

fwdgroup:
	CMPQ CX, R13
	JNE fwdwindows
	TESTL R10, R10
	JZ fwdnext
	KMOVW R10, K6
	KMOVW R11, K7

fwdwindows:
	VMOVUPS.Z (SI)(CX*8), K6, Z0
	VMOVUPS.Z (DX)(CX*8), K6, Z1
	MAXN16(Z0, Z1, Z2, Z3)
	VPERMILPS $0xB1, Z2, Z4
	MAXN16(Z2, Z4, Z5, Z3)
	CMPB relu+72(FP), $0
	JEQ fwdstore
	MAXN16(Z5, Z31, Z6, Z3)
	VMOVAPS Z6, Z5

fwdstore:
	VPMOVQD Z5, Y6
	VMOVUPS Y6, K7, (R9)(CX*4)
	ADDQ $8, CX
	CMPQ CX, R13
	JLE fwdgroup

fwdnext:
	MOVQ ow+56(FP), AX
	LEAQ (R9)(AX*4), R9
	LEAQ (SI)(BX*2), SI
	LEAQ (DX)(BX*2), DX
	DECQ R12
	JNZ fwdrow
	VZEROUPPER

fwddone:
	RET
