#include "textflag.h"

// Elementwise float32 loops in AVX2, eight lanes at a time; each routine does the whole
// vectors of its length and returns how many elements that was, leaving the tail to
// the Go code (binary.go). The operand patterns are vector-vector (sa = sb = 1),
// vector-scalar (sb = 0) and scalar-vector (sa = 0); a scalar is broadcast once.

// VV, VS and SV are one loop of an arithmetic instruction over a pattern, for the
// registers the routine's prologue sets: DI = d, SI = a, DX = b, CX = the whole-vector
// count, AX = 0; VS and SV find the broadcast scalar in Y1.
#define VV(INSN, L) \
L: \
	CMPQ AX, CX; \
	JGE  done; \
	VMOVUPS (SI)(AX*4), Y0; \
	INSN (DX)(AX*4), Y0, Y0; \
	VMOVUPS Y0, (DI)(AX*4); \
	ADDQ $8, AX; \
	JMP  L

#define VS(INSN, L) \
L: \
	CMPQ AX, CX; \
	JGE  done; \
	VMOVUPS (SI)(AX*4), Y0; \
	INSN Y1, Y0, Y0; \
	VMOVUPS Y0, (DI)(AX*4); \
	ADDQ $8, AX; \
	JMP  L

#define SV(INSN, L) \
L: \
	CMPQ AX, CX; \
	JGE  done; \
	VMOVUPS (DX)(AX*4), Y2; \
	INSN Y2, Y1, Y0; \
	VMOVUPS Y0, (DI)(AX*4); \
	ADDQ $8, AX; \
	JMP  L

// func binaryAVX2(op int, d, a, b []float32, sa, sb int) int
// op: 0 add, 1 sub, 2 mul, 3 div (opAdd... in binary.go).
TEXT ·binaryAVX2(SB), NOSPLIT, $0-104
	MOVQ op+0(FP), R8
	MOVQ d_base+8(FP), DI
	MOVQ d_len+16(FP), CX
	MOVQ a_base+32(FP), SI
	MOVQ b_base+56(FP), DX
	MOVQ sa+80(FP), R9
	MOVQ sb+88(FP), R10
	ANDQ $-8, CX
	XORQ AX, AX
	TESTQ R10, R10
	JZ   vs
	TESTQ R9, R9
	JZ   sv
	CMPQ R8, $1
	JLT  addvv
	JEQ  subvv
	CMPQ R8, $3
	JLT  mulvv
	JMP  divvv

vs:
	VBROADCASTSS (DX), Y1
	CMPQ R8, $1
	JLT  addvs
	JEQ  subvs
	CMPQ R8, $3
	JLT  mulvs
	JMP  divvs

sv:
	VBROADCASTSS (SI), Y1
	CMPQ R8, $1
	JLT  addsv
	JEQ  subsv
	CMPQ R8, $3
	JLT  mulsv
	JMP  divsv

	VV(VADDPS, addvv)
	VV(VSUBPS, subvv)
	VV(VMULPS, mulvv)
	VV(VDIVPS, divvv)
	VS(VADDPS, addvs)
	VS(VSUBPS, subvs)
	VS(VMULPS, mulvs)
	VS(VDIVPS, divvs)
	SV(VADDPS, addsv)
	SV(VSUBPS, subsv)
	SV(VMULPS, mulsv)
	SV(VDIVPS, divsv)

done:
	MOVQ CX, ret+96(FP)
	VZEROUPPER
	RET

// BYTES turns the all-ones-or-zero lanes of Y0 into eight bytes of 1 or 0 at (DI)(AX*1).
#define BYTES \
	VEXTRACTF128 $1, Y0, X3; \
	VPACKSSDW X3, X0, X0; \
	VPACKSSWB X0, X0, X0; \
	VPAND X4, X0, X0; \
	MOVQ X0, (DI)(AX*1)

#define CVV(PRED, L) \
L: \
	CMPQ AX, CX; \
	JGE  cdone; \
	VMOVUPS (SI)(AX*4), Y0; \
	VCMPPS PRED, (DX)(AX*4), Y0, Y0; \
	BYTES; \
	ADDQ $8, AX; \
	JMP  L

#define CVS(PRED, L) \
L: \
	CMPQ AX, CX; \
	JGE  cdone; \
	VMOVUPS (SI)(AX*4), Y0; \
	VCMPPS PRED, Y1, Y0, Y0; \
	BYTES; \
	ADDQ $8, AX; \
	JMP  L

