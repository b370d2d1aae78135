#include "textflag.h"

// Constants, each eight times over (32 bytes): AVX2 code reads them as whole vectors,
// AVX-512 code broadcasts the first element. The values are those of scalar.go.
DATA consts<>+0(SB)/4, $0x3fb8aa3b
DATA consts<>+4(SB)/4, $0x3fb8aa3b
DATA consts<>+8(SB)/4, $0x3fb8aa3b
DATA consts<>+12(SB)/4, $0x3fb8aa3b
DATA consts<>+16(SB)/4, $0x3fb8aa3b
DATA consts<>+20(SB)/4, $0x3fb8aa3b
DATA consts<>+24(SB)/4, $0x3fb8aa3b
DATA consts<>+28(SB)/4, $0x3fb8aa3b
DATA consts<>+32(SB)/4, $0x4b400000
DATA consts<>+36(SB)/4, $0x4b400000
DATA consts<>+40(SB)/4, $0x4b400000
DATA consts<>+44(SB)/4, $0x4b400000
DATA consts<>+48(SB)/4, $0x4b400000
DATA consts<>+52(SB)/4, $0x4b400000
DATA consts<>+56(SB)/4, $0x4b400000
DATA consts<>+60(SB)/4, $0x4b400000
DATA consts<>+64(SB)/4, $0x3f318000
DATA consts<>+68(SB)/4, $0x3f318000
DATA consts<>+72(SB)/4, $0x3f318000
DATA consts<>+76(SB)/4, $0x3f318000
DATA consts<>+80(SB)/4, $0x3f318000
DATA consts<>+84(SB)/4, $0x3f318000
DATA consts<>+88(SB)/4, $0x3f318000
DATA consts<>+92(SB)/4, $0x3f318000
DATA consts<>+96(SB)/4, $0x395e8083
DATA consts<>+100(SB)/4, $0x395e8083
DATA consts<>+104(SB)/4, $0x395e8083
DATA consts<>+108(SB)/4, $0x395e8083
DATA consts<>+112(SB)/4, $0x395e8083
DATA consts<>+116(SB)/4, $0x395e8083
DATA consts<>+120(SB)/4, $0x395e8083
DATA consts<>+124(SB)/4, $0x395e8083
DATA consts<>+128(SB)/4, $0x39506967
DATA consts<>+132(SB)/4, $0x39506967
DATA consts<>+136(SB)/4, $0x39506967
DATA consts<>+140(SB)/4, $0x39506967
DATA consts<>+144(SB)/4, $0x39506967
DATA consts<>+148(SB)/4, $0x39506967
DATA consts<>+152(SB)/4, $0x39506967
DATA consts<>+156(SB)/4, $0x39506967
DATA consts<>+160(SB)/4, $0x3ab743ce
DATA consts<>+164(SB)/4, $0x3ab743ce
DATA consts<>+168(SB)/4, $0x3ab743ce
DATA consts<>+172(SB)/4, $0x3ab743ce
DATA consts<>+176(SB)/4, $0x3ab743ce
DATA consts<>+180(SB)/4, $0x3ab743ce
DATA consts<>+184(SB)/4, $0x3ab743ce
DATA consts<>+188(SB)/4, $0x3ab743ce
DATA consts<>+192(SB)/4, $0x3c088908
DATA consts<>+196(SB)/4, $0x3c088908
DATA consts<>+200(SB)/4, $0x3c088908
DATA consts<>+204(SB)/4, $0x3c088908
DATA consts<>+208(SB)/4, $0x3c088908
DATA consts<>+212(SB)/4, $0x3c088908
DATA consts<>+216(SB)/4, $0x3c088908
DATA consts<>+220(SB)/4, $0x3c088908
DATA consts<>+224(SB)/4, $0x3d2aa9c1
DATA consts<>+228(SB)/4, $0x3d2aa9c1
DATA consts<>+232(SB)/4, $0x3d2aa9c1
DATA consts<>+236(SB)/4, $0x3d2aa9c1
DATA consts<>+240(SB)/4, $0x3d2aa9c1
DATA consts<>+244(SB)/4, $0x3d2aa9c1
DATA consts<>+248(SB)/4, $0x3d2aa9c1
DATA consts<>+252(SB)/4, $0x3d2aa9c1
DATA consts<>+256(SB)/4, $0x3e2aaaaa
DATA consts<>+260(SB)/4, $0x3e2aaaaa
DATA consts<>+264(SB)/4, $0x3e2aaaaa
DATA consts<>+268(SB)/4, $0x3e2aaaaa
DATA consts<>+272(SB)/4, $0x3e2aaaaa
DATA consts<>+276(SB)/4, $0x3e2aaaaa
DATA consts<>+280(SB)/4, $0x3e2aaaaa
DATA consts<>+284(SB)/4, $0x3e2aaaaa
DATA consts<>+288(SB)/4, $0x3f000000
DATA consts<>+292(SB)/4, $0x3f000000
DATA consts<>+296(SB)/4, $0x3f000000
DATA consts<>+300(SB)/4, $0x3f000000
DATA consts<>+304(SB)/4, $0x3f000000
DATA consts<>+308(SB)/4, $0x3f000000
DATA consts<>+312(SB)/4, $0x3f000000
DATA consts<>+316(SB)/4, $0x3f000000
DATA consts<>+320(SB)/4, $0x3f800000
DATA consts<>+324(SB)/4, $0x3f800000
DATA consts<>+328(SB)/4, $0x3f800000
DATA consts<>+332(SB)/4, $0x3f800000
DATA consts<>+336(SB)/4, $0x3f800000
DATA consts<>+340(SB)/4, $0x3f800000
DATA consts<>+344(SB)/4, $0x3f800000
DATA consts<>+348(SB)/4, $0x3f800000
DATA consts<>+352(SB)/4, $0xc2aeac4f
DATA consts<>+356(SB)/4, $0xc2aeac4f
DATA consts<>+360(SB)/4, $0xc2aeac4f
DATA consts<>+364(SB)/4, $0xc2aeac4f
DATA consts<>+368(SB)/4, $0xc2aeac4f
DATA consts<>+372(SB)/4, $0xc2aeac4f
DATA consts<>+376(SB)/4, $0xc2aeac4f
DATA consts<>+380(SB)/4, $0xc2aeac4f
DATA consts<>+384(SB)/4, $0x42b0999a
DATA consts<>+388(SB)/4, $0x42b0999a
DATA consts<>+392(SB)/4, $0x42b0999a
DATA consts<>+396(SB)/4, $0x42b0999a
DATA consts<>+400(SB)/4, $0x42b0999a
DATA consts<>+404(SB)/4, $0x42b0999a
DATA consts<>+408(SB)/4, $0x42b0999a
DATA consts<>+412(SB)/4, $0x42b0999a
DATA consts<>+416(SB)/4, $0x40800000
DATA consts<>+420(SB)/4, $0x40800000
DATA consts<>+424(SB)/4, $0x40800000
DATA consts<>+428(SB)/4, $0x40800000
DATA consts<>+432(SB)/4, $0x40800000
DATA consts<>+436(SB)/4, $0x40800000
DATA consts<>+440(SB)/4, $0x40800000
DATA consts<>+444(SB)/4, $0x40800000
DATA consts<>+448(SB)/4, $0xc0800000
DATA consts<>+452(SB)/4, $0xc0800000
DATA consts<>+456(SB)/4, $0xc0800000
DATA consts<>+460(SB)/4, $0xc0800000
DATA consts<>+464(SB)/4, $0xc0800000
DATA consts<>+468(SB)/4, $0xc0800000
DATA consts<>+472(SB)/4, $0xc0800000
DATA consts<>+476(SB)/4, $0xc0800000
DATA consts<>+480(SB)/4, $0xff800000
DATA consts<>+484(SB)/4, $0xff800000
DATA consts<>+488(SB)/4, $0xff800000
DATA consts<>+492(SB)/4, $0xff800000
DATA consts<>+496(SB)/4, $0xff800000
DATA consts<>+500(SB)/4, $0xff800000
DATA consts<>+504(SB)/4, $0xff800000
DATA consts<>+508(SB)/4, $0xff800000
DATA consts<>+512(SB)/4, $0xaf95df0b
DATA consts<>+516(SB)/4, $0xaf95df0b
DATA consts<>+520(SB)/4, $0xaf95df0b
DATA consts<>+524(SB)/4, $0xaf95df0b
DATA consts<>+528(SB)/4, $0xaf95df0b
DATA consts<>+532(SB)/4, $0xaf95df0b
DATA consts<>+536(SB)/4, $0xaf95df0b
DATA consts<>+540(SB)/4, $0xaf95df0b
DATA consts<>+544(SB)/4, $0x32edffee
DATA consts<>+548(SB)/4, $0x32edffee
DATA consts<>+552(SB)/4, $0x32edffee
DATA consts<>+556(SB)/4, $0x32edffee
DATA consts<>+560(SB)/4, $0x32edffee
DATA consts<>+564(SB)/4, $0x32edffee
DATA consts<>+568(SB)/4, $0x32edffee
DATA consts<>+572(SB)/4, $0x32edffee
DATA consts<>+576(SB)/4, $0xb60cff51
DATA consts<>+580(SB)/4, $0xb60cff51
DATA consts<>+584(SB)/4, $0xb60cff51
DATA consts<>+588(SB)/4, $0xb60cff51
DATA consts<>+592(SB)/4, $0xb60cff51
DATA consts<>+596(SB)/4, $0xb60cff51
DATA consts<>+600(SB)/4, $0xb60cff51
DATA consts<>+604(SB)/4, $0xb60cff51
DATA consts<>+608(SB)/4, $0xb86ec2d2
DATA consts<>+612(SB)/4, $0xb86ec2d2
DATA consts<>+616(SB)/4, $0xb86ec2d2
DATA consts<>+620(SB)/4, $0xb86ec2d2
DATA consts<>+624(SB)/4, $0xb86ec2d2
DATA consts<>+628(SB)/4, $0xb86ec2d2
DATA consts<>+632(SB)/4, $0xb86ec2d2
DATA consts<>+636(SB)/4, $0xb86ec2d2
DATA consts<>+640(SB)/4, $0xba40ac63
DATA consts<>+644(SB)/4, $0xba40ac63
DATA consts<>+648(SB)/4, $0xba40ac63
DATA consts<>+652(SB)/4, $0xba40ac63
DATA consts<>+656(SB)/4, $0xba40ac63
DATA consts<>+660(SB)/4, $0xba40ac63
DATA consts<>+664(SB)/4, $0xba40ac63
DATA consts<>+668(SB)/4, $0xba40ac63
DATA consts<>+672(SB)/4, $0xbb41a1f6
DATA consts<>+676(SB)/4, $0xbb41a1f6
DATA consts<>+680(SB)/4, $0xbb41a1f6
DATA consts<>+684(SB)/4, $0xbb41a1f6
DATA consts<>+688(SB)/4, $0xbb41a1f6
DATA consts<>+692(SB)/4, $0xbb41a1f6
DATA consts<>+696(SB)/4, $0xbb41a1f6
DATA consts<>+700(SB)/4, $0xbb41a1f6
DATA consts<>+704(SB)/4, $0xbc83dbd4
DATA consts<>+708(SB)/4, $0xbc83dbd4
DATA consts<>+712(SB)/4, $0xbc83dbd4
DATA consts<>+716(SB)/4, $0xbc83dbd4
DATA consts<>+720(SB)/4, $0xbc83dbd4
DATA consts<>+724(SB)/4, $0xbc83dbd4
DATA consts<>+728(SB)/4, $0xbc83dbd4
DATA consts<>+732(SB)/4, $0xbc83dbd4
DATA consts<>+736(SB)/4, $0xb77460cd
DATA consts<>+740(SB)/4, $0xb77460cd
DATA consts<>+744(SB)/4, $0xb77460cd
DATA consts<>+748(SB)/4, $0xb77460cd
DATA consts<>+752(SB)/4, $0xb77460cd
DATA consts<>+756(SB)/4, $0xb77460cd
DATA consts<>+760(SB)/4, $0xb77460cd
DATA consts<>+764(SB)/4, $0xb77460cd
DATA consts<>+768(SB)/4, $0xb95fbd29
DATA consts<>+772(SB)/4, $0xb95fbd29
DATA consts<>+776(SB)/4, $0xb95fbd29
DATA consts<>+780(SB)/4, $0xb95fbd29
DATA consts<>+784(SB)/4, $0xb95fbd29
DATA consts<>+788(SB)/4, $0xb95fbd29
DATA consts<>+792(SB)/4, $0xb95fbd29
DATA consts<>+796(SB)/4, $0xb95fbd29
DATA consts<>+800(SB)/4, $0xbadc924e
DATA consts<>+804(SB)/4, $0xbadc924e
DATA consts<>+808(SB)/4, $0xbadc924e
DATA consts<>+812(SB)/4, $0xbadc924e
DATA consts<>+816(SB)/4, $0xbadc924e
DATA consts<>+820(SB)/4, $0xbadc924e
DATA consts<>+824(SB)/4, $0xbadc924e
DATA consts<>+828(SB)/4, $0xbadc924e
DATA consts<>+832(SB)/4, $0xbbf19bf8
DATA consts<>+836(SB)/4, $0xbbf19bf8
DATA consts<>+840(SB)/4, $0xbbf19bf8
DATA consts<>+844(SB)/4, $0xbbf19bf8
DATA consts<>+848(SB)/4, $0xbbf19bf8
DATA consts<>+852(SB)/4, $0xbbf19bf8
DATA consts<>+856(SB)/4, $0xbbf19bf8
DATA consts<>+860(SB)/4, $0xbbf19bf8
DATA consts<>+864(SB)/4, $0xbc69b6a7
DATA consts<>+868(SB)/4, $0xbc69b6a7
DATA consts<>+872(SB)/4, $0xbc69b6a7
DATA consts<>+876(SB)/4, $0xbc69b6a7
DATA consts<>+880(SB)/4, $0xbc69b6a7
DATA consts<>+884(SB)/4, $0xbc69b6a7
DATA consts<>+888(SB)/4, $0xbc69b6a7
DATA consts<>+892(SB)/4, $0xbc69b6a7
DATA consts<>+896(SB)/4, $127
DATA consts<>+900(SB)/4, $127
DATA consts<>+904(SB)/4, $127
DATA consts<>+908(SB)/4, $127
DATA consts<>+912(SB)/4, $127
DATA consts<>+916(SB)/4, $127
DATA consts<>+920(SB)/4, $127
DATA consts<>+924(SB)/4, $127
// 1/√2 (GELU)
DATA consts<>+928(SB)/4, $0x3f3504f3
DATA consts<>+932(SB)/4, $0x3f3504f3
DATA consts<>+936(SB)/4, $0x3f3504f3
DATA consts<>+940(SB)/4, $0x3f3504f3
DATA consts<>+944(SB)/4, $0x3f3504f3
DATA consts<>+948(SB)/4, $0x3f3504f3
DATA consts<>+952(SB)/4, $0x3f3504f3
DATA consts<>+956(SB)/4, $0x3f3504f3
GLOBL consts<>(SB), RODATA|NOPTR, $960

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

