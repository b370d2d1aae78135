// Package parallel holds the goroutine parallel-for used by the CPU kernels (GEMM,
// convolution, and the CPU backend's elementwise and reduction loops).
//
// Decisions:
//   - One primitive, For, that splits an index range into at most Workers() contiguous
//     chunks. Workers is GOMAXPROCS, which Go sizes to the process's affinity mask and
//     cgroup CPU limit, unless GML_THREADS sets the count (a bad value is reported on
//     stderr and ignored). Contiguous chunks keep each goroutine on its own cache lines; a grain size
//     keeps small loops on the calling goroutine, where starting goroutines would cost
//     more than the work.
//   - Work is split by cost: WorkersFor gives a job one worker per MinWork multiply-adds,
//     so a small product or a few short attention sequences stay on one core however
//     many the host has, and a large one uses them all (GEMM, attention, batched
//     products).
//   - Run hands its calls to a pool of worker goroutines (pool.go) that poll for work
//     for a short while (spinTime) after each call before they sleep. Starting a
//     goroutine is cheap, but on a many-core host it waits for the scheduler to wake
//     an idle thread, and those wakes happen one after another: 8µs for a Run of 16 on
//     the 16-core host, paid by every op of a training step. One Run
//     uses the pool at a time; a nested or concurrent Run starts goroutines as before,
//     and GML_POOL=off makes every Run do so.
//   - A panic in a worker would otherwise kill the process (nothing can recover a panic
//     on another goroutine); For carries it back to the caller instead.
package parallel
