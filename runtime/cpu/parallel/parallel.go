package parallel

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
)

// Workers returns how many goroutines For uses at most: GML_THREADS when set, else
// runtime.GOMAXPROCS(0), which the Go runtime sizes to the CPUs the process may use
// (its affinity mask and its cgroup's CPU limit) unless the user lowered it.
func Workers() int {
	if n := threadsEnv(); n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// MinWork is the least work, in multiply-adds, worth a worker of its own: starting a
// goroutine and meeting the others again costs some microseconds, which 512K
// multiply-adds (about ten microseconds of one core at AVX2 speed) repay.
const MinWork = 1 << 19

// WorkersFor returns how many workers a job of work multiply-adds should use: one per
// MinWork, at least one and at most Workers(). Small jobs stay on the calling goroutine
// however many cores the host has.
func WorkersFor(work int) int {
	return max(1, min(Workers(), work/MinWork))
}

// threadsEnv is GML_THREADS, read once; 0 when unset. A bad value is reported once on
// stderr and ignored: Workers is called from kernels that cannot return an error.
var threadsEnv = sync.OnceValue(func() int {
	n, err := parseThreads(os.Getenv("GML_THREADS"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "gml: %v; using GOMAXPROCS (%d)\n", err, runtime.GOMAXPROCS(0))
	}
	return n
})

// parseThreads reads a GML_THREADS value: empty is 0 (unset), else a count from 1 to
// 4096.
func parseThreads(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 4096 {
		return 0, fmt.Errorf("GML_THREADS=%q is not a thread count from 1 to 4096", s)
	}
	return n, nil
}

// For calls body on contiguous, disjoint ranges [lo, hi) that together cover [0, n), on up
// to Workers() goroutines, and returns when every call has returned. Each range holds at
// least grain items (the last may hold fewer), so a small n runs in one call on the
// calling goroutine without waking any worker. The ranges are fixed by n, grain and
// Workers(); which goroutine calls body on which range is not (the caller takes the
// ranges that no worker has come for). A panic in body is re-raised on the calling
// goroutine (with the first panic's value), so callers can recover from it as from a
// panic in straight-line code.
func For(n, grain int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	chunks := min(Workers(), n/grain)
	if chunks <= 1 {
		body(0, n)
		return
	}
	// Chunks of size items cover n in fewer calls than chunks when size rounds up
	// (n = 17 on sixteen workers: nine of 2); the calls beyond would get empty or
	// inverted ranges.
	size := (n + chunks - 1) / chunks
	chunks = (n + size - 1) / size
	j := job{each: body, size: size, n: n}
	if !runPooled(chunks, j) {
		spawned := j // only the fallback's j escapes (to its goroutines)
		spawn(chunks, spawned.do)
	}
}

// Run calls body(i) for every i in [0, n), each on its own goroutine (i == 0 on the
// calling goroutine), and returns when all have returned: exactly n goroutines run at
// once, so the calls may wait for each other (SPMD style). A panic in body is re-raised
// on the calling goroutine with the first panic's value.
func Run(n int, body func(i int)) {
	switch {
	case n == 1:
		body(0) // a panic needs no carrying: it is on the caller's goroutine
	case n > 1 && runPooled(n, job{run: body}):
	default:
		spawn(n, body)
	}
}

// spawn is Run on a goroutine per call.
func spawn(n int, body func(i int)) {
	var (
		wg       sync.WaitGroup
		once     sync.Once
		panicked any
	)
	call := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				once.Do(func() { panicked = r })
			}
		}()
		body(i)
	}
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			call(i)
		}()
	}
	if n > 0 {
		call(0)
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}
