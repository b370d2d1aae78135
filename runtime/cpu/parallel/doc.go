// Package parallel holds the goroutine parallel-for used by the CPU kernels (GEMM,
// convolution, and the CPU backend's elementwise and reduction loops).
//
// Decisions:
//   - One primitive, For, that splits an index range into at most Workers() contiguous
//     chunks. Workers is GOMAXPROCS, which Go sizes to the process's affinity mask and
//     cgroup CPU limit, unless GML_THREADS sets the count (a bad value is reported on
//     stderr and ignored). Contiguous chunks keep each goroutine on its own cache
//     lines; a grain size keeps small loops on the calling goroutine, where waking
//     workers would cost more than the work.
//   - Work is split by cost: WorkersFor gives a job one worker per MinWork multiply-adds,
//     so a small product or a few short attention sequences stay on one core however
//     many the host has, and a large one uses them all (GEMM, attention, batched
//     products).
//   - Run and For hand their calls to a pool of worker goroutines (pool.go); the
//     caller makes a share itself, and a call split in n wakes only n-1 workers (an op
//     split in two wakes one; a small op, which For keeps inline, none). Waking a
//     parked goroutine goes through the Go scheduler (8µs for a Run of 16 on the
//     16-core host with goroutines per call), so a worker first polls for a short
//     while after each call (GML_POOL_SPIN, default 50µs) and then parks on a channel
//     of its own: back-to-back ops find it awake, and an idle process uses no CPU. A
//     call is posted with one store to a line the polling workers share, so the caller
//     pays no line transfer per worker; each worker's own state fills a line pair.
//   - A Run's calls may wait for each other, so each has its own goroutine. A For's
//     chunks are independent, so they are claimed by the caller and the woken workers
//     as they come: a worker slow to start (parked, or its thread descheduled on a busy
//     machine) finds them done, and the For does not wait for it.
//   - A goroutine woken by a channel send is queued on the sender's thread, where it
//     waits until an idle thread takes it or the sender blocks. The earlier pool (and
//     the first version of this one) had the caller poll for the workers it had just
//     woken, which kept them queued behind it; on the 16-core host that version made
//     steps 1.1-1.6x slower than goroutines per call with 50µs polls, while 200µs
//     polls, which leave fewer workers parked, won on cnn28 and mlp784_b32. So a
//     caller that woke a parked worker for a Run parks at once, and a worker that
//     wakes the parked caller yields its thread to it. With that and the claimed
//     chunks of For, the pool beat goroutines per call on the host at 16 threads
//     (interleaved, two runs: ms per step
//     0.14-0.17 against 0.24-0.27 for mlp784_b32, 4.1-6.2 against 5.7-7.2 for cnn28,
//     41-46 against 57 for the transformer, 0.79-0.90 against 0.78-0.85 for
//     mlp784_b256) and at 2 (0.16-0.19 against 0.19-0.27, 9.5-17.7 against 10.1-17.5,
//     118-120 against 122-129, 0.84-1.38 against 0.74-1.40).
//   - The polls use PAUSE (YIELD on arm64), which leaves the core to a hyperthread
//     sibling, and stop for 100ms once a poller finds it was descheduled by the
//     operating system: the machine has more threads to run than cores, and polling
//     there takes the core of another process or of the call's own caller (on a
//     loaded 2-core machine polling workers made steps up to twice as slow). Nobody
//     polls when the pool outnumbers GOMAXPROCS.
//   - One Run or For uses the pool at a time; a nested or concurrent one starts
//     goroutines, as every one does with GML_POOL=off (the escape hatch, and the
//     reference the pool is measured against). The workers live as long as the
//     process; parked, they cost their stacks only.
//   - A panic in a worker would otherwise kill the process (nothing can recover a panic
//     on another goroutine); For carries it back to the caller instead.
package parallel
