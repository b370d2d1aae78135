#include "textflag.h"
#include "exp_amd64.h"

// The AVX-512 rows of attention with 16 features per head, and 32 or 64 in chunks of 16
// (runtime/cpu's kernels_attention16.go): four query rows per call against keys held
// transposed (16 rows of np floats per chunk, np a multiple of 16) so that sixteen scores of a row are sixteen
// FMAs with the row's features broadcast, a row's softmax in ZMM lanes with EXP16
// (exp_amd64.h, that of vec's exponentials), and the products with v, k and the key
// gradients as one broadcast FMA per key.

// The four-row kernels start at a multiple of 64 bytes (PCALIGN $64; Go aligns
// functions to 32), so that their loops sit the same way in every build and timings of
// two builds compare the same code. (On the H200 host's Xeon, copies of AttnRowsFwd16 at
// 0 and at 32 bytes past a multiple of 64, with vec's constants or a compact table of
// their own, ran within the noise of each other in one binary.)

// The lane numbers 0-15, then 16 (lanes per block).
DATA lanes<>+0(SB)/4, $0
DATA lanes<>+4(SB)/4, $1
DATA lanes<>+8(SB)/4, $2
DATA lanes<>+12(SB)/4, $3
DATA lanes<>+16(SB)/4, $4
DATA lanes<>+20(SB)/4, $5
DATA lanes<>+24(SB)/4, $6
DATA lanes<>+28(SB)/4, $7
DATA lanes<>+32(SB)/4, $8
DATA lanes<>+36(SB)/4, $9
DATA lanes<>+40(SB)/4, $10
DATA lanes<>+44(SB)/4, $11
DATA lanes<>+48(SB)/4, $12
DATA lanes<>+52(SB)/4, $13
DATA lanes<>+56(SB)/4, $14
DATA lanes<>+60(SB)/4, $15
DATA lanes<>+64(SB)/4, $16
GLOBL lanes<>(SB), RODATA|NOPTR, $68

// HREDUCE sets x to op folded over z's lanes (y: z's lower half), through Y1, X1 and
// X2.
#define HREDUCE(op, z, y, x) \
	VEXTRACTF64X4 $1, z, Y1; \
	op Y1, y, Y1; \
	VEXTRACTF128 $1, Y1, X2; \
	op X2, X1, X1; \
	VPERMILPS $0x4E, X1, X2; \
	op X2, X1, X1; \
	VPERMILPS $0xB1, X1, X2; \
	op X2, X1, x

// HMAX sets every lane of z (y: its lower half) to the largest of its lanes (Z1, Z2
// scratch).
#define HMAX(z, y) \
	HREDUCE(VMAXPS, z, y, X1); \
	VBROADCASTSS X1, z

// HSUM sets x's low lane to the sum of z's lanes (y: z's lower half; Z1, Z2 scratch).
#define HSUM(z, y, x) HREDUCE(VADDPS, z, y, x)

// QROWS4 does op with feature off/4 of each of the four query rows at SI (R13 bytes
// apart, R14 = 3·R13) broadcast, against k, into a, b, c and d.
#define QROWS4(op, off, k, a, b, c, d) \
	op off(SI), k, a; \
	op off(SI)(R13*1), k, b; \
	op off(SI)(R13*2), k, c; \
	op off(SI)(R14*1), k, d

// KEYS4 takes four features of the four query rows (at byte offsets f0-f3 of each) against
// the four key rows at R8 (DX bytes apart, R9 = 3·DX): even features into Z16-Z19, odd
// ones into Z20-Z23, opa for the first two (VMULPS.BCST starts the sums), FMAs after.
#define KEYS4(opa, f0, f1, f2, f3) \
	VMOVUPS (R8), Z0; \
	QROWS4(opa, f0, Z0, Z16, Z17, Z18, Z19); \
	VMOVUPS (R8)(DX*1), Z1; \
	QROWS4(opa, f1, Z1, Z20, Z21, Z22, Z23); \
	VMOVUPS (R8)(DX*2), Z0; \
	QROWS4(VFMADD231PS.BCST, f2, Z0, Z16, Z17, Z18, Z19); \
	VMOVUPS (R8)(R9*1), Z1; \
	QROWS4(VFMADD231PS.BCST, f3, Z1, Z20, Z21, Z22, Z23)

