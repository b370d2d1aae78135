// Push constants shared by every matrix-product shader. Offsets, strides and batch
// strides count elements of the operand's storage type; the host fills the same layout
// (gpu.matmulPush).
layout(push_constant) uniform Push {
	uint M, N, K;
	uint lda, ldb, ldc;
	uint offA, offB, offC;
	uint sA, sB, sC;
	float beta;
} p;
