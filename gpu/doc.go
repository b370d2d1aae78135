// Package gpu is gml's Vulkan backend: device discovery and selection, memory, pipelines,
// command recording, the matrix-product entry points used by benchmarks, and the
// runtime.Backend implementation that runs graph segments on the device.
//
// Decisions:
//   - Loading: the package opens libvulkan.so.1 (then libvulkan.so) itself with dlopen and
//     hands vkGetInstanceProcAddr to github.com/goki/vulkan, whose own loader asks only for
//     libvulkan.so (a -dev package). No loader, no device or a driver older than 1.1 is an
//     error wrapping ErrNoVulkan, never a crash; callers fall back to the CPU.
//   - Newer structures (KHR cooperative matrix, bfloat16, NV cooperative matrix properties)
//     are declared by hand in the cgo preambles: the binding is Vulkan 1.0 and the system
//     headers are 1.3.239. Functions the binding lacks are called through pointers from
//     vkGetInstanceProcAddr.
//   - Our own C calls instead of goki/vulkan where it is unsafe: its wrappers copy a
//     slice of structs into C memory and free that copy from a finalizer that can run
//     while the driver still reads it (random SIGSEGVs in lavapipe, which compiles
//     pipelines for seconds inside the call), and the create infos they copy are never
//     freed. So everything on the recording, submission and transfer paths (command
//     pools, command-buffer allocation and begin, pipeline barriers, buffer copies,
//     descriptor-set allocation and writes, queue submission) and the init calls with
//     the same hazard (compute-pipeline creation, queue-family queries) go through small
//     C shims that build the structs on the C stack and call the function pointers
//     looked up once per device (vkFuncs). goki/vulkan stays for calls that take
//     scalars or Go memory it passes straight through (binding pipelines and descriptor
//     sets, push constants, dispatch, timestamps, fences, destruction) and for one-off
//     creation; where such a call keeps a Go slice's address in its C copy
//     (shader-module code, pipeline-layout set layouts, queue priorities), the slice is
//     kept alive with runtime.KeepAlive.
//   - Selection: discrete > integrated > virtual > CPU implementations (lavapipe), then the
//     largest device-local heap; GML_VK_DEVICE (an index or a name substring) overrides.
//     On CPU implementations, whose device memory is this process's heap, robust buffer
//     access is enabled so that a stray shader access cannot corrupt Go's memory
//     (GML_VK_ROBUST=1 asks for it anywhere).
//   - Memory: buffers are suballocated (first fit, 256-byte aligned) from blocks of
//     min(256 MiB, maxStorageBufferRange, maxMemoryAllocationSize); larger buffers get a
//     block of their own. Each block has one VkBuffer; descriptor sets bind whole blocks and
//     shaders receive element offsets in push constants, so a handful of cached sets serve
//     every dispatch and are written once. Host-visible device-local memory is mapped and
//     written directly only on devices whose memory is the host's (integrated, CPU); discrete
//     cards use a reused staging buffer, with all copies of one Upload/Download batched.
//   - Recording: a Recorder puts many dispatches into one command buffer and inserts a
//     buffer memory barrier only before a dispatch that reads or writes what an earlier,
//     unsynchronised dispatch wrote, or writes what one read. A prepared segment is one
//     Recording resubmitted by every run; its timestamped twin is recorded only when a run
//     asks for a profile, so profiling off costs nothing.
//   - Uploads of up to 64 MiB in all (feeds, a training batch, learning rates, step
//     counters) are held in a host buffer and copied at the head of the next submission,
//     so a training step's inputs and compute reach the GPU in one submit; any other
//     transfer, a one-shot command, or a Free of memory one of them targets flushes them
//     first. Large host copies are split over the cores.
//   - Errors in the data: an index outside its axis (Gather, Embedding, TakeAlong,
//     Scatter, ScatterAdd) fails the run with the CPU backend's words ("gpu: #3 gather
//     f32[4 3]: index 12 out of range for an axis of size 10"). The shader reads such an
//     index as zero or skips it, and swaps its dispatch's tag into a 16-byte error word
//     in host-visible memory with atomicCompSwap (the first report of a submission wins)
//     followed by the index's value; the host reads the word after the fence wait every
//     run already does and clears it, so checking costs no readback and no barrier. The
//     rest of the submission still runs: outputs of that run are unspecified (state
//     written by the same submission, such as an optimizer step, used the zeroed rows),
//     while the device, buffers and prepared programs stay usable. OneHot leaves a row
//     whose label is outside [0, depth) zero, as on the CPU. Vulkan errors carry the
//     call that failed; out of memory is an *OutOfMemoryError with the sizes involved.
//   - Quantised weights (Q4_0, Q8_0, Q4_K) stay in their blocks in device memory:
//     matmul_quant.comp decodes 32 weights at a time into registers inside the product
//     (x @ wᵀ and w @ y) and decodes whole tensors for Cast; encoding runs on the CPU.
//   - The state-space and linear-attention recurrences (ssm_conv, ssm_scan, wkv6, gla,
//     wkv7 and their backward ops) run sequence by sequence in ssm_*.comp: the scan
//     with a channel's state in registers, the per-head ops with one workgroup per head
//     and one invocation per line of its S×S state (S at most 64). Backward passes keep
//     checkpoints every 32 tokens and recomputed chunks in scratch (about (T/32+33)·S²
//     floats per head), and sum gradients shared across sequences or channels in a
//     second pass rather than with float atomics. Custom ops (runtime.RegisterCustomOp)
//     call Go and always run on the CPU.
//   - Data types: the engine's dtypes are f32, f16, bf16, i32, i64 and bool. Arithmetic
//     ops (elementwise, reductions, softmax, norms, convolution, pooling, attention,
//     optimizer updates, cumsum, variance) run on f32 tensors, matmul on f32, and on
//     f16 and bf16 where the device has cooperative matrices for them. Ops that move
//     or select elements without arithmetic on them (slice, pad, tile, concat,
//     depth-to-space, assign, the index ops, where) take every dtype by element size;
//     comparisons, arg-max/min and top-k take any numeric dtype and logical ops bool;
//     cast converts between all of them with the CPU's semantics. Shaders index with
//     32 bits, so tensors of 2^31 elements or more, and every other dtype or shape a
//     shader does not cover, are reported unsupported: the scheduler runs those nodes
//     on the CPU and counts them (GML_LOG_DEVICE=1 logs them; the op table's GPU
//     column, tensor.Op.GPU, names the shader of every op that has one).
//   - Matrix products in tiers. f32: a matrix-vector shader when the left operand has at
//     most 8 rows; otherwise a tiled shader with double-buffered shared slabs, its tile
//     chosen by how many 128x128 tiles the output has and by operand layout (8x4 outputs
//     per thread for plain operands, 8x8 for transposed ones, measured per layout), the
//     first that fits the device; vec4 loads when strides allow; split-K (slices of K
//     into scratch, then a column-reduction pass) when the output has too few tiles to
//     fill the GPU. Graph products of big untransposed f32 operands copy A out
//     transposed first, since the shader runs 10% faster on a transposed A (2.3% off
//     an mlp4096x4_b1024 training step). f16 and bf16 inputs: on devices with
//     VK_NV_cooperative_matrix2, big products use workgroup-scope cooperative
//     matrices loaded through tensor layouts (SPIR-V written by shaders/cm2, since
//     glslc cannot compile them; native bf16 there; a driver that rejects such a
//     pipeline gets the subgroup-scope shader instead); otherwise,
//     and for products of fewer than 256 128x128 tiles, NV subgroup cooperative
//     matrices (16x8x16, 1.55x the 16x16x16 rate on the H200) staged in shared memory by
//     the shader, where bf16 is widened to f16 (exact inside f16's range, about 6e-5 to
//     65504). Both accumulate in f32 and read untransposed operands only.
//   - f16/bf16 MatMul nodes of a graph (ONNX models) use those shaders: a transposed
//     operand is first copied out untransposed, the product accumulates in f32 into
//     scratch, and a cast writes it in the node's type. K and N must be multiples of 8
//     for the subgroup-scope shader; other sizes take the workgroup-scope one. Products
//     neither can take (devices without cooperative matrices, batched products with K
//     or N not multiples of 8) widen their operands to f32 in scratch, run the f32
//     shader and round the result once, so f16/bf16 products never leave the GPU. f32 MatMul nodes that allow f16 or
//     bf16 precision (nn.MixedPrecision) round their operands into scratch and write the
//     f32 accumulation directly; where the device cannot, or the product is too small
//     for the rounding passes to pay (under 2^28 multiply-adds), they run in f32.
//   - Shaders (package shaders) take tile sizes as specialisation constants; pipelines are
//     cached per variant and constants. Tile loops carry [[unroll]] and have no early
//     exits: a loop glslc leaves rolled puts the register arrays it indexes in local
//     memory (f16 matmul 34 TFLOP/s without unrolling, f32 8x8 tiles 2.3 with a
//     `continue` in the store loop). The two big f32 tiles are also compiled in.
//   - A new workgroup-scope cooperative-matrix pipeline runs about 5x slower for its
//     first 1-4 seconds on the H200, then at full speed, and at full speed at once in
//     later processes: the driver appears to replace its first code and cache the
//     result on disk. Benchmarks warm up for 5 s.
//   - GML_VK_PIPELINE_STATS=1 makes pipelines capture what the driver compiled
//     (VK_KHR_pipeline_executable_properties: registers, local and shared memory,
//     binary size), read with Device.PipelineReports; `gml bench gpu-matmul -stats DIR`
//     prints them. Off by default: capturing may slow pipeline creation, and some
//     workgroup-scope kernels measured about 5x slower with it on the H200 (not
//     confirmed; see PERF.md item 11). Time kernels with it off.
//   - Measured results and the tuning history are in PERF.md.
//
// Matrix products through cuBLASLt (NVIDIA):
//   - Big products (at least Device.ProductPath().MinWork multiply-adds, M·N·K over the
//     batch, for f32; f16 and bf16 products count half, TF32 ones four times, by what
//     cuBLASLt gains on each: ProductPath.Takes) run through cuBLASLt on the Vulkan buffers themselves, where the libraries
//     and a matching device exist; everything else stays on the shaders. libcudart and
//     libcublasLt are opened with dlopen at Open (no build-time CUDA), newest major
//     version first (13, 12, 11), looked for in: GML_CUDA_LIB_DIRS (a path list); the
//     dynamic linker's search (LD_LIBRARY_PATH, the ldconfig cache); $CUDA_HOME,
//     $CUDA_PATH and /usr/local/cuda (lib64, targets/x86_64-linux/lib); the NVIDIA
//     Python wheels' nvidia/*/lib folders (PyTorch's nvidia-cublas, nvidia-cuda-runtime)
//     under $VIRTUAL_ENV, /opt/*/.venv, ~/.local and the system site-packages. On the
//     H200 image of 2026-12 the ldconfig cache gives CUDA 13.0's
//     /usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.13 and libcublasLt.so.13
//     (13.1.0.3); PyTorch's copies are in /opt/torch/.venv/.../nvidia/cu13/lib.
//     The CUDA device is matched to the Vulkan one by UUID. GML_CUDA=0 turns the path
//     off; `gml devices` prints which path products take and why.
//   - Interop: blocks that may feed a product are allocated exportable
//     (VK_KHR_external_memory_fd) and imported once per block (cudaImportExternalMemory,
//     a mapped buffer cached until the block is freed). One exportable timeline
//     semaphore per device (VK_KHR_external_semaphore_fd, cudaImportExternalSemaphore)
//     orders the CUDA stream against the queue: a recording is split at each run of
//     products, the stream is given "wait for value v, products, signal v+1" and the
//     queue's batches wait and signal around them, with no host round trip (interop.go).
//     Each run of products still costs about 0.35 ms on the H200: the GPU switches from
//     the Vulkan context to CUDA's and back, which no ordering avoids (PERF.md), so the
//     threshold keeps products on the shaders up to about 2^35 f32 multiply-adds.
//     GML_CUDA_TRACE=1 logs each split run's hand-overs as the host sees the timeline.
//     No scheduling setting shortens the switch (measured, PERF.md), so all stay at the
//     driver's default; for measuring again, GML_VK_QUEUE_PRIORITY (low, medium, high,
//     realtime: VK_KHR_global_priority, falling back to the default when refused),
//     GML_CUDA_STREAM_PRIORITY (high, low or a number) and GML_CUDA_SCHEDULE (auto,
//     spin, yield, blocking: cudaSetDeviceFlags) set them (priority.go), and
//     Device.HandoverProbe (`gml bench gpu-matmul -handover`) times the switch under them.
//   - A new shape's plan (descriptors, heuristic algorithm, cached per shape) is run once
//     on the idle stream into scratch output before it is ever queued behind a timeline
//     wait: a kernel's first launch may load its module lazily, and a load may
//     synchronize the context, which behind a wait that only the host's next submission
//     satisfies would deadlock (the first H200 run hung so in its self-test).
//   - f32 products are true FP32 (CUBLAS_COMPUTE_32F) unless the node allows TF32
//     (tensor.MatMulAttr.TF32, nn.MixedPrecision("tf32")); f16 and bf16 accumulate in
//     f32; transposes and strided batches map onto cuBLASLt's column-major layouts.
//   - Failure: the engine starts at the first big product with a checked self-test
//     product (60 s limit; a stuck start is abandoned and named). A shape the library
//     refuses stays on the shaders; a CUDA error turns the engine off for the process
//     with one logged warning, and the run it broke either finishes on the shaders (an
//     error while queueing) or returns an error (an error while running), never a wrong
//     result.
//   - Other vendors: productEngine (interop.go) is the seam. hipBLASLt on AMD would be
//     a second engine: dlopen libamdhip64 and libhipblaslt, hipImportExternalMemory with
//     hipExternalMemoryHandleTypeOpaqueFd on the same exported blocks, and
//     hipImportExternalSemaphore of the timeline fd (HIP mirrors CUDA's handle types;
//     whether ROCm supports timeline fds was not checked here: without them, ordering
//     would need a host wait per run), the device matched by UUID; the splitting,
//     fallback and threshold code is shared.
package gpu
