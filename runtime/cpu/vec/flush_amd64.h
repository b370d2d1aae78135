// The optimizer loops run with MXCSR's DAZ and FTZ bits set (subnormals are zero: Intel
// cores take a microcode assist per subnormal operand or result) and give the caller
// back its own MXCSR. Both need 8 bytes of frame at 0(SP); the caller's MXCSR is kept in
// R9, which the loop must leave alone.

// FLUSH_SUBNORMALS saves the caller's MXCSR in R9 and sets DAZ and FTZ.
#define FLUSH_SUBNORMALS \
	STMXCSR 0(SP) \
	MOVL 0(SP), R9 \
	ORL  $0x8040, 0(SP) \
	LDMXCSR 0(SP)

// RESTORE_MXCSR gives the caller back the MXCSR FLUSH_SUBNORMALS saved.
#define RESTORE_MXCSR \
	MOVL R9, 0(SP) \
	LDMXCSR 0(SP)