// DOT16X4 sets Z16+r + Z20+r (even and odd features) to Σₑ q_r[e]·row e of the 16
// rows from R8 (DX bytes apart, R9 = 3·DX) for the four query rows r at SI, R13 bytes
// apart (R14 = 3·R13). R8 is moved on by 12 rows; Z0, Z1 scratch.
#define DOT16X4 DOT16ROWS(VMULPS.BCST)

// DOT16ROWS is DOT16X4 with opa for the first two KEYS4 ops (see KEYS4).
#define DOT16ROWS(opa) \
	KEYS4(opa, 0, 4, 8, 12); \
	LEAQ (R8)(DX*4), R8; \
	KEYS4(VFMADD231PS.BCST, 16, 20, 24, 28); \
	LEAQ (R8)(DX*4), R8; \
	KEYS4(VFMADD231PS.BCST, 32, 36, 40, 44); \
	LEAQ (R8)(DX*4), R8; \
	KEYS4(VFMADD231PS.BCST, 48, 52, 56, 60)

// DOTN is DOT16X4 for rows of 16·chunks features (the memory operand chunks): the sums
// start at zero and each chunk of 16 features adds its 16 rows from R8 (R8 ends 16·chunks
// rows on) and its features from SI (restored). CX is scratch.
#define DOTN(chunk, chunks) \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	VPXORD Z20, Z20, Z20; \
	VPXORD Z21, Z21, Z21; \
	VPXORD Z22, Z22, Z22; \
	VPXORD Z23, Z23, Z23; \
	MOVQ chunks, CX; \
chunk: \
	DOT16ROWS(VFMADD231PS.BCST); \
	LEAQ (R8)(DX*4), R8; \
	ADDQ $64, SI; \
	DECQ CX; \
	JNZ chunk; \
	MOVQ chunks, CX; \
	SHLQ $6, CX; \
	SUBQ CX, SI

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
	VMOVSS consts<>+320(SB), X0; \
	VDIVSS x, X0, X0; \
	VBROADCASTSS X0, inv

// INVSUM4 sets every lane of a, b, c and d to 1 / the sum of the lanes of Z16, Z17,
// Z18 and Z19 (Z0-Z2 scratch).
#define INVSUM4(a, b, c, d) \
	INVSUM(Z16, Y16, X16, a); \
	INVSUM(Z17, Y17, X17, b); \
	INVSUM(Z18, Y18, X18, c); \
	INVSUM(Z19, Y19, X19, d)

// STORE4SS stores the low lanes of a, b, c and d at off, off+4, off+8 and off+12 bytes
// from R11.
#define STORE4SS(a, b, c, d, off) \
	VMOVSS a, off(R11); \
	VMOVSS b, (off+4)(R11); \
	VMOVSS c, (off+8)(R11); \
	VMOVSS d, (off+12)(R11)

// GRADSTATS follows the score pass of the rows-grad kernels: it stores the rows' maxima
// (Z28-Z31) into st[0:4], forms the exponentials (EXPSUM4) and stores their sums into
// st[4:8], leaving R11 = st and 1/Σ in every lane of Z28-Z31.
#define GRADSTATS(exploop) \
	MOVQ st+112(FP), R11; \
	STORE4SS(X28, X29, X30, X31, 0); \
	EXPSUM4(exploop); \
	INVSUM4(Z28, Z29, Z30, Z31); \
	STORE4SS(X16, X17, X18, X19, 16)

// FINITE sets the bool at ret to whether Z11 (the sum of s - s over the scores) is not
// NaN: whether every score was finite.
#define FINITE(ret) \
	VCMPPS $3, Z11, Z11, K1; \
	KORTESTW K1, K1; \
	SETEQ ret

