// Package gemm is gml's CPU matrix multiply: row-major single- and double-precision
// GEMM with the usual BLAS meaning (Sgemm, Dgemm), a strided-batched form for batched
// matmul (SgemmStrided), a form whose B operand packs itself for implicit-GEMM
// convolution (SgemmPacked, BPacker), and the choice between implementations (Impl).
//
// Decisions:
//   - Our own kernel is the default (Native). It is the BLIS/GotoBLAS design: B is packed
//     into k×16 micro-panels and A into mr×k micro-panels, cache blocks of mc×kc (A, kept
//     in L2) and kc×nc (B, in L3), and a micro-kernel in Go assembly that keeps the C
//     tile in registers. Each kernel shape carries its own blocking (tuning, driver.go):
//     avx2 (and neon, unmeasured) the values measured on AMD Zen 3, avx512 those of the
//     Xeon hosts. The avx512 kernel keeps its strip of A in L1 and streams B from L2
//     instead (tuning.sweep), as GotoBLAS and BLIS do on AVX-512.
//   - The micro-kernel scales its tile by alpha and writes it over C on the first
//     k-slice when beta is 0 (else adds it), so a product never clears C in a pass of
//     its own nor reads the C it overwrites, and alpha costs nothing in packing (A can
//     be read in place whatever alpha is: attention's scaled score products).
//   - Two kernel shapes (kernel.go), chosen at run time with golang.org/x/sys/cpu: avx512
//     (12×32 over two B panels, the tile in 24 of the 32 ZMM registers,
//     kernel_avx512_amd64.s) where the CPU has AVX-512F, else avx2 (6×16 in twelve YMM
//     registers, kernel_amd64.s). On an Intel Xeon with two 512-bit FMA units the avx512
//     kernel runs at 1.7× the avx2 one (136 against 79 GFLOP/s on one core, L1-resident);
//     on AMD Zen 4, which splits a 512-bit FMA in two, they tie. Both pack B in 16-wide
//     panels, so BPacker and its callers are the same for both; avx512 reads two adjacent
//     panels per call and a narrow 12×16 form takes an odd last one.
//   - The micro-kernels take general strides for both operands (kernelFunc), so they
//     read packed panels and matrices as stored alike. Packing costs about a nanosecond
//     per element and pays for itself only when the element is used often: A is read in
//     place when n is at most 256 and B (not transposed) when m is at most 96, which
//     makes the products of a training step's small and skinny layers (32×784×128, the
//     2048×128×128 projections of a small transformer) as fast as OpenBLAS's. Rows whose
//     leading dimension would make them share a few L1 sets are packed regardless: a
//     multiple of 256 floats for avx2 (Zen 3's 8-way L1), of 1024 for avx512 (the
//     Xeons' 12-way L1 holds twelve rows 2 KiB apart, so the 2048×128×512 products of
//     a transformer step read A in place instead of spending a third of their time
//     packing it). Packing that transposes (a row-major A strip, a transposed B
//     panel) moves all of a strip's rows by sixteen columns at a time with AVX-512
//     shuffles where the CPU has AVX-512F, else four rows by eight columns with AVX2
//     shuffles where it has AVX2 (NEON on arm64), whatever the implementation (PureGo
//     included), and element by element otherwise; the tests run all three. B as stored
//     is copied eight panels at a time (packBChunk): its panels lie 16 KiB apart at kc =
//     256, so copying whole rows sent each row's stores to every panel of the block, all
//     in one L1 set, which made the plain 1024×4096×4096 product 10-20% slower than its
//     B-transposed form at 2 threads on the H200 host. A transposed A is copied the same
//     way, four strips at a time (copyStrips, packAChunk; see "Packing", below).
//   - GML_GEMM_KERNEL=avx2 or avx512 forces a shape; where the CPU cannot run its
//     assembly, the shape's Go code runs, so a machine without AVX-512 still tests the
//     avx512 packing and edge handling (the tests run every shape either way).
//   - arm64 runs the neon shape (6×16, kernel_arm64.s) always: NEON (ASIMD) is part of
//     every arm64 CPU. Go's arm64 assembler has FMLA only vector by vector (no by-lane
//     form, no vector FMUL), so each element of A is broadcast by a load (LD1R) and
//     alpha is applied by an FMLA over C or over zero. One-row products use NEON AXPY
//     and dot products, the packing transposes NEON TRN1/TRN2. The tests run it under
//     qemu-user on x86-64 (make test-arm64), which checks results, not speed: its speed
//     has not been measured on arm64 hardware. GML_GEMM_KERNEL=avx2 runs the same tile
//     in Go within Native, GML_BLAS=go the PureGo implementation.
//   - One-row products (m == 1: a batch-1 dense layer, an ONNX Gemm with transB) skip
//     packing (gemv.go): with B as stored they are AXPYs of B's rows into C, with B
//     transposed one dot product per column, both in assembly and split by columns when
//     large. Packing would copy all of B to use one row in six of the micro-tile.
//     Measured here for 1×784 times 784×128: 10-11 µs against OpenBLAS's 27-39 µs.
//   - PureGo runs the same blocked driver with the Go code of the avx2 shape and always
//     works; Native falls back to it when an x86-64 CPU lacks AVX2 or FMA, and on
//     architectures other than amd64 and arm64. On the development machines it runs at
//     1.3-3.6 GFLOP/s on one core at n=1024 (2-3% of OpenBLAS in the same runs): the
//     lower bound on any machine, arm64 included.
//   - OpenBLAS (loaded at run time by internal/openblas, never linked) is used only when
//     GML_BLAS=openblas asks for it and it loads; otherwise GML_BLAS=native (the default)
//     or GML_BLAS=go. DefaultNote says why a requested implementation was not taken.
//     The benchmark `gml bench cpu` measures Native against OpenBLAS in the same run.
//   - Float64: Native and PureGo use gonum's blas/gonum Dgemm, so the plain-matrix
//     helpers agree with gonum's mat.Dense exactly; OpenBLAS uses cblas_dgemm.
//   - Half precision is not handled here: the CPU backend converts F16/BF16 to float32.
//   - Parallel split (plan.parallel, schedule.go): one worker per 512K multiply-adds, at
//     most one per C tile and per CPU (parallel.Workers), so a small product stays on the
//     calling goroutine and a mid-sized one does not wake sixteen. Each worker lives
//     through the whole product (parallel.Run). Where B is read in place, or small
//     enough for each worker to pack the columns it uses (a transformer's weights times
//     2048 tokens), nothing is shared and there is no barrier (parallelPrivate): a worker
//     starts on items as soon as its goroutine runs, and a late one finds less to do.
//     Otherwise, per step (a k-slice over an nc panel of C) the workers take tasks of
//     packing the B panel (B is packed once, shared by all) and, when they are at most
//     four, A, eight panels or strips a task, and then (row block, column range) items,
//     both from atomic counters, packing their own A block where A is not shared.
//     Panels alternate between two buffers. There is no barrier: a worker waits only
//     for what it reads or overwrites (see "Waiting", below). Row blocks shrink below mc (to
//     four kernel strips, then to one) before the columns are split, since every column
//     part of a row block packs that A block again. Items span whole kernel widths, so
//     workers share cache lines of C at most at their edges and the result does not
//     depend on the number of workers. Taking work dynamically rather than splitting C
//     in fixed parts keeps the cores busy when another process slows one of them, the
//     usual case on shared machines. The row chunk is then evened out so that the items
//     end in whole rounds (with avx2's mc of 144, m = 2048 on two workers in 16 chunks
//     of 132 rows, not 14 of 144 and one of 32). A waiting worker polls with PAUSE for up
//     to 100µs (parallel.SpinUntil, which does not poll on a machine found
//     oversubscribed) and then sleeps: waking a sleeping goroutine at every step cost
//     about a third of the speed at n=512 on a quiet machine, while polling for long
//     holds a core that a descheduled peer needs. On the H200 host at 16 threads,
//     polling so instead of checking 4000 times without PAUSE took n=1024 from 855-968
//     to 907-1074 GFLOP/s and n=2048 from 1089-1242 to 1172-1245 (three interleaved
//     runs; OpenBLAS 960-1015 and 1090-1104 in the same runs). There, sharing A's
//     packing among sixteen workers as well, with a grid of one item a worker (8 row
//     blocks of 132 by 2 column parts at n=1024), was 10-15% slower than A packed per
//     item: the strips then come from other cores' caches.
//   - Split sum (kParts): a product with few C tiles and a long k, as the weight
//     gradients dW = Xᵀ·dY of a training step (128×128 summed over 2048 tokens: 44 tiles
//     of the avx512 kernel for sixteen cores), sums contiguous parts of k at the same
//     time, each into a C of its own, and adds them to C in order at the end, a row
//     block as soon as all its items are done. The parts read B in place where they can
//     (dY, as stored), so a weight gradient packs no B and meets at no barrier. The number
//     of parts follows from the shape and the kernel alone (about 512 tiles over all
//     parts, in as few steps of one k-slice per part as that allows, for products of 8M
//     multiply-adds or more), so the result is the same bits whatever GML_THREADS is,
//     serial runs included. On the
//     H200 host's Xeon a first setting of it (6 parts for 128×128×2048) took that product
//     from 88 to 198 GFLOP/s and 256×128×784 from 123 to 210 at 16 threads (OpenBLAS:
//     232 and 230). Reading B in place without barriers then took the transformer's
//     weight gradients (128×128, 128×512 and 512×128 summed over 2048 tokens) from
//     195-376 to 388-683 GFLOP/s at 16 threads (133-199 to 194-230 at 2), 256×128×784
//     from 217 to 421, and cnn28's dense layer 64×128×1600 from 107 to 244.
//   - Tried for the 2-thread gap to MKL on the H200 host's Xeon (1024×4096×4096 and the
//     squares at 62-78% of the FMA peak, MKL near it) and dropped, each against main in
//     interleaved rounds that vary by ±15% there: avx512 kernel loops that take four
//     steps of k per pointer update for packed, row-major or transposed A (fewer integer
//     instructions beside the FMAs; the same bits): 0.87-1.15 of the same code without
//     them per form at 2 threads, with no consistent sign, 0.95-1.05 at 16; row blocks
//     kept at mc with the columns split where A is shared (each B micro-panel used 29
//     times instead of 11 at m = 1024): 0.84-0.99 on the plain form alone, and with the
//     chunked packing below 0.86-0.94 on n = 1024 in all three rounds; a software
//     prefetch of A, kc = 192 and mc = 512 (xeonTuning). What remains of the gap is in
//     the micro-kernel's time (83% of the mlp4096 step's samples at 2 threads), where it
//     runs below its own L1-resident 136 GFLOP/s a core, while MKL reaches about 146 a
//     core over the whole product. Timed on the host (timers not kept): the 1024-row
//     forms spend 6-10% of the workers' time packing, 1.5% at the barrier, and the rest
//     in the kernel, which ran at 84-91 GFLOP/s a core there (two thirds of its peak).
//   - Prefetches, for that gap (the same host, 2 threads). The avx512 kernel prefetches
//     its C tile during the last 48 steps of the sum, a row a step, instead of at its
//     start: the rows of a 4096-wide C lie 16 KiB apart, all twelve in one set of the
//     12-way L1, where the A and B lines of a 256-step sum evicted what an early prefetch
//     brought in. And each step prefetches into L2 the same row of the next two B panels
//     (the next call's, packed or in place): at m = 1024 on two workers a pair of panels
//     serves eight strips of A and came from L3 at its first use (replaced since by a
//     prefetch of the panels' own rows: Sweep, below). B as stored is copied
//     into its panels by assembly that prefetches the rows 32 ahead (copyPanels), each on
//     a page of its own where the hardware prefetchers do not reach. Measured with the
//     variants interleaved call by call in one process against the code before (six
//     processes of four or five rounds, per-process medians of the ratios): the kernel's
//     prefetches 1.03-1.23 on 1024×4096×4096tb, 1.02-1.14 on 4096×4096×1024ta, 0.96-1.07
//     on the plain form; the prefetching copy 1.02-1.04 on the plain form, and with the
//     kernel's 1.07-1.15. Operands and packing buffers on huge pages (the hugepage
//     package; the host has them in `madvise` mode) ran 2-13% faster than in the plain
//     process run next to them in eight of nine such pairs. Dropped in the same runs:
//     prefetching the next four rows in the AVX2 packing transpose (with it the
//     B-transposed form lost to the kernel's prefetches alone in all six processes, while
//     the plain form gained 0-7%), row blocks of 192 (0.92-1.08), and, in one earlier
//     round each, a prefetch of the next B pair spread over a row block's calls (an extra
//     kernel argument) and nc = 4096, within the noise.
//   - Sweep (tuning.sweep, macroKernel): the avx512 kernel broadcasts twelve elements
//     of A a step and loads two 16-wide rows of B. In the BLIS order (for each pair of B
//     panels, every strip of the row block) the pair, 32 KiB at kc = 256, stayed in L1
//     next to a 12 KiB strip of A, C and the prefetches: the 48 KiB L1 was full, and the
//     kernel ran at two thirds of its L1-resident speed. GotoBLAS/OpenBLAS and BLIS on
//     AVX-512 keep the small broadcast micro-panel in L1 and stream the vector one from
//     L2 (BLIS's skx sgemm: 32×12 with kc = 384). So for avx512 a strip of A now sweeps
//     512 columns of the block (16 calls, the kc×512 block of B, 512 KiB, in L2 beside the
//     A block) before the next strip; the other shapes keep their width (unmeasured
//     elsewhere). The order changes no sum, so the bits are those of before. Each step
//     of the kernel prefetches into L1 row p+16 of its own two panels, instead of row p
//     of the next pair into L2. On the H200 host at 2 threads, with the variants
//     interleaved call by call in one process (medians of the per-round ratios to the
//     BLIS order, two processes of 8 rounds): the sweep alone 1.02-1.03 at n = 1024,
//     1.09-1.15 at n = 2048, 1.06 on 1024×4096×4096tb, 1.06-1.07 on 4096×4096×1024ta and
//     1.03-1.39 on the plain 1024×4096×4096; with the prefetch (one process) 1.08, 1.23,
//     1.11, 1.12 and 1.07, where OpenBLAS ran at 1.00, 1.19, 1.19, 0.95 and 1.14: the
//     medians were then 216, 208, 204, 185 and 218 GFLOP/s against OpenBLAS's 209, 201,
//     218, 145 and 221 (torch.mm, MKL, 273-322 on the 4096 forms in the run before). The
//     small training products (2048×512×128tb, 2048×128×512, 512×128×2048ta,
//     2048×2048×512tb) ran at 1.02-1.60 of before (4 rounds each, noisy), and at 16
//     threads the products above at 1.01-1.64 with the sweep and 0.99-1.20 with the
//     prefetch too (runs disturbed by other load: n = 1024 at a quarter of OpenBLAS in
//     every variant). Dropped in the same runs: kc = 384 with a sweep of 256 or 512 (with
//     a sweep of 256 0.97-1.14 of kc = 256's sweep of 512 per form, and with the prefetch
//     0.91-1.01 of it), a sweep of 1024 (as 512), and the prefetch 8 rows ahead (as 16).
//   - Micro-kernel speed (measured with a timing harness that asserts nothing, so not
//     kept: kernel_speed_linux_test.go of commit d8ecc1a, run with GML_GEMM_SPEED=1: the
//     kernel alone in L1, the macro-kernel over one block, the mlp4096 step's three
//     products through the driver, kernels and tunings interleaved, with the core clock
//     from a chain of dependent adds and 512-bit FMAs per cycle; and the kernel pinned to
//     CPU 0, CPU 1 and both at once). On the H200 host's Xeon, on one thread, the avx512
//     kernel ran the step's three products at 148-151 GFLOP/s in one process, 1.68-1.76
//     FMAs a cycle at 2.57 GHz (88% of the peak of 2, as fast as MKL's 127-157 in the
//     day's other runs), and at 88-137 in a later one, where torch.mm ran at 132-146 in
//     the same round (tb and plain 0.67 of it, ta 1.04); the macro-kernel alone at
//     1.6-1.9 a cycle. Pinned to CPUs 0 and 1 at once, each ran as fast as alone (the 16
//     vCPUs are cores of their own, not SMT siblings), but CPU 1 at 1.3-1.5 a cycle
//     against CPU 0's 1.6-1.9, alone or not, in all five rounds. At 2 threads the
//     products ran at 193-220 GFLOP/s (1.2-1.4 a cycle per worker) against torch.mm's
//     215-291 in the same rounds (tb 0.73-0.83 of it, plain 0.89-0.92, ta 0.88-0.95): the
//     gap there lies beside the kernel's own speed. Tried on the kernel there and
//     dropped (medians of per-round ratios to the 12×32 kernel, 2 threads, 8 rounds then
//     two processes of 2): PCALIGN $64 on the loop (0.99-1.03); a 14×32 tile (28
//     accumulators, one broadcast register, 14% less B traffic per FMA, mc = 378; the
//     same sums, so the same bits) with general strides (tb 0.97-1.04, plain 1.00-1.04,
//     ta 0.95-1.14; one thread 0.99-1.02), with a loop for packed operands addressed by
//     displacements (tb 0.97, plain 1.01, ta 1.12; one thread 0.93-1.03) and that loop
//     prefetching B 32 rows ahead (tb 0.98-1.06, plain 1.00-1.03, ta 1.02-1.20; one
//     thread 1.02-1.06 in six single pairs), where the mlp4096 step took 1812 ms against
//     main's 1727 (one pair at 2 threads).
//   - Packing, for the mlp4096 step at 2 threads, where a profile on the H200 host gave
//     packing 9% of the samples (memmove under packA 2.7%, transpose4AVX2 2.9%,
//     copyPanels 2.5%). A transposed A (dW = Xᵀ·dY) was copied one memmove call per
//     mr floats, strip by strip over rows 16 KiB apart; copyStrips (copyPanels' assembly
//     for widths 4 to 16) copies four strips at a time row after row, prefetching 32
//     rows ahead: 0.32 against 0.81 ns an element on Zen 4 (BenchmarkPack), and
//     4096×4096×1024ta at 1.10 (1.05-1.11) of before on the host at 2 threads and 1.10
//     (1.06-1.14) at 1 (call by call in one process, medians of per-round ratios, 6 and
//     4 rounds). transpose16 (AVX-512) packs a row-major A strip or a transposed B panel
//     in one pass over its rows with a masked store per column: 0.25 against 0.33 ns an
//     element for A and 0.24 against 0.31 for B on Zen 4; on the host the plain and
//     B-transposed forms ran at 1.016 and 1.030 of before, 0.985 and 1.019 with
//     transpose4 in its place (within the noise). The k-slices are the outer loop of
//     serial and parallel, so that A, shared or kept (keepA), is packed once instead of
//     once per nc panel (twice at n = 4096); the bits are the same, and it was in every
//     variant above. Dropped there: each worker prefetching into L2, a few lines after
//     each kernel call, the sources of its share of the next step's packing (without it
//     1.011, 1.032 and 1.122 on the three forms, with it 1.016, 1.030 and 1.103), and A
//     shared at 2 workers for 4096×4096×1024ta (sharedAMax of 1.5M floats: 1.055).
//     Process against process (main, pack; two ABCD-DCBA rounds) the forms were within
//     the host's ±15%, as was one mlp4096 step pair.
//   - Waiting (plan.parallel), for the mlp4096 step at 2 threads. Timed per worker and
//     per CPU on the H200 host (pinned to CPUs 0 and 1; timers not kept), the loop this
//     replaced, where per step each worker packed a fixed half of the step's panels and
//     all met at a barrier before taking items, spent on 1024×4096×4096 89% of each
//     worker's time in the macro-kernel, 5% packing B and 6% at the barrier (11 ms of a
//     191 ms call); on its B-transposed form 3-6% at the barrier, on 4096×4096×1024ta
//     3% (2% packing A per item, 1.3% B) and on 2048³ 2-6%. The wait was the step's
//     tail: eight items a step (132 rows by 3072 or 1024 columns) on two cores of
//     unequal speed. In the kernel CPU 1 ran at 84-89 GFLOP/s against CPU 0's 117-132
//     on the two 1024-row forms (A shared), doing 41% of the multiply-adds, while on
//     4096×4096×1024ta and 2048³ the two ran alike (121-148). So a step's packing is
//     now cut in tasks that the workers take, and there is no barrier: a step's packing
//     waits for the items of the steps up to two before (its buffers' last readers), its
//     items for its packing, and an item for the same block of C in the step before with
//     that panel, so each element of C still sums its slices in serial's order (the same
//     bits whatever the number of workers and the timing; TestSameBitsAnyWorkers reorders
//     them with a B that sleeps at random as it packs). A worker out of items packs the
//     next step and starts on it while the other finishes; the waits fell to 0.1% of
//     the time. Call by call in one process against the barrier loop (8 rounds, medians
//     of the per-round ratios and their ranges): at 2 threads 1.05 (0.88-1.30) on the
//     plain form, 1.03 (0.80-1.13) on tb, 1.01 (0.98-1.10) on ta and 1.04 (0.92-1.11) on
//     2048³; at 16 threads 1.02 (0.86-1.34), 1.11 (0.96-1.24), 1.14 (0.91-1.25), 1.15
//     (0.98-1.36), and 1.08 (0.95-1.50) on 1024³. The same packing tasks with each step's
//     items waiting for all of the step before (the barrier's tail kept) ran as the
//     barrier loop (1.00, 1.02, 1.03, 1.01 at 2 threads): the gain is the tail, not the
//     balance of the packing. Tasks were of eight panels or strips in those runs; they
//     are now fewer where a step has fewer such tasks than workers (packTask), which at
//     16 workers halves those of 1024-wide panels (unmeasured). What remains at 2
//     threads is CPU 1's slower kernel on the 1024-row forms.
//   - Bias epilogue (SgemmBias): a dense layer's bias, bias[j] added to column j of C,
//     is added tile by tile by macroKernel after the last k-slice, while the tile is in
//     L1 (one AXPY by 1 per row of the tile, which is exactly the add), or row by row
//     after the parts of a split sum are added; so C = op(A)·op(B) + bias costs no pass
//     over C of its own and has the bits of the product followed by the add. The CPU
//     backend fuses a MatMul followed by such an Add into it. SgemmBiasThen also calls a
//     function on each stretch of a row once its bias is added (per row of macroKernel's
//     block, while the block is in L2; per row where the bias is added row by row): the
//     CPU backend applies a dense layer's activation there.
//   - Every entry point validates dimensions, leading dimensions and slice lengths and
//     returns an error naming the operand; nothing reads out of bounds.
package gemm