// EXP16 is EXP8 in sixteen lanes (Z registers, K2 as scratch).
#define EXP16 \
	VCMPPS.BCST $0x1D, consts<>+352(SB), Z0, K2; \
	VMAXPS.BCST consts<>+352(SB), Z0, Z0; \
	VBROADCASTSS consts<>+32(SB), Z1; \
	VFMADD231PS.BCST consts<>+0(SB), Z0, Z1; \
	VSUBPS.BCST consts<>+32(SB), Z1, Z1; \
	VMOVAPS Z0, Z2; \
	VFNMADD231PS.BCST consts<>+64(SB), Z1, Z2; \
	VFMADD231PS.BCST consts<>+96(SB), Z1, Z2; \
	VBROADCASTSS consts<>+128(SB), Z3; \
	VFMADD213PS.BCST consts<>+160(SB), Z2, Z3; \
	VFMADD213PS.BCST consts<>+192(SB), Z2, Z3; \
	VFMADD213PS.BCST consts<>+224(SB), Z2, Z3; \
	VFMADD213PS.BCST consts<>+256(SB), Z2, Z3; \
	VFMADD213PS.BCST consts<>+288(SB), Z2, Z3; \
	VMULPS Z2, Z2, Z4; \
	VADDPS.BCST consts<>+320(SB), Z2, Z5; \
	VFMADD231PS Z4, Z3, Z5; \
	VCVTPS2DQ Z1, Z6; \
	VPADDD.BCST consts<>+896(SB), Z6, Z6; \
	VPSLLD $23, Z6, Z6; \
	VMULPS Z6, Z5, Z1; \
	VMOVAPS.Z Z1, K2, Z1

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