// ROWS4ARGS loads the arguments both four-row kernels take: the query rows to SI (R13
// bytes apart, R14 = 3·R13), kt to R10 (rows DX bytes apart, R9 = 3·DX), the most keys
// n3 to CX and rounded up to a block of 16 to R12, the scores s to DI, scale to every
// lane of Z15 and n0-n2 to every lane of Z24-Z26.
#define ROWS4ARGS(q, ld, kt, np, n0, n1, n2, n3, scale, s) \
	MOVQ q, SI; \
	MOVQ ld, R13; \
	SHLQ $2, R13; \
	LEAQ (R13)(R13*2), R14; \
	MOVQ kt, R10; \
	MOVQ np, DX; \
	SHLQ $2, DX; \
	LEAQ (DX)(DX*2), R9; \
	MOVQ n3, CX; \
	LEAQ 15(CX), R12; \
	ANDQ $-16, R12; \
	MOVQ s, DI; \
	VBROADCASTSS scale, Z15; \
	MOVQ n0, AX; \
	VPBROADCASTD AX, Z24; \
	MOVQ n1, AX; \
	VPBROADCASTD AX, Z25; \
	MOVQ n2, AX; \
	VPBROADCASTD AX, Z26

// SCORES4 is the first pass of four rows, as ROWS4ARGS left the registers: it writes
// R12 scores of each row (rows DX bytes apart from DI), -Inf from the row's key count
// on, and leaves each row's maximum in every lane of Z28-Z31 and in Z11 the sum of
// s - s over the visible scores: NaN where one is not finite. AX, BX, R8, R10, Z0-Z2,
// Z12, Z13, Z16-Z23 and K1 are scratch; Z27 gets n3.
#define SCORES4(loop) \
	SCORESPRE; \
loop: \
	MOVQ R10, R8; \
	DOT16X4; \
	SCORESPOST(loop)

// SCORESN is SCORES4 for rows of 16·chunks features (kt then has 16·chunks rows); CX is
// scratch too.
#define SCORESN(loop, chunk, chunks) \
	SCORESPRE; \
loop: \
	MOVQ R10, R8; \
	DOTN(chunk, chunks); \
	SCORESPOST(loop)

// SCORESPRE and SCORESPOST are what SCORES4 and SCORESN do before and after each
// block's dot products.
#define SCORESPRE \
	VPBROADCASTD CX, Z27; \
	VMOVDQU32 lanes<>+0(SB), Z13; \
	VBROADCASTSS consts<>+480(SB), Z12; \
	VMOVAPS Z12, Z28; \
	VMOVAPS Z12, Z29; \
	VMOVAPS Z12, Z30; \
	VMOVAPS Z12, Z31; \
	VPXORD Z11, Z11, Z11; \
	MOVQ DI, BX; \
	XORQ AX, AX

#define SCORESPOST(loop) \
	ROWOUT(Z16, Z20, Z24, Z28, (BX)); \
	ROWOUT(Z17, Z21, Z25, Z29, (BX)(DX*1)); \
	ROWOUT(Z18, Z22, Z26, Z30, (BX)(DX*2)); \
	ROWOUT(Z19, Z23, Z27, Z31, (BX)(R9*1)); \
	VPADDD.BCST lanes<>+64(SB), Z13, Z13; \
	ADDQ $64, R10; \
	ADDQ $64, BX; \
	ADDQ $16, AX; \
	CMPQ AX, R12; \
	JLT loop; \
	HMAX(Z28, Y28); \
	HMAX(Z29, Y29); \
	HMAX(Z30, Y30); \
	HMAX(Z31, Y31)

// EXPSUM4 sets the R12 scores of each of four rows at DI (DX bytes apart) to e^(s - m),
// m its row's maximum in Z28-Z31, and leaves each row's sums by lane in Z16-Z19.
#define EXPSUM4(loop) \
	VPXORD Z16, Z16, Z16; \
	VPXORD Z17, Z17, Z17; \
	VPXORD Z18, Z18, Z18; \
	VPXORD Z19, Z19, Z19; \
	MOVQ DI, BX; \
	XORQ AX, AX; \
