// Push constants shared by every matrix-product shader. Offsets, strides and batch
// strides count elements of the operand's storage type; the host fills the same layout
// (gpu.mmPush). With splits > 1 (split-K, f32 shader only) workgroup z = batch*splits +
// s computes the K range [s*kChunk, (s+1)*kChunk) into slice s of a scratch output, at
// s*M*ldc past the batch's base; a reduction then sums the slices.
layout(push_constant) uniform Push {
	uint M, N, K;
	uint lda, ldb, ldc;
	uint offA, offB, offC;
	uint sA, sB, sC;
	float beta;
	uint kChunk, splits;
} p;
