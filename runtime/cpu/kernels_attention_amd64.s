#include "textflag.h"

// The AVX-512 rows of attention with 16 features per head (kernels_attention16.go):
// one query row per call against keys held transposed (16 rows of np floats, np a
// multiple of 16) so that sixteen scores are sixteen FMAs with the query's features in
// Z16-Z31, a row's softmax in ZMM lanes with the exponential of package vec's EXP16
// (same constants and steps: same bits), and the products with v, k and the key
// gradients as one broadcast FMA per key.

DATA attnc<>+0(SB)/4, $0x3fb8aa3b  // log2(e)
DATA attnc<>+4(SB)/4, $0x4b400000  // 1.5·2²³: adding it rounds to an integer
DATA attnc<>+8(SB)/4, $0x3f318000  // ln2, high part
DATA attnc<>+12(SB)/4, $0x395e8083 // ln2 - high part (subtracted: r = x - n·hi + n·lo)
DATA attnc<>+16(SB)/4, $0x39506967 // the polynomial of eʳ, highest degree first
DATA attnc<>+20(SB)/4, $0x3ab743ce
DATA attnc<>+24(SB)/4, $0x3c088908
DATA attnc<>+28(SB)/4, $0x3d2aa9c1
DATA attnc<>+32(SB)/4, $0x3e2aaaaa
DATA attnc<>+36(SB)/4, $0x3f000000
DATA attnc<>+40(SB)/4, $0x3f800000 // 1
DATA attnc<>+44(SB)/4, $0xc2aeac4f // expLo: below it eˣ flushes to 0
DATA attnc<>+48(SB)/4, $127        // the exponent bias
DATA attnc<>+52(SB)/4, $0xff800000 // -Inf
DATA attnc<>+56(SB)/4, $16         // lanes per block
DATA attnc<>+64(SB)/4, $0          // lane numbers 0-15
DATA attnc<>+68(SB)/4, $1
DATA attnc<>+72(SB)/4, $2
DATA attnc<>+76(SB)/4, $3
DATA attnc<>+80(SB)/4, $4
DATA attnc<>+84(SB)/4, $5
DATA attnc<>+88(SB)/4, $6
DATA attnc<>+92(SB)/4, $7
DATA attnc<>+96(SB)/4, $8
DATA attnc<>+100(SB)/4, $9
DATA attnc<>+104(SB)/4, $10
DATA attnc<>+108(SB)/4, $11
DATA attnc<>+112(SB)/4, $12
DATA attnc<>+116(SB)/4, $13
DATA attnc<>+120(SB)/4, $14
DATA attnc<>+124(SB)/4, $15
GLOBL attnc<>(SB), RODATA|NOPTR, $128

// EXP16 sets Z1 = e^Z0 (Z0 clamped in place), Z2-Z6 and K2 scratch: package vec's EXP16.
#define EXP16 \
	VCMPPS.BCST $0x1D, attnc<>+44(SB), Z0, K2; \
	VMAXPS.BCST attnc<>+44(SB), Z0, Z0; \
	VBROADCASTSS attnc<>+4(SB), Z1; \
	VFMADD231PS.BCST attnc<>+0(SB), Z0, Z1; \
	VSUBPS.BCST attnc<>+4(SB), Z1, Z1; \
	VMOVAPS Z0, Z2; \
	VFNMADD231PS.BCST attnc<>+8(SB), Z1, Z2; \
	VFMADD231PS.BCST attnc<>+12(SB), Z1, Z2; \
	VBROADCASTSS attnc<>+16(SB), Z3; \
	VFMADD213PS.BCST attnc<>+20(SB), Z2, Z3; \
	VFMADD213PS.BCST attnc<>+24(SB), Z2, Z3; \
	VFMADD213PS.BCST attnc<>+28(SB), Z2, Z3; \
	VFMADD213PS.BCST attnc<>+32(SB), Z2, Z3; \
	VFMADD213PS.BCST attnc<>+36(SB), Z2, Z3; \
	VMULPS Z2, Z2, Z4; \
	VADDPS.BCST attnc<>+40(SB), Z2, Z5; \
	VFMADD231PS Z4, Z3, Z5; \
	VCVTPS2DQ Z1, Z6; \
	VPADDD.BCST attnc<>+48(SB), Z6, Z6; \
	VPSLLD $23, Z6, Z6; \
	VMULPS Z6, Z5, Z1; \
	VMOVAPS.Z Z1, K2, Z1

// BCAST16 loads the 16 floats at p, each times Z15's lanes, broadcast into Z16-Z31.
#define BCAST16(p) \
	VMULPS.BCST 0(p), Z15, Z16; \
	VMULPS.BCST 4(p), Z15, Z17; \
	VMULPS.BCST 8(p), Z15, Z18; \
	VMULPS.BCST 12(p), Z15, Z19; \
	VMULPS.BCST 16(p), Z15, Z20; \
	VMULPS.BCST 20(p), Z15, Z21; \
	VMULPS.BCST 24(p), Z15, Z22; \
	VMULPS.BCST 28(p), Z15, Z23; \
	VMULPS.BCST 32(p), Z15, Z24; \
	VMULPS.BCST 36(p), Z15, Z25; \
	VMULPS.BCST 40(p), Z15, Z26; \
	VMULPS.BCST 44(p), Z15, Z27; \
	VMULPS.BCST 48(p), Z15, Z28; \
	VMULPS.BCST 52(p), Z15, Z29; \
	VMULPS.BCST 56(p), Z15, Z30; \
	VMULPS.BCST 60(p), Z15, Z31

