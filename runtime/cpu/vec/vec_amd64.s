#include "textflag.h"

#include "exp_amd64.h"

// EXP8 sets Y1 = eˣ for x in Y0 (no lane NaN or above expHi; lanes below expLo give
// 0), with Y2-Y7 as scratch: the one sequence of expAVX2, expShiftSumAVX2 and
// geluGradAVX2.
#define EXP8 \
	VCMPPS $0x1D, consts<>+352(SB), Y0, Y7; \
	VMAXPS consts<>+352(SB), Y0, Y0; \
	VMOVUPS consts<>+32(SB), Y1; \
	VFMADD231PS consts<>+0(SB), Y0, Y1; \
	VSUBPS consts<>+32(SB), Y1, Y1; \
	VMOVAPS Y0, Y2; \
	VFNMADD231PS consts<>+64(SB), Y1, Y2; \
	VFMADD231PS consts<>+96(SB), Y1, Y2; \
	VMOVUPS consts<>+128(SB), Y3; \
	VFMADD213PS consts<>+160(SB), Y2, Y3; \
	VFMADD213PS consts<>+192(SB), Y2, Y3; \
	VFMADD213PS consts<>+224(SB), Y2, Y3; \
	VFMADD213PS consts<>+256(SB), Y2, Y3; \
	VFMADD213PS consts<>+288(SB), Y2, Y3; \
	VMULPS Y2, Y2, Y4; \
	VADDPS consts<>+320(SB), Y2, Y5; \
	VFMADD231PS Y4, Y3, Y5; \
	VCVTPS2DQ Y1, Y6; \
	VPADDD consts<>+896(SB), Y6, Y6; \
	VPSLLD $23, Y6, Y6; \
	VMULPS Y6, Y5, Y1; \
	VANDPS Y7, Y1, Y1

