// Package conv holds the CPU convolution kernels as plain functions on float32 slices:
// Forward, BackwardData, BackwardFilter and BiasGrad for 2-D convolution (1-D is the
// 2-D case with height 1), and TransposedForward for transposed convolution.
//
// Decisions:
//   - Layouts are NCHW for activations and OIHW for weights (PyTorch's), so ONNX and
//     PyTorch weights load without permutation; transposed convolutions take PyTorch's
//     (in, out/groups, kH, kW) weights.
//   - im2col + GEMM (package gemm): per group, the weights are an
//     (OutChannels/Groups)×(InChannels/Groups·kH·kW) matrix and each image's column
//     matrix is (InChannels/Groups·kH·kW)×(OutH·OutW); the images of a chunk go through
//     one strided-batched GEMM with the weights broadcast. The result lands directly in
//     NCHW order, so no transpose follows. Column buffers are bounded to about 16 MiB by
//     processing images in chunks; im2col runs in parallel over the images of a chunk.
//   - A 1×1 kernel with unit stride and no padding skips im2col (the image is its own
//     column matrix).
//   - BackwardData is the adjoint: GEMM with the transposed weights into columns, then
//     col2im, which is im2col with scatter-add (one traversal, two modes).
//   - Transposed convolution is BackwardData of the convolution Transposed.Conv describes;
//     output padding must be below the stride. Its gradients are Forward (input) and
//     BackwardFilter (weights) of the same convolution, as TransposedForward documents,
//     so no separate functions exist for them.
//   - Padding is explicit per side; "same" padding is the caller's arithmetic.
//   - Depthwise convolution is the Groups == InChannels case of the same path; a direct
//     depthwise kernel would be faster and is not written yet.
//   - Every function validates Params and slice lengths and returns an error naming the
//     field or slice.
package conv