loop: \
	EXPROW(Z28, Z16, (BX)); \
	EXPROW(Z29, Z17, (BX)(DX*1)); \
	EXPROW(Z30, Z18, (BX)(DX*2)); \
	EXPROW(Z31, Z19, (BX)(R9*1)); \
	ADDQ $64, BX; \
	ADDQ $16, AX; \
	CMPQ AX, R12; \
	JLT loop

// ZERO24TO31 zeros Z24-Z31: two chains of sums for each of four rows.
#define ZERO24TO31 \
	VPXORD Z24, Z24, Z24; \
	VPXORD Z25, Z25, Z25; \
	VPXORD Z26, Z26, Z26; \
	VPXORD Z27, Z27, Z27; \
	VPXORD Z28, Z28, Z28; \
	VPXORD Z29, Z29, Z29; \
	VPXORD Z30, Z30, Z30; \
	VPXORD Z31, Z31, Z31

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

// LOAD4 loads the rows at R8 (AX bytes apart, BX = 3·AX) into a, b, c and d.
#define LOAD4(a, b, c, d) \
	VMOVUPS (R8), a; \
	VMOVUPS (R8)(AX*1), b; \
	VMOVUPS (R8)(AX*2), c; \
	VMOVUPS (R8)(BX*1), d

// STORE4 stores a, b, c and d into the rows at R8 (DX bytes apart, R9 = 3·DX).
#define STORE4(a, b, c, d) \
	VMOVUPS a, (R8); \
	VMOVUPS b, (R8)(DX*1); \
	VMOVUPS c, (R8)(DX*2); \
	VMOVUPS d, (R8)(R9*1)

// func AttnTranspose16(dst, src *float32, ld, blocks, np int)
//
// dst[e·np + j] = src[j·ld + e] for e < 16 and j < 16·blocks (blocks >= 1): each block
// of 16 rows loaded, transposed in registers, and stored as 16-float pieces of dst's rows.
TEXT ·AttnTranspose16(SB), NOSPLIT, $0-40
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
	LOAD4(Z0, Z1, Z2, Z3)
	LEAQ (R8)(AX*4), R8
	LOAD4(Z4, Z5, Z6, Z7)
	LEAQ (R8)(AX*4), R8
	LOAD4(Z8, Z9, Z10, Z11)
	LEAQ (R8)(AX*4), R8
	LOAD4(Z12, Z13, Z14, Z15)
	TRANSPOSE16
	MOVQ DI, R8
	STORE4(Z0, Z1, Z2, Z3)
	LEAQ (R8)(DX*4), R8
	STORE4(Z4, Z5, Z6, Z7)
	LEAQ (R8)(DX*4), R8
	STORE4(Z8, Z9, Z10, Z11)
	LEAQ (R8)(DX*4), R8
	STORE4(Z12, Z13, Z14, Z15)
	LEAQ (SI)(AX*8), SI
	LEAQ (SI)(AX*8), SI
	ADDQ $64, DI
	DECQ CX
	JNZ tblock
	VZEROUPPER
	RET

// PV4 adds p_r[j]·vⱼ for the CX keys from R8 (v2: the next key's row, vstep: what
// moves R8 on by two keys) and the four rows' probabilities at R10 (DX bytes apart) into
// Z24-Z27 (even keys) and Z28-Z31 (odd ones); Z0, Z1 scratch, CX ends negative.
#define PV4(pair, one, done, v2, vstep) \
	SUBQ $2, CX; \
	JLT one; \
pair: \
	VMOVUPS (R8), Z0; \
	VMOVUPS v2, Z1; \
	VFMADD231PS.BCST (R10), Z0, Z24; \
	VFMADD231PS.BCST (R10)(DX*1), Z0, Z25; \
	VFMADD231PS.BCST (R10)(DX*2), Z0, Z26; \
	VFMADD231PS.BCST (R10)(R9*1), Z0, Z27; \
	VFMADD231PS.BCST 4(R10), Z1, Z28; \
	VFMADD231PS.BCST 4(R10)(DX*1), Z1, Z29; \
	VFMADD231PS.BCST 4(R10)(DX*2), Z1, Z30; \
	VFMADD231PS.BCST 4(R10)(R9*1), Z1, Z31; \
	ADDQ vstep, R8; \
	ADDQ $8, R10; \
	SUBQ $2, CX; \
	JGE pair; \