#define CSV(PRED, L) \
L: \
	CMPQ AX, CX; \
	JGE  cdone; \
	VMOVUPS (DX)(AX*4), Y2; \
	VCMPPS PRED, Y2, Y1, Y0; \
	BYTES; \
	ADDQ $8, AX; \
	JMP  L

// func compareAVX2(op int, d []byte, a, b []float32, sa, sb int) int
// op: 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >= (opEqual... in binary.go), with Go's answers for
// NaN: only != holds.
TEXT ·compareAVX2(SB), NOSPLIT, $0-104
	MOVQ op+0(FP), R8
	MOVQ d_base+8(FP), DI
	MOVQ d_len+16(FP), CX
	MOVQ a_base+32(FP), SI
	MOVQ b_base+56(FP), DX
	MOVQ sa+80(FP), R9
	MOVQ sb+88(FP), R10
	ANDQ $-8, CX
	XORQ AX, AX
	MOVQ $0x0101010101010101, R11
	MOVQ R11, X4
	TESTQ R10, R10
	JZ   cvs
	TESTQ R9, R9
	JZ   csv
	CMPQ R8, $1
	JLT  eqvv
	JEQ  nevv
	CMPQ R8, $3
	JLT  ltvv
	JEQ  levv
	CMPQ R8, $5
	JLT  gtvv
	JMP  gevv

cvs:
	VBROADCASTSS (DX), Y1
	CMPQ R8, $1
	JLT  eqvs
	JEQ  nevs
	CMPQ R8, $3
	JLT  ltvs
	JEQ  levs
	CMPQ R8, $5
	JLT  gtvs
	JMP  gevs

csv:
	VBROADCASTSS (SI), Y1
	CMPQ R8, $1
	JLT  eqsv
	JEQ  nesv
	CMPQ R8, $3
	JLT  ltsv
	JEQ  lesv
	CMPQ R8, $5
	JLT  gtsv
	JMP  gesv

	CVV($0x00, eqvv)
	CVV($0x04, nevv)
	CVV($0x11, ltvv)
	CVV($0x12, levv)
	CVV($0x1E, gtvv)
	CVV($0x1D, gevv)
	CVS($0x00, eqvs)
	CVS($0x04, nevs)
	CVS($0x11, ltvs)
	CVS($0x12, levs)
	CVS($0x1E, gtvs)
	CVS($0x1D, gevs)
	CSV($0x00, eqsv)
	CSV($0x04, nesv)
	CSV($0x11, ltsv)
	CSV($0x12, lesv)
	CSV($0x1E, gtsv)
	CSV($0x1D, gesv)

cdone:
	MOVQ CX, ret+96(FP)
	VZEROUPPER
	RET

// func where32AVX2(d []uint32, c []byte, a, b []uint32, sa, sb int) int
// d[i] = a[i·sa] where c[i] != 0, else b[i·sb].
TEXT ·where32AVX2(SB), NOSPLIT, $0-120
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ c_base+24(FP), BX
	MOVQ a_base+48(FP), SI
	MOVQ b_base+72(FP), DX
	MOVQ sa+96(FP), R9
	MOVQ sb+104(FP), R10
	ANDQ $-8, CX
	XORQ AX, AX
	VPXOR Y5, Y5, Y5
	VPBROADCASTD (SI), Y1
	VPBROADCASTD (DX), Y2

wloop:
	CMPQ AX, CX
	JGE  wdone
	VPMOVZXBD (BX)(AX*1), Y0
	VPCMPEQD Y5, Y0, Y0
	TESTQ R9, R9
	JZ   wascalar
	VMOVDQU (SI)(AX*4), Y1

wascalar:
	TESTQ R10, R10
	JZ   wbscalar
	VMOVDQU (DX)(AX*4), Y2

wbscalar:
	VBLENDVPS Y0, Y2, Y1, Y3
	VMOVDQU Y3, (DI)(AX*4)
	ADDQ $8, AX
	JMP  wloop

wdone:
	MOVQ CX, ret+112(FP)
	VZEROUPPER
	RET

