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
//     Reductions accumulate F32 data in float64 (sums in float32 runs first, below).
//   - Sources need no kernel: inputs and variables are uploaded by the runtime, and
//     Prepare copies constants into their buffers once. Reshape is free when the
//     scheduler aliases its buffer (it does) and a copy otherwise; in-place ops (Assign,
//     the optimizer updates) write into their input buffers.
//   - Parallelism is parallel.For with a grain per kernel family, so small tensors (a
//     batch-32 MLP step) run inline on the calling goroutine and large ones split across
//     parallel.Workers() goroutines (GOMAXPROCS, or GML_THREADS) of a pool whose
//     workers poll briefly between ops and then park (GML_POOL=off starts goroutines
//     per op). A prepared run of small tensors allocates nothing.
//   - Elementwise ops walk the output in contiguous stretches (broadcast.go): axes that
//     are contiguous for every operand merge, so same-shape and scalar operands become
//     one flat loop, and broadcast operands are read with stride 0. The same walk with
//     arbitrary strides implements the layout ops (permute, slice with steps, expand,
//     tile, depth-to-space) as one strided copy; a copy that swaps the two innermost axes
//     moves 32×32 tiles so reads and writes both stay in cache, and one whose rows are
//     aligned runs of up to 64 bytes (a head's 16 floats) moves each run as one value.
//     Copies give a goroutine at least 64 KiB written, as arithmetic does.
//   - Prepare fuses before it prepares node by node (fuse.go). Chains of F32
//     elementwise nodes (unary ops, arithmetic with broadcast operands, comparisons,
//     Where) and Sum/Mean over trailing axes of one shape run as one step, in blocks of
//     whole rows that stay in cache, each member with its own kernel's loop, so the
//     results are the unfused ones bit for bit; values no one else reads never reach
//     memory. A group that is exactly GELU's backward runs as one vector pass instead
//     (vec.GeluGrad, fuse_gelu.go), with the same bits. Unary kernels split between
//     threads on whole vectors of 16, as the blocks are cut, so neither their results
//     nor the fused ones depend on the thread count. The scheduler's Segment.Escapes
//     says which values are read after the segment. A group runs at its last member's
//     place only when no node in between overwrites what it reads or touches what it
//     writes. Before that, a CNN's layers fuse (convpool.go): a convolution adds its
//     per-channel bias itself, relu → 2×2 max pool pools z and rectifies the pooled
//     values, and the pool's gradient with the ReLU's Where is one pass from z; right
//     after such a convolution the pool runs on each image as the convolution completes
//     it. Before the elementwise groups, a MatMul whose only reader is the Add of a row
//     vector (a dense layer's bias) followed by a unary activation, on rows of whole
//     vectors, runs as one gemm.Impl.SgemmBiasThen, the activation applied to each block
//     of C's rows as its sum completes (fuse_bias.go), same bits. After the elementwise
//     groups, a MatMul whose only reader is the Add of a row vector that no group took
//     runs as one gemm.SgemmBias, which adds the bias to each tile of C as its sum
//     completes, same bits;
//     and a run of optimizer updates (SGDUpdate, AdamUpdate: one per parameter, most of
//     them biases) runs as one parallel job whose chunks cut across all their elements
//     (fuse_update.go), each element with the same kernel and bits. A layer or RMS
//     norm's backward group runs as one kernel of a few vector passes per block of rows
//     (fuse_norm.go), which also does the residual add of its ∂x; and a Sum of a fused
//     step's dY over all rows (a bias, gamma or beta gradient) folds into that step as
//     each block is written, in the Sum kernel's blocks and order (fuse_colsum.go):
//     same bits. GML_FUSE=off disables all of these.
//   - Reductions see the input as rows: when the reduced axes are innermost they fold
//     contiguous runs; when they form one block followed by kept axes (a sum over the
//     batch axis) they accumulate whole rows in order, and when such a block has many
//     rows and few outputs (a bias gradient) the rows are cut into blocks of a size
//     fixed by the shape (splitRows) whose float64 partials merge in order, so every
//     thread count gives the same bits; interleaved reduced and kept axes
//     fold in memory order too (a variance over a reduced innermost axis among them is
//     transposed first). One long row (a full Sum or Mean) is split between goroutines.
//     A row's sum (vec.Sum, the statistics of norms) adds sixteen float32 lanes, which
//     fold into float64 every 256 elements: sixteen values a lane per instruction,
//     where widening each to float64 held the assembly to four. A column sum over few
//     outputs (a bias gradient) adds runs of 16 rows in float32 (vec.AddRows, one call
//     per run of evenly spaced rows, its running sums kept in registers) and each run's
//     sums to the block's float64 ones (foldRuns); other column reductions accumulate
//     every row in float64 (vec.SumInto).
//   - The hot activations (exp, erf, GELU, tanh, sigmoid, silu) and the exponentials of
//     softmax and attention use the float32 functions of package vec (range reduction
//     and polynomials, about 1 ulp; exp, erf and GELU in AVX-512 or AVX2 assembly); the
//     rest use package math in float64.
//   - Attention (kernels_attention*.go) runs FlashAttention-style over tiles of 128
//     queries and keys with package gemm's products; its backward fuses the statistics
//     and both gradient nodes into one task per (batch, head), which writes the gradients
//     into their nodes' buffers, ∂q also where that is the forward output's (the task
//     reads its rows of o before writing them; fuse.go). With 16 features per head
//     (the usual small transformer; also 32 and 64, in chunks of 16), no additive mask
//     and up to 320 keys (160, 80), AVX-512 runs each (batch, head) by groups of four
//     query rows in assembly instead
//     (kernels_attention16.go): the tiles' 16-deep products spent their time packing and
//     planning, and one head's rows in the (B, T, H, D) layout (512 bytes apart) evict
//     each other from L1, so the rows path copies keys and values into dense scratch
//     first. Both give the same bits at any thread count.
//   - Integer division by zero gives 0 and an index out of range fails the run with an
//     error naming it: no input may crash the process.
package cpu