one: \
	CMPQ CX, $-1; \
	JNE done; \
	VMOVUPS (R8), Z0; \
	VFMADD231PS.BCST (R10), Z0, Z24; \
	VFMADD231PS.BCST (R10)(DX*1), Z0, Z25; \
	VFMADD231PS.BCST (R10)(DX*2), Z0, Z26; \
	VFMADD231PS.BCST (R10)(R9*1), Z0, Z27; \
done:

// OUT4 stores the four rows' sums in Z24-Z31 (see PV4) times Z20-Z23 (1/Σ) at SI (R13
// bytes apart, R14 = 3·R13).
#define OUT4 \
	VADDPS Z28, Z24, Z24; \
	VMULPS Z20, Z24, Z24; \
	VMOVUPS Z24, (SI); \
	VADDPS Z29, Z25, Z25; \
	VMULPS Z21, Z25, Z25; \
	VMOVUPS Z25, (SI)(R13*1); \
	VADDPS Z30, Z26, Z26; \
	VMULPS Z22, Z26, Z26; \
	VMOVUPS Z26, (SI)(R13*2); \
	VADDPS Z31, Z27, Z27; \
	VMULPS Z23, Z27, Z27; \
	VMOVUPS Z27, (SI)(R14*1)

// func AttnRowsFwd16(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32) bool
//
// o_r = softmax(scale·q_r ktᵀ over the first n_r keys) v for four query rows r (o's and
// q's rows ld floats apart, v's rows dense, n3 the most keys; s holds the rows' scores,
// 4 rows of np floats): their independent chains of maxima, exponentials and sums
// interleave, where one row alone waits on each, and each block of kt and each row of v
// is loaded once for the four. It reports false, leaving o unspecified, where a score
// is not finite: the caller then takes the general path, whose NaN and Inf rules it
// does not repeat.
TEXT ·AttnRowsFwd16(SB), NOSPLIT, $0-97
	PCALIGN $64
	ROWS4ARGS(q+8(FP), ld+16(FP), kt+24(FP), np+32(FP), n0+48(FP), n1+56(FP), n2+64(FP), n3+72(FP), scale+80(FP), s+88(FP))
	SCORES4(r4scores)
	EXPSUM4(r4exp)
	INVSUM4(Z20, Z21, Z22, Z23)
	// o_r = Σⱼ p_r[j]·vⱼ, keys in pairs (two chains per row), then /Σ.
	ZERO24TO31
	MOVQ v+40(FP), R8
	MOVQ DI, R10
	PV4(r4pair, r4one, r4done, 64(R8), $128)
	MOVQ o+0(FP), SI
	OUT4
	FINITE(ret+96(FP))
	VZEROUPPER
	RET

// func AttnRowsFwd(o, q *float32, ld int, kt *float32, np int, v *float32, n0, n1, n2, n3 int, scale float32, s *float32, chunks int) bool
//
// AttnRowsFwd16 for rows of 16·chunks features (chunks >= 1; kt: 16·chunks rows of np
// floats, v's rows 16·chunks floats): the scores sum the chunks' dot products, and the
// outputs are made chunk by chunk, each pass over the probabilities.
TEXT ·AttnRowsFwd(SB), NOSPLIT, $0-105
	PCALIGN $64
	ROWS4ARGS(q+8(FP), ld+16(FP), kt+24(FP), np+32(FP), n0+48(FP), n1+56(FP), n2+64(FP), n3+72(FP), scale+80(FP), s+88(FP))
	SCORESN(nscores, nchunk, chunks+96(FP))
	EXPSUM4(nexp)
	INVSUM4(Z20, Z21, Z22, Z23)
	// Chunk by chunk: BX its column of v, R12 v's row bytes, R11 two rows', AX the count.
	MOVQ o+0(FP), SI
	MOVQ v+40(FP), BX
	MOVQ chunks+96(FP), AX
	MOVQ AX, R12
	SHLQ $6, R12
	LEAQ (R12)(R12*1), R11
