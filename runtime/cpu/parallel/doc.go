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
//   - Run hands its calls to a pool of worker goroutines (pool.go) and makes call 0
//     itself; Run(n) involves only n-1 workers, so an op split in two wakes one and a
//     small op, which For keeps inline, none. Waking a parked goroutine goes through
//     the Go scheduler (8µs for a Run of 16 on the 16-core host with goroutines per
//     call), so a worker first polls for a short while after each call
//     (GML_POOL_SPIN, default 50µs) and then parks on a channel of its own: back-to-
//     back ops find it awake, and an idle process uses no CPU. A Run is posted with
//     one store to a line the polling workers share, so the caller pays no line
//     transfer per worker; each worker's own state fills a line pair of its own.
//   - The polls are bounded, hinted and given up under contention because the earlier
//     pool, whose workers polled for 200µs without the PAUSE hint and yielded only
//     every 100µs, made 16-thread steps 1.4-2x slower on the host and took the CPU of
//     other processes on a loaded machine: 16 pollers hold every thread the Go
//     scheduler has (for its collector, timers, goroutines back from cgo), and a
//     poller descheduled by the operating system shows that the machine has more
//     threads to run than cores, where polling takes the core of another process or of
//     the Run's own caller (a loaded 2-core machine ran steps twice as slow). So the
//     polls use PAUSE (YIELD on arm64), stop for 100ms once a poller finds it was
//     descheduled, and do not happen when the pool outnumbers GOMAXPROCS.
//   - One Run uses the pool at a time; a nested or concurrent Run starts goroutines,
//     as every Run does with GML_POOL=off (the escape hatch, and the reference the pool
//     is measured against). The workers live as long as the process; parked, they
//     cost their stacks only.
//   - A panic in a worker would otherwise kill the process (nothing can recover a panic
//     on another goroutine); For carries it back to the caller instead.
package parallel