// DOT16 sets Z0 = Σₑ Z(16+e)·row e of the 16 rows from R8, DX bytes apart (R9 = 3·DX),
// in four chains; R8 is moved on by 16 rows and Z7-Z10 are scratch.
#define DOT16 \
	VMULPS (R8), Z16, Z7; \
	VMULPS (R8)(DX*1), Z17, Z8; \
	VMULPS (R8)(DX*2), Z18, Z9; \
	VMULPS (R8)(R9*1), Z19, Z10; \
	LEAQ (R8)(DX*4), R8; \
	VFMADD231PS (R8), Z20, Z7; \
	VFMADD231PS (R8)(DX*1), Z21, Z8; \
	VFMADD231PS (R8)(DX*2), Z22, Z9; \
	VFMADD231PS (R8)(R9*1), Z23, Z10; \
	LEAQ (R8)(DX*4), R8; \
	VFMADD231PS (R8), Z24, Z7; \
	VFMADD231PS (R8)(DX*1), Z25, Z8; \
	VFMADD231PS (R8)(DX*2), Z26, Z9; \
	VFMADD231PS (R8)(R9*1), Z27, Z10; \
	LEAQ (R8)(DX*4), R8; \
	VFMADD231PS (R8), Z28, Z7; \
	VFMADD231PS (R8)(DX*1), Z29, Z8; \
	VFMADD231PS (R8)(DX*2), Z30, Z9; \
	VFMADD231PS (R8)(R9*1), Z31, Z10; \
	LEAQ (R8)(DX*4), R8; \
	VADDPS Z8, Z7, Z7; \
	VADDPS Z10, Z9, Z9; \
	VADDPS Z9, Z7, Z0

// HMAX sets every lane of z (y, x: its lower halves) to the largest of its lanes (Z1,
// Z2 scratch).
#define HMAX(z, y, x) \
	VEXTRACTF64X4 $1, z, Y1; \
	VMAXPS Y1, y, Y1; \
	VEXTRACTF128 $1, Y1, X2; \
	VMAXPS X2, X1, X1; \
	VPERMILPS $0x4E, X1, X2; \
	VMAXPS X2, X1, X1; \
	VPERMILPS $0xB1, X1, X2; \
	VMAXPS X2, X1, X1; \
	VBROADCASTSS X1, z

// HSUM sets X(r)'s low lane to the sum of Z(r)'s lanes (Z1, Z2 scratch).
#define HSUM(z, y, x) \
	VEXTRACTF64X4 $1, z, Y1; \
	VADDPS Y1, y, Y1; \
	VEXTRACTF128 $1, Y1, X2; \
	VADDPS X2, X1, X1; \
	VPERMILPS $0x4E, X1, X2; \
	VADDPS X2, X1, X1; \
	VPERMILPS $0xB1, X1, X2; \
	VADDPS X2, X1, x

// DOT16X4 sets Z16+r + Z20+r (even and odd features) to Σₑ q_r[e]·row e of the 16
// rows from R8 (DX bytes apart, R9 = 3·DX) for the four query rows r at SI, R13 bytes
// apart (R14 = 3·R13). R8 is moved on by 12 rows; Z0, Z1 scratch.
#define DOT16X4 \
	VMOVUPS (R8), Z0; \
	VMULPS.BCST 0(SI), Z0, Z16; \
	VMULPS.BCST 0(SI)(R13*1), Z0, Z17; \
	VMULPS.BCST 0(SI)(R13*2), Z0, Z18; \
	VMULPS.BCST 0(SI)(R14*1), Z0, Z19; \
	VMOVUPS (R8)(DX*1), Z1; \
	VMULPS.BCST 4(SI), Z1, Z20; \
	VMULPS.BCST 4(SI)(R13*1), Z1, Z21; \
	VMULPS.BCST 4(SI)(R13*2), Z1, Z22; \
	VMULPS.BCST 4(SI)(R14*1), Z1, Z23; \
	VMOVUPS (R8)(DX*2), Z0; \
	VFMADD231PS.BCST 8(SI), Z0, Z16; \
	VFMADD231PS.BCST 8(SI)(R13*1), Z0, Z17; \
	VFMADD231PS.BCST 8(SI)(R13*2), Z0, Z18; \
	VFMADD231PS.BCST 8(SI)(R14*1), Z0, Z19; \
	VMOVUPS (R8)(R9*1), Z1; \
	VFMADD231PS.BCST 12(SI), Z1, Z20; \
	VFMADD231PS.BCST 12(SI)(R13*1), Z1, Z21; \
	VFMADD231PS.BCST 12(SI)(R13*2), Z1, Z22; \
	VFMADD231PS.BCST 12(SI)(R14*1), Z1, Z23; \
	LEAQ (R8)(DX*4), R8; \
	VMOVUPS (R8), Z0; \
	VFMADD231PS.BCST 16(SI), Z0, Z16; \
	VFMADD231PS.BCST 16(SI)(R13*1), Z0, Z17; \
	VFMADD231PS.BCST 16(SI)(R13*2), Z0, Z18; \
	VFMADD231PS.BCST 16(SI)(R14*1), Z0, Z19; \
	VMOVUPS (R8)(DX*1), Z1; \
	VFMADD231PS.BCST 20(SI), Z1, Z20; \
	VFMADD231PS.BCST 20(SI)(R13*1), Z1, Z21; \
	VFMADD231PS.BCST 20(SI)(R13*2), Z1, Z22; \
	VFMADD231PS.BCST 20(SI)(R14*1), Z1, Z23; \
	VMOVUPS (R8)(DX*2), Z0; \
	VFMADD231PS.BCST 24(SI), Z0, Z16; \
	VFMADD231PS.BCST 24(SI)(R13*1), Z0, Z17; \
	VFMADD231PS.BCST 24(SI)(R13*2), Z0, Z18; \
	VFMADD231PS.BCST 24(SI)(R14*1), Z0, Z19; \
	VMOVUPS (R8)(R9*1), Z1; \
	VFMADD231PS.BCST 28(SI), Z1, Z20; \
	VFMADD231PS.BCST 28(SI)(R13*1), Z1, Z21; \
	VFMADD231PS.BCST 28(SI)(R13*2), Z1, Z22; \
	VFMADD231PS.BCST 28(SI)(R14*1), Z1, Z23; \
	LEAQ (R8)(DX*4), R8; \
	VMOVUPS (R8), Z0; \
	VFMADD231PS.BCST 32(SI), Z0, Z16; \
	VFMADD231PS.BCST 32(SI)(R13*1), Z0, Z17; \
	VFMADD231PS.BCST 32(SI)(R13*2), Z0, Z18; \
	VFMADD231PS.BCST 32(SI)(R14*1), Z0, Z19; \
	VMOVUPS (R8)(DX*1), Z1; \
	VFMADD231PS.BCST 36(SI), Z1, Z20; \
	VFMADD231PS.BCST 36(SI)(R13*1), Z1, Z21; \
	VFMADD231PS.BCST 36(SI)(R13*2), Z1, Z22; \
	VFMADD231PS.BCST 36(SI)(R14*1), Z1, Z23; \
	VMOVUPS (R8)(DX*2), Z0; \
	VFMADD231PS.BCST 40(SI), Z0, Z16; \
	VFMADD231PS.BCST 40(SI)(R13*1), Z0, Z17; \
	VFMADD231PS.BCST 40(SI)(R13*2), Z0, Z18; \
	VFMADD231PS.BCST 40(SI)(R14*1), Z0, Z19; \
	VMOVUPS (R8)(R9*1), Z1; \
	VFMADD231PS.BCST 44(SI), Z1, Z20; \
	VFMADD231PS.BCST 44(SI)(R13*1), Z1, Z21; \
	VFMADD231PS.BCST 44(SI)(R13*2), Z1, Z22; \
	VFMADD231PS.BCST 44(SI)(R14*1), Z1, Z23; \
	LEAQ (R8)(DX*4), R8; \
	VMOVUPS (R8), Z0; \
	VFMADD231PS.BCST 48(SI), Z0, Z16; \
	VFMADD231PS.BCST 48(SI)(R13*1), Z0, Z17; \
	VFMADD231PS.BCST 48(SI)(R13*2), Z0, Z18; \
	VFMADD231PS.BCST 48(SI)(R14*1), Z0, Z19; \
	VMOVUPS (R8)(DX*1), Z1; \
	VFMADD231PS.BCST 52(SI), Z1, Z20; \
	VFMADD231PS.BCST 52(SI)(R13*1), Z1, Z21; \
	VFMADD231PS.BCST 52(SI)(R13*2), Z1, Z22; \
	VFMADD231PS.BCST 52(SI)(R14*1), Z1, Z23; \
	VMOVUPS (R8)(DX*2), Z0; \
	VFMADD231PS.BCST 56(SI), Z0, Z16; \
	VFMADD231PS.BCST 56(SI)(R13*1), Z0, Z17; \
	VFMADD231PS.BCST 56(SI)(R13*2), Z0, Z18; \
	VFMADD231PS.BCST 56(SI)(R14*1), Z0, Z19; \
	VMOVUPS (R8)(R9*1), Z1; \
	VFMADD231PS.BCST 60(SI), Z1, Z20; \
	VFMADD231PS.BCST 60(SI)(R13*1), Z1, Z21; \
	VFMADD231PS.BCST 60(SI)(R13*2), Z1, Z22; \
	VFMADD231PS.BCST 60(SI)(R14*1), Z1, Z23

