// Package cpu is gml's CPU backend: host buffers, goroutine-parallel kernels, and matrix
// multiplication through package gemm. Importing it registers the backend as "cpu".
//
// Decisions:
//   - Buffers are 64-byte-aligned host memory; Upload and Download are copies.
//   - Prepare turns a segment into a list of closures, one per computing node. Each
//     kernel is a kernelFactory (kernels.go): given the node and the byte slices of its
//     output and inputs, it resolves attributes, strides, loop bounds and scratch once
//     and returns a closure that does only the arithmetic, so Run performs no map
//     lookups and no allocations. Run times a node only when profiling is on.
//   - Kernels register from init in kernels_*.go files with
//     register(op, dtypes, factory), where dtypes are the accepted dtypes of the node's
//     input 0. One op may have several registrations for disjoint dtype sets.
//   - F16 and BF16 are computed in F32: an op registered for F32 but not for a half type
//     runs on F32 scratch copies (widen.go), so every kernel serves every float type.
//     Reductions accumulate F32 data in float64.
//   - Sources need no kernel: inputs and variables are uploaded by the runtime, and
//     Prepare copies constants into their buffers once. Reshape is free when the
//     scheduler aliases its buffer (it does) and a copy otherwise; in-place ops (Assign,
//     the optimizer updates) write into their input buffers.
//   - Parallelism is parallel.For with a grain per kernel family, so small tensors (a
//     batch-32 MLP step) run inline on the calling goroutine and large ones split across
//     runtime.GOMAXPROCS goroutines.
package cpu
