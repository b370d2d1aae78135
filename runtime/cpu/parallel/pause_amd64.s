#include "textflag.h"

// func pause(n int)
TEXT ·pause(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), AX
	TESTQ AX, AX
	JLE done
loop:
	PAUSE
	DECQ AX
	JNZ loop
done:
	RET
