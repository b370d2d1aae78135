// Package conv holds the CPU convolution kernels as plain functions on float32 slices:
// Forward, BackwardData, BackwardFilter and BiasGrad for 2-D convolution (1-D is the
// 2-D case with height 1), and TransposedForward for transposed convolution.
//
// Decisions:
//   - Layouts are NCHW for activations and OIHW for weights (PyTorch's), so ONNX and
//     PyTorch weights load without permutation; transposed convolutions take PyTorch's
//     (in, out/groups, kH, kW) weights.
//   - Implicit GEMM (package gemm), the general path: per group, the weights are an
//     (OutChannels/Groups)×(InChannels/Groups·kH·kW) matrix and each image's column
//     (im2col) matrix is (InChannels/Groups·kH·kW)×(OutH·OutW). That matrix is never
//     written out: fieldPanel packs GEMM's B panels straight from the input
//     (gemm.SgemmPacked with a gemm.BPacker), which halves the memory traffic of
//     im2col-then-pack. The product lands directly in NCHW order.
//   - Parallelism: with at least two images, workers take whole images (the weight
//     gradient: items of a block of images) from a counter and run their GEMMs on their
//     own goroutine (per-worker buffers); a single image instead lets its GEMMs split
//     between workers.
//   - The weight gradient sums the batch in blocks whose number depends on the sizes
//     alone (filter.go), each into a partial gradient of its own, added in block order:
//     the gradient, and training, have the same bits whatever the thread count and
//     however the blocks are shared out.
//   - Conv.ForwardThen calls back as each image is complete, so that a caller can fuse
//     the next layer's work on the image while it is in cache (the CPU backend pools it).
//   - A Conv (New) keeps its scratch memory from call to call; the CPU backend builds one
//     per graph node when it prepares a program, so training steps allocate no scratch.
//     The package-level functions build a Conv per call.
//   - A 1×1 kernel with unit stride and no padding uses the input as its own column
//     matrix (gemm.Dense).
//   - Other unit-stride convolutions (the usual 3×3 "same" and "valid" layers) run on a
//     wide output grid (shifted.go): with the output laid out at the padded input's row
//     length, every row of the column matrix is a contiguous run of the (padded) input
//     shifted by its tap's offset. Forward packs B with contiguous copies and narrows the
//     result into y. With at least gemm.MicroRows() input channels per group, the two
//     gradients need no column matrix to pack: the weight gradient runs one GEMM per
//     image for all taps on plain matrices, X·dyᵀ with X the input shifted by each tap
//     in stacked rows (each row a contiguous copy of a run of the input; the batch laid
//     out once, each channel's padded images in a row, and every (block, group) an item
//     of its own), and the input gradient one GEMM per image for all taps, Wᵀ·dy with
//     the taps' weights stacked (taps·C rows: small GEMMs per tap ran 20% slower), whose
//     rows are added into the input gradient at their tap's offset, contiguous vector
//     adds instead of a col2im scatter. Both stack at most 1 MiB of rows per GEMM
//     (maxStacked), fewer taps at a time on large layers. Padded inputs are
//     copied once into zero-bordered buffers. With fewer channels (cnn28's 1-channel
//     first layer), the forward pass where the wide grid does not pay packs B from the
//     padded image by fixed tap offsets (shiftField), and the weight gradient writes the
//     image's column matrix out (OutH copies per row, a fraction of the product) so that
//     GEMM packs its transpose with vector transposes. Strides and the general case take
//     the implicit GEMM below.
//   - BackwardData on the general path is the adjoint: GEMM with the transposed weights
//     into a per-worker column buffer, then col2im (scatter-add) into the input gradient.
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