// ROWOUT finishes a block of one of four rows: the scores a + b times Z15, -Inf in the
// lanes from the row's key count (every lane of nreg) on, stored at addr, their maximum
// folded into mx and the non-finite check into Z11 (Z13: lane numbers; Z12: -Inf).
#define ROWOUT(a, b, nreg, mx, addr) \
	VADDPS b, a, a; \
	VMULPS Z15, a, a; \
	VPCMPGTD Z13, nreg, K1; \
	VMOVAPS Z12, Z1; \
	VMOVAPS a, K1, Z1; \
	VSUBPS a, a, Z2; \
	VADDPS Z2, Z11, K1, Z11; \
	VMOVUPS Z1, addr; \
	VMAXPS Z1, mx, mx

// EXPROW sets the block of one of four rows at addr to e^(s - mx) and adds it to sum.
#define EXPROW(mx, sum, addr) \
	VMOVUPS addr, Z0; \
	VSUBPS mx, Z0, Z0; \
	EXP16; \
	VMOVUPS Z1, addr; \
	VADDPS Z1, sum, sum

// INVSUM sets every lane of inv to 1 / the sum of z's lanes (Z0-Z2 scratch).
#define INVSUM(z, y, x, inv) \
	HSUM(z, y, x); \
	VMOVSS attnc<>+40(SB), X0; \
	VDIVSS x, X0, X0; \
	VBROADCASTSS X0, inv

// SCORES is the first pass of a row: with the scaled query in Z16-Z31, kt at R8 (rows
// DX bytes apart, R9 = 3·DX), CX visible keys and the scores to DI, it writes R12 (a
// multiple of 16, at least CX) scores, -Inf from key CX on, and leaves in BX = R12,
// the scores' maximum in every lane of Z15
// and in Z11 the sum of s - s over the visible scores: NaN where one is not finite.
// BX, R10, Z0-Z2, Z7-Z14 and K1 are scratch.
#define SCORES(loop) \
	VPBROADCASTD CX, Z14; \
	VMOVDQU32 attnc<>+64(SB), Z13; \
	VBROADCASTSS attnc<>+52(SB), Z12; \
	VMOVAPS Z12, Z15; \
	VPXORD Z11, Z11, Z11; \
	MOVQ R8, R10; \
	XORQ BX, BX; \
loop: \
	MOVQ R10, R8; \
	DOT16; \
	VPCMPGTD Z13, Z14, K1; \
	VMOVAPS Z12, Z1; \
	VMOVAPS Z0, K1, Z1; \
	VSUBPS Z0, Z0, Z2; \
	VADDPS Z2, Z11, K1, Z11; \
	VMOVUPS Z1, (DI)(BX*4); \
	VMAXPS Z1, Z15, Z15; \
	VPADDD.BCST attnc<>+56(SB), Z13, Z13; \
	ADDQ $64, R10; \
	ADDQ $16, BX; \
	CMPQ BX, R12; \
	JLT loop; \
	HMAX(Z15, Y15, X15)

// EXPSUM sets the BX scores at DI to e^(s - Z15) and leaves their sum in X7.
#define EXPSUM(loop) \
	VPXORD Z7, Z7, Z7; \
	XORQ AX, AX; \
