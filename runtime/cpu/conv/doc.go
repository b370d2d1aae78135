// Package conv holds the CPU convolution kernels as plain functions on float32 slices:
// Forward, BackwardData, BackwardFilter and BiasGrad for 2-D convolution (1-D is the
// 2-D case with height 1), and TransposedForward for transposed convolution.
//
// Decisions:
//   - Layouts are NCHW for activations and OIHW for weights (PyTorch's), so ONNX and
//     PyTorch weights load without permutation; transposed convolutions take PyTorch's
//     (in, out/groups, kH, kW) weights.
//   - Implicit GEMM (package gemm): per group, the weights are an
//     (OutChannels/Groups)×(InChannels/Groups·kH·kW) matrix and each image's column
//     (im2col) matrix is (InChannels/Groups·kH·kW)×(OutH·OutW). That matrix is never
//     written out: fieldPanel packs GEMM's B panels straight from the input
//     (gemm.SgemmPacked with a gemm.BPacker), which halves the memory traffic of
//     im2col-then-pack. The product lands directly in NCHW order.
//   - Parallelism: with at least two images, workers take whole images from a counter
//     and run their GEMMs on their own goroutine (per-worker buffers); a single image
//     instead lets its GEMMs split between workers. The weight gradient is the
//     exception to the counter: each worker sums a fixed block of images and the
//     partial gradients are added in worker order, so the gradient, and training, are
//     bit-identical from run to run for a given number of workers (taken from the
//     counter, which images a worker sums would vary with timing).
//   - A 1×1 kernel with unit stride and no padding uses the input as its own column
//     matrix (gemm.Dense).
//   - BackwardData is the adjoint: GEMM with the transposed weights into a per-worker
//     column buffer, then col2im (scatter-add) into the input gradient.
//   - Transposed convolution is BackwardData of the convolution Transposed.Conv describes;
//     output padding must be below the stride. Its gradients are Forward (input) and
//     BackwardFilter (weights) of the same convolution, as TransposedForward documents,
//     so no separate functions exist for them.
//   - Padding is explicit per side; "same" padding is the caller's arithmetic.
//   - Depthwise convolution (one input channel per output channel) with fewer output
//     channels per group than the GEMM micro-tile has rows runs through direct loops
//     (depthwise.go): as a GEMM it would be a 1-row product that mostly multiplies the
//     tile's padding. Its three passes share one traversal of the valid output rows.
//   - Every function validates Params and slice lengths and returns an error naming the
//     field or slice.
package conv
