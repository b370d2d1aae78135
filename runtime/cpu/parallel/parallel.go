package parallel

import (
	"runtime"
	"sync"
)

// Workers returns how many goroutines For uses at most: runtime.GOMAXPROCS(0), which is
// the number of CPUs unless the user lowered it.
func Workers() int { return runtime.GOMAXPROCS(0) }

// For calls body on contiguous, disjoint ranges [lo, hi) that together cover [0, n), on up
// to Workers() goroutines, and returns when every call has returned. Each range holds at
// least grain items (the last may hold fewer), so a small n runs in one call on the
// calling goroutine without starting any. A panic in body is re-raised on the calling
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
	size := (n + chunks - 1) / chunks
	Run(chunks, func(i int) {
		body(i*size, min((i+1)*size, n))
	})
}

// Run calls body(i) for every i in [0, n), each on its own goroutine (i == 0 on the
// calling goroutine), and returns when all have returned: exactly n goroutines run at
// once, so the calls may wait for each other (SPMD style). A panic in body is re-raised
// on the calling goroutine with the first panic's value.
func Run(n int, body func(i int)) {
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