loop: \
	VMOVUPS (DI)(AX*4), Z0; \
	VSUBPS Z15, Z0, Z0; \
	EXP16; \
	VMOVUPS Z1, (DI)(AX*4); \
	VADDPS Z1, Z7, Z7; \
	ADDQ $16, AX; \
	CMPQ AX, BX; \
	JLT loop; \
	HSUM(Z7, Y7, X7)

// TRANSPOSE16 transposes the 16×16 floats in Z0-Z15 (row r in Zr) in place, Z16-Z31
// scratch: unpacks of row pairs, shuffles of pairs of those into 4-float columns, then
// two rounds of 128-bit lane shuffles.
#define TRANSPOSE16 \
	VUNPCKLPS Z1, Z0, Z16; \
	VUNPCKHPS Z1, Z0, Z17; \
	VUNPCKLPS Z3, Z2, Z18; \
	VUNPCKHPS Z3, Z2, Z19; \
	VUNPCKLPS Z5, Z4, Z20; \
	VUNPCKHPS Z5, Z4, Z21; \
	VUNPCKLPS Z7, Z6, Z22; \
	VUNPCKHPS Z7, Z6, Z23; \
	VUNPCKLPS Z9, Z8, Z24; \
	VUNPCKHPS Z9, Z8, Z25; \
	VUNPCKLPS Z11, Z10, Z26; \
	VUNPCKHPS Z11, Z10, Z27; \
	VUNPCKLPS Z13, Z12, Z28; \
	VUNPCKHPS Z13, Z12, Z29; \
	VUNPCKLPS Z15, Z14, Z30; \
	VUNPCKHPS Z15, Z14, Z31; \
	VSHUFPS $0x44, Z18, Z16, Z0; \
	VSHUFPS $0xEE, Z18, Z16, Z1; \
	VSHUFPS $0x44, Z19, Z17, Z2; \
	VSHUFPS $0xEE, Z19, Z17, Z3; \
	VSHUFPS $0x44, Z22, Z20, Z4; \
	VSHUFPS $0xEE, Z22, Z20, Z5; \
	VSHUFPS $0x44, Z23, Z21, Z6; \
	VSHUFPS $0xEE, Z23, Z21, Z7; \
	VSHUFPS $0x44, Z26, Z24, Z8; \
	VSHUFPS $0xEE, Z26, Z24, Z9; \
	VSHUFPS $0x44, Z27, Z25, Z10; \
	VSHUFPS $0xEE, Z27, Z25, Z11; \
	VSHUFPS $0x44, Z30, Z28, Z12; \
	VSHUFPS $0xEE, Z30, Z28, Z13; \
	VSHUFPS $0x44, Z31, Z29, Z14; \
	VSHUFPS $0xEE, Z31, Z29, Z15; \
	VSHUFF32X4 $0x88, Z4, Z0, Z16; \
	VSHUFF32X4 $0xDD, Z4, Z0, Z20; \
	VSHUFF32X4 $0x88, Z12, Z8, Z24; \
	VSHUFF32X4 $0xDD, Z12, Z8, Z28; \
	VSHUFF32X4 $0x88, Z5, Z1, Z17; \
	VSHUFF32X4 $0xDD, Z5, Z1, Z21; \
	VSHUFF32X4 $0x88, Z13, Z9, Z25; \
	VSHUFF32X4 $0xDD, Z13, Z9, Z29; \
	VSHUFF32X4 $0x88, Z6, Z2, Z18; \
	VSHUFF32X4 $0xDD, Z6, Z2, Z22; \
	VSHUFF32X4 $0x88, Z14, Z10, Z26; \
	VSHUFF32X4 $0xDD, Z14, Z10, Z30; \
	VSHUFF32X4 $0x88, Z7, Z3, Z19; \
	VSHUFF32X4 $0xDD, Z7, Z3, Z23; \
	VSHUFF32X4 $0x88, Z15, Z11, Z27; \
	VSHUFF32X4 $0xDD, Z15, Z11, Z31; \
	VSHUFF32X4 $0x88, Z24, Z16, Z0; \
	VSHUFF32X4 $0xDD, Z24, Z16, Z8; \
	VSHUFF32X4 $0x88, Z25, Z17, Z1; \
	VSHUFF32X4 $0xDD, Z25, Z17, Z9; \
	VSHUFF32X4 $0x88, Z26, Z18, Z2; \
	VSHUFF32X4 $0xDD, Z26, Z18, Z10; \
	VSHUFF32X4 $0x88, Z27, Z19, Z3; \
	VSHUFF32X4 $0xDD, Z27, Z19, Z11; \
	VSHUFF32X4 $0x88, Z28, Z20, Z4; \
	VSHUFF32X4 $0xDD, Z28, Z20, Z12; \
	VSHUFF32X4 $0x88, Z29, Z21, Z5; \
	VSHUFF32X4 $0xDD, Z29, Z21, Z13; \
	VSHUFF32X4 $0x88, Z30, Z22, Z6; \
	VSHUFF32X4 $0xDD, Z30, Z22, Z14; \
	VSHUFF32X4 $0x88, Z31, Z23, Z7; \
	VSHUFF32X4 $0xDD, Z31, Z23, Z15

