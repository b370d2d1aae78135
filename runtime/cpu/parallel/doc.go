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
//   - Run starts a goroutine per call. GML_POOL=on hands the calls instead to a pool
//     of worker goroutines (pool.go) that poll for work for a short while (spinTime)
//     after each call before they sleep: that saves the scheduler's wake-ups (8µs for
//     a Run of 16 on the 16-core host) and won on 2 quiet cores, but the pollers made
//     steps slower on 16 cores and on a loaded machine, so it is not the default. One
//     Run uses the pool at a time; a nested or concurrent Run starts goroutines.
//   - A panic in a worker would otherwise kill the process (nothing can recover a panic
//     on another goroutine); For carries it back to the caller instead.
package parallel
