// The constants of vec's assembly and the AVX-512 exponential, included by vec_amd64.s
// and attention16_amd64.s (each file gets its own copy of the file-local table: one
// source for the bits of both).

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

// EXP16 sets Z1 = eˣ for x in Z0 (clamped in place to expLo: lanes below it give 0; no
// lane NaN or above expHi), with Z2-Z6 and K2 as scratch: EXP8 of vec_amd64.s in sixteen
// lanes, the one sequence of vec's AVX-512 exponentials and of attention16_amd64.s.
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
