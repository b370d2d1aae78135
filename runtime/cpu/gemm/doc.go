// Package gemm is gml's CPU matrix multiply: row-major single- and double-precision
// GEMM with the usual BLAS meaning (Sgemm, Dgemm), a strided-batched form for batched
// matmul (SgemmStrided), a form whose B operand packs itself for implicit-GEMM
// convolution (SgemmPacked, BPacker), and the choice between implementations (Impl).
//
// Decisions:
//   - Our own kernel is the default (Native). It is the BLIS/GotoBLAS design: B is packed
//     into k×16 micro-panels and A into 6×k micro-panels (alpha folded into A's packing),
//     cache blocks of blockM×blockK (A, kept in L2) and blockK×blockN (B, in L3), and a
//     6×16 micro-kernel in Go assembly (kernel_amd64.s) that keeps the C tile in twelve
//     AVX2 registers and issues two FMAs per broadcast.
//   - AVX2+FMA rather than AVX-512: the machines this was tuned on are AMD Zen 3 (EPYC,
//     family 25 model 1), which have no AVX-512; on Zen 4 a 512-bit FMA issues as two
//     256-bit halves, so an AVX2 kernel reaches the same peak there. An AVX-512 kernel
//     would mainly help Intel server parts; it is not written yet.
//   - One-row products (m == 1: a batch-1 dense layer, an ONNX Gemm with transB) skip
//     packing (gemv.go): with B as stored they are AXPYs of B's rows into C, with B
//     transposed one dot product per column, both in assembly and split by columns when
//     large. Packing would copy all of B to use one row in six of the micro-tile.
//     Measured here for 1×784 times 784×128: 10-11 µs against OpenBLAS's 27-39 µs.
//   - PureGo runs the same blocked driver with a Go micro-kernel and always works; Native
//     falls back to it when the CPU lacks AVX2 or FMA (golang.org/x/sys/cpu decides).
//   - OpenBLAS (loaded at run time by internal/openblas, never linked) is used only when
//     GML_BLAS=openblas asks for it and it loads; otherwise GML_BLAS=native (the default)
//     or GML_BLAS=go. DefaultNote says why a requested implementation was not taken.
//     The benchmark `gml bench cpu` measures Native against OpenBLAS in the same run.
//   - Float64: Native and PureGo use gonum's blas/gonum Dgemm, so the plain-matrix
//     helpers agree with gonum's mat.Dense exactly; OpenBLAS uses cblas_dgemm.
//   - Half precision is not handled here: the CPU backend converts F16/BF16 to float32.
//   - Parallel split (sgemmParallel): one goroutine per CPU lives through the whole
//     product (parallel.Run). Per k-slice the workers pack their share of the B panel,
//     meet at a barrier, take (row block, column range) items from an atomic counter,
//     each packing its own A block, and meet again. Taking work dynamically rather than
//     splitting C in fixed halves keeps both cores busy when another process slows one
//     of them, the usual case on these shared 2-core machines. The barrier spins for some
//     microseconds and then sleeps: waking a sleeping goroutine at every step cost about
//     a third of the speed at n=512 on a quiet machine, while spinning for long holds a
//     core that a descheduled peer needs.
//   - Every entry point validates dimensions, leading dimensions and slice lengths and
//     returns an error naming the operand; nothing reads out of bounds.
package gemm