// func attnTranspose16(dst, src *float32, ld, blocks, np int)
//
// dst[e·np + j] = src[j·ld + e] for e < 16 and j < 16·blocks (blocks >= 1): each block
// of 16 rows loaded, transposed in registers, and stored as 16-float pieces of dst's rows.
TEXT ·attnTranspose16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), AX
	SHLQ $2, AX
	LEAQ (AX)(AX*2), BX
	MOVQ blocks+24(FP), CX
	MOVQ np+32(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R9
tblock:
	MOVQ SI, R8
	VMOVUPS (R8), Z0
	VMOVUPS (R8)(AX*1), Z1
	VMOVUPS (R8)(AX*2), Z2
	VMOVUPS (R8)(BX*1), Z3
	LEAQ (R8)(AX*4), R8
	VMOVUPS (R8), Z4
	VMOVUPS (R8)(AX*1), Z5
	VMOVUPS (R8)(AX*2), Z6
	VMOVUPS (R8)(BX*1), Z7
	LEAQ (R8)(AX*4), R8
	VMOVUPS (R8), Z8
	VMOVUPS (R8)(AX*1), Z9
	VMOVUPS (R8)(AX*2), Z10
	VMOVUPS (R8)(BX*1), Z11
	LEAQ (R8)(AX*4), R8
	VMOVUPS (R8), Z12
	VMOVUPS (R8)(AX*1), Z13
	VMOVUPS (R8)(AX*2), Z14
	VMOVUPS (R8)(BX*1), Z15
	TRANSPOSE16
	MOVQ DI, R8
	VMOVUPS Z0, (R8)
	VMOVUPS Z1, (R8)(DX*1)
	VMOVUPS Z2, (R8)(DX*2)
	VMOVUPS Z3, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Z4, (R8)
	VMOVUPS Z5, (R8)(DX*1)
	VMOVUPS Z6, (R8)(DX*2)
	VMOVUPS Z7, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Z8, (R8)
	VMOVUPS Z9, (R8)(DX*1)
	VMOVUPS Z10, (R8)(DX*2)
	VMOVUPS Z11, (R8)(R9*1)
	LEAQ (R8)(DX*4), R8
	VMOVUPS Z12, (R8)
	VMOVUPS Z13, (R8)(DX*1)
	VMOVUPS Z14, (R8)(DX*2)
	VMOVUPS Z15, (R8)(R9*1)
	LEAQ (SI)(AX*8), SI
	LEAQ (SI)(AX*8), SI
	ADDQ $64, DI
	DECQ CX
	JNZ tblock
	VZEROUPPER
	RET

// func attnRowFwd16(o, q, kt *float32, np int, v *float32, ldv, n int, scale float32, s *float32) bool
//
// o = softmax(scale·q ktᵀ over the first n keys) v for one query row: v's rows are ldv
// floats apart, s holds the row's scores (n rounded up to 16 floats). It reports false,
// leaving o unspecified, where a score is not finite: the caller then takes the general
// path, whose NaN and Inf rules it does not repeat.
TEXT ·attnRowFwd16(SB), NOSPLIT, $0-73
	MOVQ q+8(FP), SI
	MOVQ kt+16(FP), R8
	MOVQ np+24(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R9
	MOVQ n+48(FP), CX
	MOVQ s+64(FP), DI
	LEAQ 15(CX), R12
	ANDQ $-16, R12
	VBROADCASTSS scale+56(FP), Z15
	BCAST16(SI)
	SCORES(fscores)
	EXPSUM(fexp)
	VMOVSS attnc<>+40(SB), X0
	VDIVSS X7, X0, X0
	VBROADCASTSS X0, Z15 // 1/Σ
	// o = Σⱼ pⱼ·vⱼ in four chains, then /Σ.
	MOVQ v+32(FP), SI
	MOVQ ldv+40(FP), DX
	SHLQ $2, DX
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	XORQ AX, AX
	LEAQ -4(CX), BX
	LEAQ (DX)(DX*2), R9
fpv4:
	CMPQ AX, BX
	JGT fpv1
	VMOVUPS (SI), Z0
	VFMADD231PS.BCST (DI)(AX*4), Z0, Z7
	VMOVUPS (SI)(DX*1), Z1
	VFMADD231PS.BCST 4(DI)(AX*4), Z1, Z8
	VMOVUPS (SI)(DX*2), Z2
	VFMADD231PS.BCST 8(DI)(AX*4), Z2, Z9
	VMOVUPS (SI)(R9*1), Z3
	VFMADD231PS.BCST 12(DI)(AX*4), Z3, Z10
	LEAQ (SI)(DX*4), SI
	ADDQ $4, AX
	JMP fpv4
fpv1:
	CMPQ AX, CX
	JGE fpvdone
	VMOVUPS (SI), Z0
	VFMADD231PS.BCST (DI)(AX*4), Z0, Z7
	ADDQ DX, SI
	INCQ AX
	JMP fpv1
fpvdone:
	VADDPS Z8, Z7, Z7
	VADDPS Z10, Z9, Z9
	VADDPS Z9, Z7, Z7
	VMULPS Z15, Z7, Z7
	MOVQ o+0(FP), SI
	VMOVUPS Z7, (SI)
	VCMPPS $3, Z11, Z11, K1
	KORTESTW K1, K1
	SETEQ ret+72(FP)
	VZEROUPPER
	RET

// func attnRowsFwd16(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool
//
// attnRowFwd16 for four query rows at once (o's and q's rows ld floats apart, v's rows
// dense, row r seeing n_r keys, n3 the most; s holds 4 rows of np floats): their
// independent chains of maxima, exponentials and sums interleave, where one row alone
// waits on each, and each block of kt and each row of v is loaded once for the four.
TEXT ·attnRowsFwd16(SB), NOSPLIT, $0-97
	MOVQ q+8(FP), SI
	MOVQ ld+16(FP), R13
	SHLQ $2, R13
	LEAQ (R13)(R13*2), R14
	MOVQ kt+24(FP), R10
	MOVQ np+32(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R9
	MOVQ n3+72(FP), CX
	LEAQ 15(CX), R12
	ANDQ $-16, R12
	MOVQ s+88(FP), DI
	VBROADCASTSS scale+80(FP), Z15
	MOVQ n0+48(FP), AX
	VPBROADCASTD AX, Z24
	MOVQ n1+56(FP), AX
	VPBROADCASTD AX, Z25
	MOVQ n2+64(FP), AX
	VPBROADCASTD AX, Z26
	VPBROADCASTD CX, Z27
	VMOVDQU32 attnc<>+64(SB), Z13
	VBROADCASTSS attnc<>+52(SB), Z12
	VMOVAPS Z12, Z28
	VMOVAPS Z12, Z29
	VMOVAPS Z12, Z30
	VMOVAPS Z12, Z31
	VPXORD Z11, Z11, Z11
	MOVQ DI, BX
	XORQ AX, AX
r4scores:
	MOVQ R10, R8
	DOT16X4
	ROWOUT(Z16, Z20, Z24, Z28, (BX))
	ROWOUT(Z17, Z21, Z25, Z29, (BX)(DX*1))
	ROWOUT(Z18, Z22, Z26, Z30, (BX)(DX*2))
	ROWOUT(Z19, Z23, Z27, Z31, (BX)(R9*1))
	VPADDD.BCST attnc<>+56(SB), Z13, Z13
	ADDQ $64, R10
	ADDQ $64, BX
	ADDQ $16, AX
	CMPQ AX, R12
	JLT r4scores
	HMAX(Z28, Y28, X28)
	HMAX(Z29, Y29, X29)
	HMAX(Z30, Y30, X30)
	HMAX(Z31, Y31, X31)
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	MOVQ DI, BX
	XORQ AX, AX
r4exp:
	EXPROW(Z28, Z16, (BX))
	EXPROW(Z29, Z17, (BX)(DX*1))
	EXPROW(Z30, Z18, (BX)(DX*2))
	EXPROW(Z31, Z19, (BX)(R9*1))
	ADDQ $64, BX
	ADDQ $16, AX
	CMPQ AX, R12
	JLT r4exp
	INVSUM(Z16, Y16, X16, Z20)
	INVSUM(Z17, Y17, X17, Z21)
	INVSUM(Z18, Y18, X18, Z22)
	INVSUM(Z19, Y19, X19, Z23)
	// o_r = Σⱼ p_r[j]·vⱼ, keys in pairs (two chains per row), then /Σ.
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	MOVQ v+40(FP), R8
	MOVQ DI, R10
	SUBQ $2, CX
	JLT r4one
r4pair:
	VMOVUPS (R8), Z0
	VMOVUPS 64(R8), Z1
	VFMADD231PS.BCST (R10), Z0, Z24
	VFMADD231PS.BCST (R10)(DX*1), Z0, Z25
	VFMADD231PS.BCST (R10)(DX*2), Z0, Z26
	VFMADD231PS.BCST (R10)(R9*1), Z0, Z27
	VFMADD231PS.BCST 4(R10), Z1, Z28
	VFMADD231PS.BCST 4(R10)(DX*1), Z1, Z29
	VFMADD231PS.BCST 4(R10)(DX*2), Z1, Z30
	VFMADD231PS.BCST 4(R10)(R9*1), Z1, Z31
	ADDQ $128, R8
	ADDQ $8, R10
	SUBQ $2, CX
	JGE r4pair
r4one:
	CMPQ CX, $-1
	JNE r4done
	VMOVUPS (R8), Z0
	VFMADD231PS.BCST (R10), Z0, Z24
	VFMADD231PS.BCST (R10)(DX*1), Z0, Z25
	VFMADD231PS.BCST (R10)(DX*2), Z0, Z26
	VFMADD231PS.BCST (R10)(R9*1), Z0, Z27
r4done:
	MOVQ o+0(FP), SI
	VADDPS Z28, Z24, Z24
	VMULPS Z20, Z24, Z24
	VMOVUPS Z24, (SI)
	VADDPS Z29, Z25, Z25
	VMULPS Z21, Z25, Z25
	VMOVUPS Z25, (SI)(R13*1)
	VADDPS Z30, Z26, Z26
	VMULPS Z22, Z26, Z26
	VMOVUPS Z26, (SI)(R13*2)
	VADDPS Z31, Z27, Z27
	VMULPS Z23, Z27, Z27
	VMOVUPS Z27, (SI)(R14*1)
	VCMPPS $3, Z11, Z11, K1
	KORTESTW K1, K1
	SETEQ ret+96(FP)
	VZEROUPPER
	RET

// func attnRowGrad16(q, gy, o, kt, vt *float32, np, n, nb int, scale float32, s, ds *float32) (m, l, delta float32, ok bool)
//
// The first half of one query row of the fused backward: the scores of the first n keys
// (kt, vt: k and v transposed, np-float rows), their maximum m and the sum l of
// e^(s - m) (returned: the row's log-sum-exp is m + log l), δ = gy·o (returned), and
// for nb blocks of 16 keys the probabilities p into s and ∂S = p·(gy·v - δ) into ds
// (both 0 from key n on). ok is false where a score is not finite, as attnRowFwd16's.
TEXT ·attnRowGrad16(SB), NOSPLIT, $0-101
	MOVQ q+0(FP), SI
	MOVQ kt+24(FP), R8
	MOVQ np+40(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R9
	MOVQ n+48(FP), CX
	MOVQ nb+56(FP), R12
	SHLQ $4, R12
	MOVQ s+72(FP), DI
	VBROADCASTSS scale+64(FP), Z15
	BCAST16(SI)
	SCORES(gscores)
	VMOVSS X15, m+88(FP)
	EXPSUM(gexp)
	VMOVSS X7, l+92(FP)
	VMOVSS attnc<>+40(SB), X0
	VDIVSS X7, X0, X0
	VBROADCASTSS X0, Z14 // 1/Σ
	// δ = gy·o.
	MOVQ gy+8(FP), SI
	MOVQ o+16(FP), AX
	VMOVUPS (SI), Z0
	VMULPS (AX), Z0, Z13
	HSUM(Z13, Y13, X13)
	VMOVSS X13, delta+96(FP)
	VBROADCASTSS X13, Z13
	// p = e/Σ and ∂S = p·(gy·vt - δ), a block of 16 keys at a time.
	VBROADCASTSS attnc<>+40(SB), Z15
	BCAST16(SI)
	MOVQ vt+32(FP), R10
	MOVQ ds+80(FP), R11
	XORQ AX, AX
gds:
	MOVQ R10, R8
	DOT16
	VSUBPS Z13, Z0, Z0
	VMULPS (DI)(AX*4), Z14, Z1
	VMOVUPS Z1, (DI)(AX*4)
	VMULPS Z1, Z0, Z0
	VMOVUPS Z0, (R11)(AX*4)
	ADDQ $64, R10
	ADDQ $16, AX
	CMPQ AX, BX
	JLT gds
	VCMPPS $3, Z11, Z11, K1
	KORTESTW K1, K1
	SETEQ ok+100(FP)
	VZEROUPPER
	RET

// GROW finishes a block of one of four rows in attnRowsGrad16: dp = a + b, the
// probabilities p = e·inv over the exponentials at saddr (stored back), and
// ∂S = p·(dp - δ) to dsaddr.
#define GROW(a, b, delta, inv, saddr, dsaddr) \
	VADDPS b, a, a; \
	VSUBPS delta, a, a; \
	VMULPS saddr, inv, Z1; \
	VMOVUPS Z1, saddr; \
	VMULPS Z1, a, a; \
	VMOVUPS a, dsaddr

// func attnRowsGrad16(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32) bool
//
// attnRowGrad16 for four query rows at once (q's, gy's and o's rows ld floats apart,
// row r seeing n_r keys, n3 the most; s and ds hold 4 rows of np floats each), as
// attnRowsFwd16 is attnRowFwd16's: st receives the rows' maxima m, sums l and δ.
TEXT ·attnRowsGrad16(SB), NOSPLIT, $0-121
	MOVQ q+0(FP), SI
	MOVQ ld+24(FP), R13
	SHLQ $2, R13
	LEAQ (R13)(R13*2), R14
	MOVQ kt+32(FP), R10
	MOVQ np+48(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R9
	MOVQ n3+80(FP), CX
	LEAQ 15(CX), R12
	ANDQ $-16, R12
	MOVQ s+96(FP), DI
	VBROADCASTSS scale+88(FP), Z15
	MOVQ n0+56(FP), AX
	VPBROADCASTD AX, Z24
	MOVQ n1+64(FP), AX
	VPBROADCASTD AX, Z25
	MOVQ n2+72(FP), AX
	VPBROADCASTD AX, Z26
	VPBROADCASTD CX, Z27
	VMOVDQU32 attnc<>+64(SB), Z13
	VBROADCASTSS attnc<>+52(SB), Z12
	VMOVAPS Z12, Z28
	VMOVAPS Z12, Z29
	VMOVAPS Z12, Z30
	VMOVAPS Z12, Z31
	VPXORD Z11, Z11, Z11
	MOVQ DI, BX
	XORQ AX, AX
g4scores:
	MOVQ R10, R8
	DOT16X4
	ROWOUT(Z16, Z20, Z24, Z28, (BX))
	ROWOUT(Z17, Z21, Z25, Z29, (BX)(DX*1))
	ROWOUT(Z18, Z22, Z26, Z30, (BX)(DX*2))
	ROWOUT(Z19, Z23, Z27, Z31, (BX)(R9*1))
	VPADDD.BCST attnc<>+56(SB), Z13, Z13
	ADDQ $64, R10
	ADDQ $64, BX
	ADDQ $16, AX
	CMPQ AX, R12
	JLT g4scores
	HMAX(Z28, Y28, X28)
	HMAX(Z29, Y29, X29)
	HMAX(Z30, Y30, X30)
	HMAX(Z31, Y31, X31)
	MOVQ st+112(FP), R11
	VMOVSS X28, 0(R11)
	VMOVSS X29, 4(R11)
	VMOVSS X30, 8(R11)
	VMOVSS X31, 12(R11)
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	MOVQ DI, BX
	XORQ AX, AX
g4exp:
	EXPROW(Z28, Z16, (BX))
	EXPROW(Z29, Z17, (BX)(DX*1))
	EXPROW(Z30, Z18, (BX)(DX*2))
	EXPROW(Z31, Z19, (BX)(R9*1))
	ADDQ $64, BX
	ADDQ $16, AX
	CMPQ AX, R12
	JLT g4exp
	INVSUM(Z16, Y16, X16, Z28)
	INVSUM(Z17, Y17, X17, Z29)
	INVSUM(Z18, Y18, X18, Z30)
	INVSUM(Z19, Y19, X19, Z31)
	VMOVSS X16, 16(R11)
	VMOVSS X17, 20(R11)
	VMOVSS X18, 24(R11)
	VMOVSS X19, 28(R11)
	// δ_r = gy_r·o_r.
	MOVQ gy+8(FP), SI
	MOVQ o+16(FP), R10
	VMOVUPS (SI), Z0
	VMULPS (R10), Z0, Z24
	HSUM(Z24, Y24, X24)
	VBROADCASTSS X24, Z24
	VMOVUPS (SI)(R13*1), Z0
	VMULPS (R10)(R13*1), Z0, Z25
	HSUM(Z25, Y25, X25)
	VBROADCASTSS X25, Z25
	VMOVUPS (SI)(R13*2), Z0
	VMULPS (R10)(R13*2), Z0, Z26
	HSUM(Z26, Y26, X26)
	VBROADCASTSS X26, Z26
	VMOVUPS (SI)(R14*1), Z0
	VMULPS (R10)(R14*1), Z0, Z27
	HSUM(Z27, Y27, X27)
	VBROADCASTSS X27, Z27
	VMOVSS X24, 32(R11)
	VMOVSS X25, 36(R11)
	VMOVSS X26, 40(R11)
	VMOVSS X27, 44(R11)
	// p = e/Σ and ∂S = p·(gy·vt - δ), a block of 16 keys at a time.
	MOVQ vt+40(FP), R10
	MOVQ ds+104(FP), R11
	MOVQ DI, BX
	XORQ AX, AX
g4ds:
	MOVQ R10, R8
	DOT16X4
	GROW(Z16, Z20, Z24, Z28, (BX), (R11))
	GROW(Z17, Z21, Z25, Z29, (BX)(DX*1), (R11)(DX*1))
	GROW(Z18, Z22, Z26, Z30, (BX)(DX*2), (R11)(DX*2))
	GROW(Z19, Z23, Z27, Z31, (BX)(R9*1), (R11)(R9*1))
	ADDQ $64, R10
	ADDQ $64, BX
	ADDQ $64, R11
	ADDQ $16, AX
	CMPQ AX, R12
	JLT g4ds
	VCMPPS $3, Z11, Z11, K1
	KORTESTW K1, K1
	SETEQ ret+120(FP)
	VZEROUPPER
	RET

// KEYGRAD adds key j's terms of four query rows: dq rows (Z24+o..Z27+o, o = 0 or 4)
// += ∂S·kⱼ, and ∂kⱼ += scale·Σ ∂S·q, ∂vⱼ += Σ p·gy into dkv's row at R8, with kⱼ at SI,
// the rows' p at R10 and ∂S at R11 (each DX bytes apart, R9 = 3·DX), scale·q in
// Z16-Z19 and gy in Z20-Z23. Z0-Z6 are scratch.
#define KEYGRAD(a0, a1, a2, a3) \
	VMOVUPS (SI), Z0; \
	VMOVUPS (R8), Z1; \
	VMOVUPS 64(R8), Z2; \
	VBROADCASTSS (R11), Z3; \
	VBROADCASTSS (R11)(DX*1), Z4; \
	VBROADCASTSS (R11)(DX*2), Z5; \
	VBROADCASTSS (R11)(R9*1), Z6; \
	VFMADD231PS Z3, Z0, a0; \
	VFMADD231PS Z4, Z0, a1; \
	VFMADD231PS Z5, Z0, a2; \
	VFMADD231PS Z6, Z0, a3; \
	VMULPS Z3, Z16, Z3; \
	VFMADD231PS Z4, Z17, Z3; \
	VMULPS Z5, Z18, Z5; \
	VFMADD231PS Z6, Z19, Z5; \
	VADDPS Z5, Z3, Z3; \
	VADDPS Z3, Z1, Z1; \
	VFMADD231PS.BCST (R10), Z20, Z2; \
	VFMADD231PS.BCST (R10)(DX*1), Z21, Z2; \
	VFMADD231PS.BCST (R10)(DX*2), Z22, Z2; \
	VFMADD231PS.BCST (R10)(R9*1), Z23, Z2; \
	VMOVUPS Z1, (R8); \
	VMOVUPS Z2, 64(R8)

// func attnKeysGrad16(rows *attnQuad, p, ds *float32, np int, k *float32, ldk int, dkv *float32, lddkv, n int, scale float32)
//
// The second half of four query rows of the fused backward (their first halves by
// attnRowGrad16 left p and ∂S in rows of np floats at p and ds): dq of each row
// (rows.dq) = scale·Σⱼ ∂Sⱼ kⱼ over the first n keys (k's rows ldk floats apart), and
// every key j < n's share of ∂kⱼ (scale·Σ ∂Sⱼ q) and ∂vⱼ (Σ pⱼ gy) added into dkv's row j
// (lddkv floats apart; ∂k in its first 16 floats, ∂v in the next 16). A row that sees
// fewer keys has zeros in p and ∂S past them.
TEXT ·attnKeysGrad16(SB), NOSPLIT, $0-76
	MOVQ rows+0(FP), AX
	VBROADCASTSS scale+72(FP), Z15
	MOVQ 0(AX), R12
	VMULPS (R12), Z15, Z16
	MOVQ 8(AX), R12
	VMULPS (R12), Z15, Z17
	MOVQ 16(AX), R12
	VMULPS (R12), Z15, Z18
	MOVQ 24(AX), R12
	VMULPS (R12), Z15, Z19
	MOVQ 32(AX), R12
	VMOVUPS (R12), Z20
	MOVQ 40(AX), R12
	VMOVUPS (R12), Z21
	MOVQ 48(AX), R12
	VMOVUPS (R12), Z22
	MOVQ 56(AX), R12
	VMOVUPS (R12), Z23
	MOVQ p+8(FP), R10
	MOVQ ds+16(FP), R11
	MOVQ np+24(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), R9
	MOVQ k+32(FP), SI
	MOVQ ldk+40(FP), BX
	SHLQ $2, BX
	MOVQ dkv+48(FP), R8
	MOVQ lddkv+56(FP), R13
	SHLQ $2, R13
	MOVQ n+64(FP), CX
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31
	// Keys in pairs, the second one's dq terms in Z28-Z31: two chains per row.
	SUBQ $2, CX
	JLT kone
kpair:
	KEYGRAD(Z24, Z25, Z26, Z27)
	ADDQ BX, SI
	ADDQ R13, R8
	ADDQ $4, R10
	ADDQ $4, R11
	KEYGRAD(Z28, Z29, Z30, Z31)
	ADDQ BX, SI
	ADDQ R13, R8
	ADDQ $4, R10
	ADDQ $4, R11
	SUBQ $2, CX
	JGE kpair
kone:
	CMPQ CX, $-1
	JNE kdone
	KEYGRAD(Z24, Z25, Z26, Z27)
kdone:
	VADDPS Z28, Z24, Z24
	VADDPS Z29, Z25, Z25
	VADDPS Z30, Z26, Z26
	VADDPS Z31, Z27, Z27
	MOVQ 64(AX), R12
	VMULPS Z15, Z24, Z24
	VMOVUPS Z24, (R12)
	MOVQ 72(AX), R12
	VMULPS Z15, Z25, Z25
	VMOVUPS Z25, (R12)
	MOVQ 80(AX), R12
	VMULPS Z15, Z26, Z26
	VMOVUPS Z26, (R12)
	MOVQ 88(AX), R12
	VMULPS Z15, Z27, Z27
	VMOVUPS Z27, (R12)
	VZEROUPPER
	RET

// func attnCopyRows(dst *float32, ldd int, src *float32, lds, rows, w int)
//
// Copies rows rows of w floats (w = 16 or 32) from src (lds floats apart) to dst (ldd
// apart): a ZMM or two per row, where copy's memmove call costs more than the move.
TEXT ·attnCopyRows(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), DX
	SHLQ $2, DX
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), BX
	SHLQ $2, BX
	MOVQ rows+32(FP), CX
	TESTQ CX, CX
	JZ cdone
	CMPQ w+40(FP), $16
	JNE c32
c16:
	VMOVUPS (SI), Z0
	VMOVUPS Z0, (DI)
	ADDQ BX, SI
	ADDQ DX, DI
	DECQ CX
	JNZ c16
	JMP cdone
c32:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ BX, SI
	ADDQ DX, DI
	DECQ CX
	JNZ c32
cdone:
	VZEROUPPER
	RET
