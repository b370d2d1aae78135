#include "textflag.h"

// The PCG-RXS-M-XS hash of tensor.pcgHash in 32-bit lanes: state = v·747796405 +
// 2891336453; word = ((state >> ((state >> 28) + 4)) ^ state)·277803737; hash = (word >>
// 22) ^ word, with v = element index + seed hash. The kernels take the whole vectors of
// d (of x when x is not empty, which then has d's length) and return how many they did.

DATA dropoutLanes<>+0(SB)/4, $0
DATA dropoutLanes<>+4(SB)/4, $1
DATA dropoutLanes<>+8(SB)/4, $2
DATA dropoutLanes<>+12(SB)/4, $3
DATA dropoutLanes<>+16(SB)/4, $4
DATA dropoutLanes<>+20(SB)/4, $5
DATA dropoutLanes<>+24(SB)/4, $6
DATA dropoutLanes<>+28(SB)/4, $7
DATA dropoutLanes<>+32(SB)/4, $8
DATA dropoutLanes<>+36(SB)/4, $9
DATA dropoutLanes<>+40(SB)/4, $10
DATA dropoutLanes<>+44(SB)/4, $11
DATA dropoutLanes<>+48(SB)/4, $12
DATA dropoutLanes<>+52(SB)/4, $13
DATA dropoutLanes<>+56(SB)/4, $14
DATA dropoutLanes<>+60(SB)/4, $15
GLOBL dropoutLanes<>(SB), RODATA|NOPTR, $64

// func dropoutAVX2(d, x []float32, base, seedHash, threshold uint32, scale float32) int
TEXT ·dropoutAVX2(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), DX
	ANDQ $-8, CX
	XORQ AX, AX
	MOVL base+48(FP), R8
	ADDL seedHash+52(FP), R8
	MOVL R8, X0
	VPBROADCASTD X0, Y0
	VPADDD dropoutLanes<>(SB), Y0, Y0 // v of the first vector
	MOVL $8, R8
	MOVL R8, X8
	VPBROADCASTD X8, Y8 // lanes per vector
	MOVL $0x2c9277b5, R8
	MOVL R8, X9
	VPBROADCASTD X9, Y9
	MOVL $0xac564b05, R8
	MOVL R8, X10
	VPBROADCASTD X10, Y10
	MOVL $4, R8
	MOVL R8, X11
	VPBROADCASTD X11, Y11
	MOVL $0x108ef2d9, R8
	MOVL R8, X12
	VPBROADCASTD X12, Y12
	MOVL threshold+56(FP), R8
	MOVL R8, X13
	VPBROADCASTD X13, Y13
	VBROADCASTSS scale+60(FP), Y14

avx2loop:
	CMPQ AX, CX
	JGE  avx2done
	VPMULLD Y9, Y0, Y1
	VPADDD  Y10, Y1, Y1 // state
	VPSRLD  $28, Y1, Y2
	VPADDD  Y11, Y2, Y2
	VPSRLVD Y2, Y1, Y2
	VPXOR   Y1, Y2, Y2
	VPMULLD Y12, Y2, Y2 // word
	VPSRLD  $22, Y2, Y3
	VPXOR   Y2, Y3, Y3
	VPSRLD  $8, Y3, Y3
	VPCMPGTD Y3, Y13, Y4 // dropped: threshold > hash>>8 (both below 2^31)
	VMOVAPS Y14, Y5
	TESTQ   DX, DX
	JZ      avx2mask
	VMULPS  (SI)(AX*4), Y14, Y5
avx2mask:
	VANDNPS Y5, Y4, Y5
	VMOVUPS Y5, (DI)(AX*4)
	VPADDD  Y8, Y0, Y0
	ADDQ    $8, AX
	JMP     avx2loop

avx2done:
	MOVQ CX, ret+64(FP)
	VZEROUPPER
	RET

// func dropoutAVX512(d, x []float32, base, seedHash, threshold uint32, scale float32) int
TEXT ·dropoutAVX512(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), DX
	ANDQ $-16, CX
	XORQ AX, AX
	MOVL base+48(FP), R8
	ADDL seedHash+52(FP), R8
	VPBROADCASTD R8, Z0
	VPADDD dropoutLanes<>(SB), Z0, Z0
	MOVL $16, R8
	VPBROADCASTD R8, Z8
	MOVL $0x2c9277b5, R8
	VPBROADCASTD R8, Z9
	MOVL $0xac564b05, R8
	VPBROADCASTD R8, Z10
	MOVL $4, R8
	VPBROADCASTD R8, Z11
	MOVL $0x108ef2d9, R8
	VPBROADCASTD R8, Z12
	MOVL threshold+56(FP), R8
	VPBROADCASTD R8, Z13
	VBROADCASTSS scale+60(FP), Z14

avx512loop:
	CMPQ AX, CX
	JGE  avx512done
	VPMULLD Z9, Z0, Z1
	VPADDD  Z10, Z1, Z1
	VPSRLD  $28, Z1, Z2
	VPADDD  Z11, Z2, Z2
	VPSRLVD Z2, Z1, Z2
	VPXORD  Z1, Z2, Z2
	VPMULLD Z12, Z2, Z2
	VPSRLD  $22, Z2, Z3
	VPXORD  Z2, Z3, Z3
	VPSRLD  $8, Z3, Z3
	VPCMPUD $5, Z13, Z3, K1 // kept: hash>>8 >= threshold
	TESTQ   DX, DX
	JZ      avx512mask
	VMULPS.Z (SI)(AX*4), Z14, K1, Z5
	JMP     avx512store
avx512mask:
	VMOVAPS.Z Z14, K1, Z5
avx512store:
	VMOVUPS Z5, (DI)(AX*4)
	VPADDD  Z8, Z0, Z0
	ADDQ    $16, AX
	JMP     avx512loop

avx512done:
	MOVQ CX, ret+64(FP)
	VZEROUPPER
	RET