// func reluAVX2(d, x []float32) int
// d[i] = max(x[i], 0) as Go's max computes it: x where x > 0 or x is NaN (the
// unordered not-less-or-equal predicate), +0 elsewhere (the mask clears every bit).
TEXT ·reluAVX2(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	ANDQ $-8, CX
	XORQ AX, AX
	VXORPS Y1, Y1, Y1

reluloop:
	CMPQ AX, CX
	JGE  reludone
	VMOVUPS (SI)(AX*4), Y0
	VCMPPS $0x06, Y1, Y0, Y2
	VANDPS Y0, Y2, Y2
	VMOVUPS Y2, (DI)(AX*4)
	ADDQ $8, AX
	JMP  reluloop

reludone:
	MOVQ CX, ret+48(FP)
	VZEROUPPER
	RET

// func spreadAVX2(d, v []uint32, row int)
// d[r·row+i] = v[r] for every row r and i < row: whole vectors, then the row's tail
// one element at a time.
TEXT ·spreadAVX2(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ v_base+24(FP), SI
	MOVQ v_len+32(FP), R8
	MOVQ row+48(FP), R9
	MOVQ R9, R10
	ANDQ $-8, R10
	XORQ DX, DX

spreadrow:
	CMPQ DX, R8
	JGE  spreaddone
	VPBROADCASTD (SI)(DX*4), Y0
	MOVL (SI)(DX*4), R11
	XORQ AX, AX

spreadvec:
	CMPQ AX, R10
	JGE  spreadtail
	VMOVDQU Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  spreadvec

spreadtail:
	CMPQ AX, R9
	JGE  spreadnext
	MOVL R11, (DI)(AX*4)
	INCQ AX
	JMP  spreadtail

spreadnext:
	LEAQ (DI)(R9*4), DI
	INCQ DX
	JMP  spreadrow

spreaddone:
	VZEROUPPER
	RET

// ROWS is one loop of arithRowsAVX2 over all rows, for the registers its prologue sets:
// DI = d, SI = a, DX = r, R8 = rows, R9 = the row length, R10 = its whole vectors. It
// computes X op Y: (SI, DX) for a op r, (DX, SI) for r op a. L, M and N are the loop's
// labels.
#define ROWS(INSN, X, Y, L, M, N) \
L: \
	TESTQ R8, R8; \
	JZ   rowsend; \
	XORQ AX, AX; \
M: \
	CMPQ AX, R10; \
	JGE  N; \
	VMOVUPS (X)(AX*4), Y0; \
	INSN (Y)(AX*4), Y0, Y0; \
	VMOVUPS Y0, (DI)(AX*4); \
	ADDQ $8, AX; \
	JMP  M; \
N: \
	LEAQ (SI)(R9*4), SI; \
	LEAQ (DI)(R9*4), DI; \
	DECQ R8; \
	JMP  L

// func arithRowsAVX2(op int, d, a, r []float32, rows int, rfirst bool)
// d[k·n+i] = a[k·n+i] op r[i] (r[i] op a[k·n+i] when rfirst) for k < rows, n = len(r),
// over the whole vectors of each row; the Go code (ArithRows) does the rows' tails.
TEXT ·arithRowsAVX2(SB), NOSPLIT, $0-89
	MOVQ op+0(FP), R11
	MOVQ d_base+8(FP), DI
	MOVQ a_base+32(FP), SI
	MOVQ r_base+56(FP), DX
	MOVQ r_len+64(FP), R9
	MOVQ rows+80(FP), R8
	MOVBLZX rfirst+88(FP), R12
	MOVQ R9, R10
	ANDQ $-8, R10
	TESTQ R12, R12
	JNZ  rfirstops
	CMPQ R11, $1
	JLT  raddv
	JEQ  rsubv
	CMPQ R11, $3
	JLT  rmulv
	JMP  rdivv

rfirstops:
	CMPQ R11, $1
	JLT  raddf
	JEQ  rsubf
	CMPQ R11, $3
	JLT  rmulf
	JMP  rdivf

	ROWS(VADDPS, SI, DX, raddv, raddv1, raddv2)
	ROWS(VSUBPS, SI, DX, rsubv, rsubv1, rsubv2)
	ROWS(VMULPS, SI, DX, rmulv, rmulv1, rmulv2)
	ROWS(VDIVPS, SI, DX, rdivv, rdivv1, rdivv2)
	ROWS(VADDPS, DX, SI, raddf, raddf1, raddf2)
	ROWS(VSUBPS, DX, SI, rsubf, rsubf1, rsubf2)
	ROWS(VMULPS, DX, SI, rmulf, rmulf1, rmulf2)
	ROWS(VDIVPS, DX, SI, rdivf, rdivf1, rdivf2)

rowsend:
	VZEROUPPER
	RET
