// Package cm2 generates the SPIR-V of gml's VK_NV_cooperative_matrix2 matrix
// product: workgroup-scope cooperative matrices loaded and stored through tensor
// layouts, which NVIDIA's driver stages through shared memory itself. Debian's glslc
// (shaderc 2023.2) cannot compile GL_NV_cooperative_matrix2, so the module is written
// word by word with internal/spirv; shaders/gen writes one file per Config listed in
// shaders.Generated, and shaders' staleness test regenerates and compares them.
//
// The shader has the interface of src/matmul_coop.comp (bindings 0 A, 1 B, 2 C in set
// 0; the push constants of src/matmul_common.glsl): C = A·B (+ beta·C when beta != 0)
// for row-major A (M×K) and B (K×N) of 16-bit floats, C of f32, batched over
// workgroup z, workgroup (x, y) computing the BM×BN tile at row y·BM, column x·BN.
//
// Decisions:
//   - One accumulator, coopmat<f32, Workgroup, BM, BN, Accumulator>; A and B slabs of
//     BK columns / rows are loaded per step with OpCooperativeMatrixLoadTensorNV from
//     slices of 2-D tensor layouts (dimensions (M, K) and (K, N), row strides lda and
//     ldb), and multiplied with OpCooperativeMatrixMulAddKHR.
//   - Two paths, chosen per workgroup with uniform values: tiles wholly inside M and N
//     with K a multiple of BK and 8-aligned row strides use layouts of clamp mode
//     Undefined (no bounds checks; the row strides are masked to multiples of 8 so the
//     driver may assume 16-byte rows), unrolled Unroll steps per iteration with a
//     single-step tail; every other tile uses clamp mode Constant, which reads zero
//     outside the matrix. The result is always stored through a Constant-mode layout
//     of C, which drops elements outside M×N.
//   - beta != 0 loads the C tile through the same layout and adds beta·C to the
//     product (OpMatrixTimesScalar, OpFAdd) before the store; split-K is not
//     implemented (splits must be 1), as in matmul_coop.comp.
//   - Batch and offsets move the base pointer (an OpAccessChain to element
//     off + z·stride), which SPV_NV_cooperative_matrix2 requires to be 16-byte
//     aligned: the host must pass offA + z·sA and offB + z·sB multiples of 8 elements
//     and offC + z·sC a multiple of 4.
//   - Config chooses the tile, the invocations, how many steps the unchecked loop
//     unrolls, whether it loads the next slabs before multiplying the current ones
//     (Prefetch) and whether workgroups walk column groups of tiles (GroupM); the
//     variant's name records every choice that differs from the defaults. On the H200
//     neither prefetching nor grouping paid (gpu/PERF.md).
//   - The cooperative-matrix instructions go through the coop interface so that the
//     test can swap in scalar stand-ins and check everything else with the spirv-val
//     Debian ships (2023.1, which predates these opcodes).
package cm2
