#include "textflag.h"

// func stackHi() uintptr
TEXT ·stackHi(SB),NOSPLIT,$0-8
	MOVQ	(TLS), AX	// g
	MOVQ	8(AX), AX	// g.stack.hi
	MOVQ	AX, ret+0(FP)
	RET
