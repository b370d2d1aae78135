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
//   - Run hands its calls to a pool of worker goroutines (pool.go) and makes one call
//     itself; Run(n) wakes only n-1 workers, so an op split in two wakes one. Waking a
//     parked goroutine goes through the Go scheduler (8µs for a Run of 16 on the
//     16-core host, GML_POOL=off), so a worker first polls its own cache line for a
//     short while after each call (GML_POOL_SPIN, default 50µs) and then parks on a
//     channel: back-to-back ops find it awake, an idle process uses no CPU. The polls
//     are bounded because the earlier pool, whose workers polled for 200µs and yielded
//     only every 100µs, made 16-thread steps 1.4-2x slower: sixteen pollers held every
//     thread the Go scheduler had (for its collector, timers, goroutines back from cgo)
//     and kept the cores from their idle and turbo states. They use the PAUSE hint
//     (leaving the core to its hyperthread sibling), and stop for 100ms once a poller
//     finds it was descheduled: the machine is oversubscribed, and a poller there takes
//     the core of another process or of its own Run's caller (twice the step time on a
//     loaded 2-core machine). Nobody polls when the pool outnumbers GOMAXPROCS. One
//     Run uses the pool at a time; a nested or concurrent Run starts goroutines, as
//     every Run does with GML_POOL=off.
//   - A panic in a worker would otherwise kill the process (nothing can recover a panic
//     on another goroutine); For carries it back to the caller instead.
package parallel