nout:
	ZERO24TO31
	MOVQ BX, R8
	MOVQ DI, R10
	MOVQ n3+72(FP), CX
	PV4(npair, none, ndone, (R8)(R12*1), R11)
	OUT4
	ADDQ $64, SI
	ADDQ $64, BX
	DECQ AX
	JNZ nout
	FINITE(ret+104(FP))
	VZEROUPPER
	RET

// DELTA sets every lane of z (y, x: its lower halves) to the dot product of the 16
// floats at ga and at oa (Z0-Z2 scratch).
#define DELTA(ga, oa, z, y, x) \
	VMOVUPS ga, Z0; \
	VMULPS oa, Z0, z; \
	HSUM(z, y, x); \
	VBROADCASTSS x, z

// GROW finishes a block of one of four rows in AttnRowsGrad16: dp = a + b, the
// probabilities p = e·inv over the exponentials at saddr (stored back), and
// ∂S = p·(dp - δ) to dsaddr.
#define GROW(a, b, delta, inv, saddr, dsaddr) \
	VADDPS b, a, a; \
	VSUBPS delta, a, a; \
	VMULPS saddr, inv, Z1; \
	VMOVUPS Z1, saddr; \
	VMULPS Z1, a, a; \
	VMOVUPS a, dsaddr

// GROWS4 finishes a block of the four rows (GROW with each row's registers) and moves
// R10, BX and R11 on to the next block, back to loop while AX < R12.
#define GROWS4(loop) \
	GROW(Z16, Z20, Z24, Z28, (BX), (R11)); \
	GROW(Z17, Z21, Z25, Z29, (BX)(DX*1), (R11)(DX*1)); \
	GROW(Z18, Z22, Z26, Z30, (BX)(DX*2), (R11)(DX*2)); \
	GROW(Z19, Z23, Z27, Z31, (BX)(R9*1), (R11)(R9*1)); \
	ADDQ $64, R10; \
	ADDQ $64, BX; \
	ADDQ $64, R11; \
	ADDQ $16, AX; \
	CMPQ AX, R12; \
	JLT loop

// func AttnRowsGrad16(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32) bool
//
// The first half of four query rows of the fused backward (q's, gy's and o's rows ld
// floats apart, row r seeing n_r keys, n3 the most; kt, vt: k and v transposed): the
// scores, their maximum m and the sum l of e^(s - m) (the row's log-sum-exp is
// m + log l), δ = gy·o, and for the blocks of 16 keys up to n3 the probabilities p into
// s and ∂S = p·(gy·v - δ) into ds (4 rows of np floats each, 0 from key n_r on). st
// receives the rows' m, l and δ; the result is false where a score is not finite, as
// AttnRowsFwd16's.
TEXT ·AttnRowsGrad16(SB), NOSPLIT, $0-121
	PCALIGN $64
	ROWS4ARGS(q+0(FP), ld+24(FP), kt+32(FP), np+48(FP), n0+56(FP), n1+64(FP), n2+72(FP), n3+80(FP), scale+88(FP), s+96(FP))
	SCORES4(g4scores)
	GRADSTATS(g4exp)
	// δ_r = gy_r·o_r.
	MOVQ gy+8(FP), SI
	MOVQ o+16(FP), R10
	DELTA((SI), (R10), Z24, Y24, X24)
	DELTA((SI)(R13*1), (R10)(R13*1), Z25, Y25, X25)
	DELTA((SI)(R13*2), (R10)(R13*2), Z26, Y26, X26)
	DELTA((SI)(R14*1), (R10)(R14*1), Z27, Y27, X27)
	STORE4SS(X24, X25, X26, X27, 32)
	// p = e/Σ and ∂S = p·(gy·vt - δ), a block of 16 keys at a time.
	MOVQ vt+40(FP), R10
	MOVQ ds+104(FP), R11
	MOVQ DI, BX
	XORQ AX, AX