// func expAVX2(d, x []float32) int
TEXT ·expAVX2(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ AX, AX
loop:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Y0
	VCMPPS $0x16, consts<>+384(SB), Y0, Y7
	VMOVMSKPS Y7, BX
	TESTL BX, BX
	JNZ done
	EXP8
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP loop
done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// func expShiftSumAVX2(d, x []float32, shift float32) (int, float64)
TEXT ·expShiftSumAVX2(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ AX, AX
	VBROADCASTSS shift+48(FP), Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
loop:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Y0
	VSUBPS Y8, Y0, Y0
	VCMPPS $0x16, consts<>+384(SB), Y0, Y7
	VMOVMSKPS Y7, BX
	TESTL BX, BX
	JNZ done
	EXP8
	VMOVUPS Y1, (DI)(AX*4)
	VCVTPS2PD X1, Y2
	VEXTRACTF128 $1, Y1, X3
	VCVTPS2PD X3, Y3
	VADDPD Y2, Y9, Y9
	VADDPD Y3, Y10, Y10
	ADDQ $8, AX
	JMP loop
done:
	VADDPD Y10, Y9, Y9
	VEXTRACTF128 $1, Y9, X10
	VADDPD X10, X9, X9
	VHADDPD X9, X9, X9
	MOVQ AX, ret+56(FP)
	VMOVSD X9, ret1+64(FP)
	VZEROUPPER
	RET

// ERF8 sets Y1 = erf(Y0) (Y0 clamped in place to [-4, 4]), with Y2-Y4 as scratch: the
// one sequence erfAVX2 and geluAVX2 share, so their bits agree.
#define ERF8 \
	VMINPS consts<>+416(SB), Y0, Y0; \
	VMAXPS consts<>+448(SB), Y0, Y0; \
	VMULPS Y0, Y0, Y2; \
	VMOVUPS consts<>+512(SB), Y3; \
	VFMADD213PS consts<>+544(SB), Y2, Y3; \
	VFMADD213PS consts<>+576(SB), Y2, Y3; \
	VFMADD213PS consts<>+608(SB), Y2, Y3; \
	VFMADD213PS consts<>+640(SB), Y2, Y3; \
	VFMADD213PS consts<>+672(SB), Y2, Y3; \
	VFMADD213PS consts<>+704(SB), Y2, Y3; \
	VMULPS Y0, Y3, Y3; \
	VMOVUPS consts<>+736(SB), Y4; \
	VFMADD213PS consts<>+768(SB), Y2, Y4; \
	VFMADD213PS consts<>+800(SB), Y2, Y4; \
	VFMADD213PS consts<>+832(SB), Y2, Y4; \
	VFMADD213PS consts<>+864(SB), Y2, Y4; \
	VDIVPS Y4, Y3, Y1

// func erfAVX2(d, x []float32) int
TEXT ·erfAVX2(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ AX, AX
loop:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Y0
	VCMPPS $3, Y0, Y0, Y7
	VMOVMSKPS Y7, BX
	TESTL BX, BX
	JNZ done
	ERF8
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP loop
done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// func geluAVX2(d, x []float32) int
// GELU's erf form in one pass, rounded as Gelu's Go code rounds: t = x·(1/√2),
// d = (0.5·x)·(1 + erf(t)), stopping before a vector holding a NaN.
TEXT ·geluAVX2(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ AX, AX
	VMOVUPS consts<>+928(SB), Y8
	VMOVUPS consts<>+320(SB), Y9
	VMOVUPS consts<>+288(SB), Y10
loop:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Y5
	VCMPPS $3, Y5, Y5, Y7
	VMOVMSKPS Y7, BX
	TESTL BX, BX
	JNZ done
	VMULPS Y8, Y5, Y0
	ERF8
	VADDPS Y9, Y1, Y1
	VMULPS Y10, Y5, Y5
	VMULPS Y1, Y5, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP loop
done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// func geluGradAVX2(c *GeluGradConsts, dx, x, gy []float32) int
// GELU's derivative times gy in one pass, rounded as geluGradGo rounds, stopping before
// a vector of x holding a NaN.
TEXT ·geluGradAVX2(SB), NOSPLIT, $0-88
	MOVQ c+0(FP), R8
	MOVQ dx_base+8(FP), DI
	MOVQ x_base+32(FP), SI
	MOVQ x_len+40(FP), CX
	MOVQ gy_base+56(FP), DX
	XORQ AX, AX
	VBROADCASTSS 0(R8), Y10
	VBROADCASTSS 4(R8), Y11
	VBROADCASTSS 8(R8), Y12
	VBROADCASTSS 12(R8), Y13
	VBROADCASTSS 16(R8), Y14
loop:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Y8
	VCMPPS $3, Y8, Y8, Y7
	VMOVMSKPS Y7, BX
	TESTL BX, BX
	JNZ done
	VMULPS Y10, Y8, Y0
	ERF8
	VMULPS Y11, Y1, Y1
	VADDPS Y12, Y1, Y9
	VMULPS Y8, Y8, Y0
	VMULPS Y13, Y0, Y0
	EXP8
	VMULPS Y14, Y1, Y1
	VMULPS Y1, Y8, Y1
	VADDPS Y1, Y9, Y1
	VMULPS (DX)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ $8, AX
	JMP loop
done:
	MOVQ AX, ret+80(FP)
	VZEROUPPER
	RET

// func maxAVX2(x []float32) (int, float32, bool)
TEXT ·maxAVX2(SB), NOSPLIT, $0-37
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	XORQ AX, AX
	VBROADCASTSS consts<>+480(SB), Y0
	VMOVAPS Y0, Y1
	VXORPS Y4, Y4, Y4
loop:
	LEAQ 16(AX), BX
	CMPQ BX, CX
	JGT one
	VMOVUPS (SI)(AX*4), Y2
	VMOVUPS 32(SI)(AX*4), Y3
	VCMPPS $3, Y2, Y2, Y5
	VORPS Y5, Y4, Y4
	VCMPPS $3, Y3, Y3, Y5
	VORPS Y5, Y4, Y4
	VMAXPS Y2, Y0, Y0
	VMAXPS Y3, Y1, Y1
	ADDQ $16, AX
	JMP loop
one:
	LEAQ 8(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Y2
	VCMPPS $3, Y2, Y2, Y5
	VORPS Y5, Y4, Y4
	VMAXPS Y2, Y0, Y0
	ADDQ $8, AX
done:
	VMAXPS Y1, Y0, Y0
	VMOVMSKPS Y4, BX
	TESTL BX, BX
	SETNE BX
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	MOVQ AX, ret+24(FP)
	VMOVSS X0, ret1+32(FP)
	MOVB BX, ret2+36(FP)
	VZEROUPPER
	RET

// func expAVX512(d, x []float32) int
TEXT ·expAVX512(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ AX, AX
loop:
	LEAQ 16(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Z0
	VCMPPS.BCST $0x16, consts<>+384(SB), Z0, K1
	KORTESTW K1, K1
	JNZ done
	EXP16
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ $16, AX
	JMP loop
done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// func expShiftSumAVX512(d, x []float32, shift float32) (int, float64)
TEXT ·expShiftSumAVX512(SB), NOSPLIT, $0-72
	MOVQ d_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ AX, AX
	VBROADCASTSS shift+48(FP), Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
loop:
	LEAQ 16(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Z0
	VSUBPS Z8, Z0, Z0
	VCMPPS.BCST $0x16, consts<>+384(SB), Z0, K1
	KORTESTW K1, K1
	JNZ done
	EXP16
	VMOVUPS Z1, (DI)(AX*4)
	VCVTPS2PD Y1, Z2
	VEXTRACTF64X4 $1, Z1, Y3
	VCVTPS2PD Y3, Z3
	VADDPD Z2, Z9, Z9
	VADDPD Z3, Z10, Z10
	ADDQ $16, AX
	JMP loop
done:
	VADDPD Z10, Z9, Z9
	VEXTRACTF64X4 $1, Z9, Y10
	VADDPD Y10, Y9, Y9
	VEXTRACTF128 $1, Y9, X10
	VADDPD X10, X9, X9
	VHADDPD X9, X9, X9
	MOVQ AX, ret+56(FP)
	VMOVSD X9, ret1+64(FP)
	VZEROUPPER
	RET

// ERF16 sets Z1 = erf(Z0) (Z0 clamped in place to [-4, 4]), with Z2-Z4 as scratch: the
// one sequence erfAVX512 and geluAVX512 share.
#define ERF16 \
	VMINPS.BCST consts<>+416(SB), Z0, Z0; \
	VMAXPS.BCST consts<>+448(SB), Z0, Z0; \
	VMULPS Z0, Z0, Z2; \
	VBROADCASTSS consts<>+512(SB), Z3; \
	VFMADD213PS.BCST consts<>+544(SB), Z2, Z3; \
	VFMADD213PS.BCST consts<>+576(SB), Z2, Z3; \
	VFMADD213PS.BCST consts<>+608(SB), Z2, Z3; \
	VFMADD213PS.BCST consts<>+640(SB), Z2, Z3; \
	VFMADD213PS.BCST consts<>+672(SB), Z2, Z3; \
	VFMADD213PS.BCST consts<>+704(SB), Z2, Z3; \
	VMULPS Z0, Z3, Z3; \
	VBROADCASTSS consts<>+736(SB), Z4; \
	VFMADD213PS.BCST consts<>+768(SB), Z2, Z4; \
	VFMADD213PS.BCST consts<>+800(SB), Z2, Z4; \
	VFMADD213PS.BCST consts<>+832(SB), Z2, Z4; \
	VFMADD213PS.BCST consts<>+864(SB), Z2, Z4; \
	VDIVPS Z4, Z3, Z1

// func erfAVX512(d, x []float32) int
TEXT ·erfAVX512(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ AX, AX
loop:
	LEAQ 16(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Z0
	VCMPPS $3, Z0, Z0, K1
	KORTESTW K1, K1
	JNZ done
	ERF16
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ $16, AX
	JMP loop
done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// func geluAVX512(d, x []float32) int
// geluAVX2 in sixteen lanes.
TEXT ·geluAVX512(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ AX, AX
	VBROADCASTSS consts<>+928(SB), Z8
	VBROADCASTSS consts<>+320(SB), Z9
	VBROADCASTSS consts<>+288(SB), Z10
loop:
	LEAQ 16(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Z5
	VCMPPS $3, Z5, Z5, K1
	KORTESTW K1, K1
	JNZ done
	VMULPS Z8, Z5, Z0
	ERF16
	VADDPS Z9, Z1, Z1
	VMULPS Z10, Z5, Z5
	VMULPS Z1, Z5, Z1
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ $16, AX
	JMP loop
done:
	MOVQ AX, ret+48(FP)
	VZEROUPPER
	RET

// func geluGradAVX512(c *GeluGradConsts, dx, x, gy []float32) int
// geluGradAVX2 in sixteen lanes.
TEXT ·geluGradAVX512(SB), NOSPLIT, $0-88
	MOVQ c+0(FP), R8
	MOVQ dx_base+8(FP), DI
	MOVQ x_base+32(FP), SI
	MOVQ x_len+40(FP), CX
	MOVQ gy_base+56(FP), DX
	XORQ AX, AX
	VBROADCASTSS 0(R8), Z10
	VBROADCASTSS 4(R8), Z11
	VBROADCASTSS 8(R8), Z12
	VBROADCASTSS 12(R8), Z13
	VBROADCASTSS 16(R8), Z14
loop:
	LEAQ 16(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Z8
	VCMPPS $3, Z8, Z8, K1
	KORTESTW K1, K1
	JNZ done
	VMULPS Z10, Z8, Z0
	ERF16
	VMULPS Z11, Z1, Z1
	VADDPS Z12, Z1, Z9
	VMULPS Z8, Z8, Z0
	VMULPS Z13, Z0, Z0
	EXP16
	VMULPS Z14, Z1, Z1
	VMULPS Z1, Z8, Z1
	VADDPS Z1, Z9, Z1
	VMULPS (DX)(AX*4), Z1, Z1
	VMOVUPS Z1, (DI)(AX*4)
	ADDQ $16, AX
	JMP loop
done:
	MOVQ AX, ret+80(FP)
	VZEROUPPER
	RET

// func maxAVX512(x []float32) (int, float32, bool)
TEXT ·maxAVX512(SB), NOSPLIT, $0-37
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	XORQ AX, AX
	VBROADCASTSS consts<>+480(SB), Z0
	VMOVAPS Z0, Z1
	KXORW K1, K1, K1
loop:
	LEAQ 32(AX), BX
	CMPQ BX, CX
	JGT one
	VMOVUPS (SI)(AX*4), Z2
	VMOVUPS 64(SI)(AX*4), Z3
	VCMPPS $3, Z2, Z2, K2
	VCMPPS $3, Z3, Z3, K3
	KORW K2, K1, K1
	KORW K3, K1, K1
	VMAXPS Z2, Z0, Z0
	VMAXPS Z3, Z1, Z1
	ADDQ $32, AX
	JMP loop
one:
	LEAQ 16(AX), BX
	CMPQ BX, CX
	JGT done
	VMOVUPS (SI)(AX*4), Z2
	VCMPPS $3, Z2, Z2, K2
	KORW K2, K1, K1
	VMAXPS Z2, Z0, Z0
	ADDQ $16, AX
done:
	VMAXPS Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS Y1, Y0, Y0
	KORTESTW K1, K1
	SETNE BX
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	MOVQ AX, ret+24(FP)
	VMOVSS X0, ret1+32(FP)
	MOVB BX, ret2+36(FP)
	VZEROUPPER
	RET
