#include "textflag.h"

// func stackHi() uintptr
TEXT ·stackHi(SB),NOSPLIT,$0-8
	MOVD	8(g), R0	// g.stack.hi
	MOVD	R0, ret+0(FP)
	RET