g4ds:
	MOVQ R10, R8
	DOT16X4
	GROWS4(g4ds)
	FINITE(ret+120(FP))
	VZEROUPPER
	RET

// func AttnRowsGrad(q, gy, o *float32, ld int, kt, vt *float32, np, n0, n1, n2, n3 int, scale float32, s, ds *float32, st *[12]float32, chunks int) bool
//
// AttnRowsGrad16 for rows of 16·chunks features (chunks >= 1; kt and vt: 16·chunks rows
// of np floats each).
TEXT ·AttnRowsGrad(SB), NOSPLIT, $0-129
	PCALIGN $64
	ROWS4ARGS(q+0(FP), ld+24(FP), kt+32(FP), np+48(FP), n0+56(FP), n1+64(FP), n2+72(FP), n3+80(FP), scale+88(FP), s+96(FP))
	SCORESN(hscores, hchunk, chunks+120(FP))
	GRADSTATS(hexp)
	// δ_r = gy_r·o_r, chunk by chunk.
	MOVQ gy+8(FP), SI
	MOVQ o+16(FP), R10
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	MOVQ chunks+120(FP), AX
hdelta:
	VMOVUPS (SI), Z0
	VFMADD231PS (R10), Z0, Z24
	VMOVUPS (SI)(R13*1), Z0
	VFMADD231PS (R10)(R13*1), Z0, Z25
	VMOVUPS (SI)(R13*2), Z0
	VFMADD231PS (R10)(R13*2), Z0, Z26
	VMOVUPS (SI)(R14*1), Z0
	VFMADD231PS (R10)(R14*1), Z0, Z27
	ADDQ $64, SI
	ADDQ $64, R10
	DECQ AX
	JNZ hdelta
	HSUM(Z24, Y24, X24)
	VBROADCASTSS X24, Z24
	HSUM(Z25, Y25, X25)
	VBROADCASTSS X25, Z25
	HSUM(Z26, Y26, X26)
	VBROADCASTSS X26, Z26
	HSUM(Z27, Y27, X27)
	VBROADCASTSS X27, Z27
	STORE4SS(X24, X25, X26, X27, 32)
	// p = e/Σ and ∂S = p·(gy·vt - δ), a block of 16 keys at a time.
	MOVQ gy+8(FP), SI
	MOVQ vt+40(FP), R10
	MOVQ ds+104(FP), R11
	MOVQ DI, BX
	XORQ AX, AX
hds:
	MOVQ R10, R8
	DOTN(hdchunk, chunks+120(FP))
	GROWS4(hds)
	FINITE(ret+128(FP))
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

// func AttnKeysGrad16(rows *AttnQuad, p, ds *float32, np int, k *float32, ldk int, dkv *float32, lddkv, n int, scale float32)
//
// The second half of four query rows of the fused backward (their first halves by
// AttnRowsGrad16 left p and ∂S in rows of np floats at p and ds): dq of each row
// (rows.dq) = scale·Σⱼ ∂Sⱼ kⱼ over the first n keys (k's rows ldk floats apart), and
// every key j < n's share of ∂kⱼ (scale·Σ ∂Sⱼ q) and ∂vⱼ (Σ pⱼ gy) added into dkv's row j
// (lddkv floats apart; ∂k in its first 16 floats, ∂v in the next 16). A row that sees
// fewer keys has zeros in p and ∂S past them.
TEXT ·AttnKeysGrad16(SB), NOSPLIT, $0-76
	PCALIGN $64
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
	ZERO24TO31
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

// func AttnCopyRows(dst *float32, ldd int, src *float32, lds, rows, w int)
//
// Copies rows rows of w floats (w = 16 or 32) from src (lds floats apart) to dst (ldd
// apart): a ZMM or two per row, where copy's memmove call costs more than the move.
TEXT ·AttnCopyRows(SB), NOSPLIT, $0-48
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
