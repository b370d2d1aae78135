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
//   - Selection: discrete > integrated > virtual > CPU implementations (lavapipe), then the
//     largest device-local heap; GML_VK_DEVICE (an index or a name substring) overrides.
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
//   - Small uploads (up to 1 MiB in all: feeds, learning rates, step counters) are held in a
//     host buffer and copied at the head of the next submission, so a training step's
//     inputs and compute reach the GPU in one submit; any other transfer, a Free (the
//     memory may be reused) or a one-shot command flushes them first.
//   - Shaders (package shaders) take tile sizes as specialisation constants; pipelines are
//     cached per variant and constants. Tile loops carry [[unroll]]: without it NVIDIA's
//     compiler kept accumulator arrays in local memory (f16 matmul 34 TFLOP/s, 165 with it).
//   - Half precision: f16 matrix products use NV cooperative matrices (16x8x16, 1.55x the
//     16x16x16 rate on the H200) with f32 accumulation; bf16 inputs are widened to f16 while
//     staged in shared memory, because Debian's glslc cannot emit KHR cooperative matrices or
//     bfloat16 types. That is exact for bf16 values inside f16's range (about 6e-5 to 65504).
//   - The backend runs F32 nodes (typed ops, such as comparisons and casts, check their own
//     dtypes); shapes a shader does not cover are reported unsupported and run on the CPU,
//     and the runtime counts them.
//   - Measured results and the tuning history are in PERF.md.
package gpu
