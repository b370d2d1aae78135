package parallel

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// A worker fills its cache lines alone, so that posting to one does not disturb
// another's polling.
func TestWorkerFillsCacheLines(t *testing.T) {
	if size := unsafe.Sizeof(worker{}); size != cacheLine {
		t.Fatalf("worker is %d bytes, want %d", size, cacheLine)
	}
	if off := unsafe.Offsetof(thePool.pending); off%cacheLine != 0 || off == 0 {
		t.Fatalf("pool.pending at offset %d, want a line of its own", off)
	}
}

// TestRunStress runs many Runs and Fors of varied sizes back to back, some with a pause
// so that workers park between them, checking every index runs once per call. Under -race
// it checks the hand-over of calls between the caller and the workers.
func TestRunStress(t *testing.T) { withAndWithoutPool(t, testRunStress) }

func testRunStress(t *testing.T) {
	most := max(Workers(), 2)
	for r := range 300 {
		n := 1 + r%(most+1)
		hits := make([]int32, n)
		Run(n, func(i int) { hits[i]++ }) // each index writes its own element
		For(n, 1, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				hits[i]++
			}
		})
		for i, h := range hits {
			if h != 2 {
				t.Fatalf("run %d (n=%d): index %d ran %d times, want once by Run and once by For", r, n, i, h)
			}
		}
		if r%50 == 0 {
			time.Sleep(2 * spinTime) // the workers park
		}
	}
}

// TestForDoesNotWaitForWorkers runs a For of four chunks on one thread, where the
// workers it wakes cannot start before the caller yields: the caller makes every chunk
// itself. (GML_THREADS is set to 4, since Workers() would be 1 and For inline.)
func TestForDoesNotWaitForWorkers(t *testing.T) {
	if !poolOn {
		t.Skip("GML_POOL=off")
	}
	saved := threadsEnv
	defer func() { threadsEnv = saved }()
	threadsEnv = func() int { return 4 }
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	caller := goroutineID()
	var others, chunks atomic.Int32
	For(4, 1, func(lo, hi int) {
		chunks.Add(1)
		if goroutineID() != caller {
			others.Add(1)
		}
	})
	if chunks.Load() != 4 {
		t.Fatalf("For(4, 1) on 4 workers made %d chunks, want 4", chunks.Load())
	}
	if others.Load() != 0 {
		t.Fatalf("%d chunks of a For ran on workers that could not start before the caller finished", others.Load())
	}
}

// goroutineID is the number of the calling goroutine, from its stack trace's header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// TestPoolAllocatesNothing checks that Run and For on the pool allocate nothing of
// their own, so that a prepared training step, whose kernels build their bodies once,
// makes no garbage however its ops are split.
func TestPoolAllocatesNothing(t *testing.T) { withAndWithoutPool(t, testPoolAllocatesNothing) }

func testPoolAllocatesNothing(t *testing.T) {
	if !poolOn {
		t.Skip("GML_POOL=off")
	}
	var sink atomic.Int64
	run := func(i int) { sink.Add(int64(i)) }
	each := func(lo, hi int) { sink.Add(int64(hi - lo)) }
	n := max(2, Workers())
	// Not testing.AllocsPerRun: it sets GOMAXPROCS to 1, which sends For inline.
	for _, c := range []struct {
		name string
		call func()
	}{
		{"Run", func() { Run(n, run) }},
		{"For", func() { For(n*100, 100, each) }},
	} {
		c.call() // the pool grows
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 100 {
			c.call()
		}
		runtime.ReadMemStats(&after)
		// A few allocations may be the runtime's or the test framework's own.
		if a := after.Mallocs - before.Mallocs; a >= 50 {
			t.Errorf("100 calls of %s over %d workers allocated %d times", c.name, n, a)
		}
	}
}

// TestRunConcurrent runs Runs from several goroutines at once: one has the pool, the
// others start goroutines, and all complete.
func TestRunConcurrent(t *testing.T) { withAndWithoutPool(t, testRunConcurrent) }

func testRunConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	var total atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				Run(3, func(int) { total.Add(1) })
			}
		}()
	}
	wg.Wait()
	if total.Load() != 4*200*3 {
		t.Fatalf("concurrent Runs made %d calls, want %d", total.Load(), 4*200*3)
	}
}

// TestRunCarriesPanic panics in the caller's call and in a worker's: Run re-raises
// the value on the caller, and the pool runs the next Run normally.
func TestRunCarriesPanic(t *testing.T) { withAndWithoutPool(t, testRunCarriesPanic) }

func testRunCarriesPanic(t *testing.T) {
	for _, bad := range []int{0, 1, 3} {
		got := func() (r any) {
			defer func() { r = recover() }()
			Run(4, func(i int) {
				if i == bad {
					panic(bad)
				}
			})
			return nil
		}()
		if got != bad {
			t.Fatalf("panic in call %d: recovered %v", bad, got)
		}
		var calls atomic.Int32
		Run(4, func(int) { calls.Add(1) })
		if calls.Load() != 4 {
			t.Fatalf("Run after a panic in call %d made %d calls, want 4", bad, calls.Load())
		}
	}
}

// TestRunWakesOnlyWhatItNeeds checks that Runs of two make calls on one worker however
// many the pool has, whether the workers poll or park: small ops leave the others be.
func TestRunWakesOnlyWhatItNeeds(t *testing.T) { withAndWithoutPool(t, testRunWakesOnlyWhatItNeeds) }

func testRunWakesOnlyWhatItNeeds(t *testing.T) {
	if !poolOn {
		t.Skip("GML_POOL=off")
	}
	// A Run that every worker makes a call of (at least three): each has then passed
	// the Fors before, whose chunks a worker woken late may still be claiming (and
	// counting) otherwise.
	saved := threadsEnv
	defer func() { threadsEnv = saved }()
	all := max(4, len(thePool.workers)+1)
	threadsEnv = func() int { return all }
	Run(all, func(int) {})
	if len(thePool.workers) != all-1 {
		t.Fatalf("the pool has %d workers after a Run of %d", len(thePool.workers), all)
	}
	before := make([]uint64, len(thePool.workers))
	for i, w := range thePool.workers {
		before[i] = w.calls
	}
	for range 10 {
		Run(2, func(int) {})
	}
	for i, w := range thePool.workers {
		want := before[i]
		if i == 0 {
			want += 10
		}
		if w.calls != want {
			t.Errorf("worker %d made %d calls in 10 Runs of 2, want %d", i, w.calls-before[i], want-before[i])
		}
	}
}

// TestRunAcrossGOMAXPROCS runs Run with fewer threads than calls (nobody polls then)
// and more: each call must still have a goroutine of its own, since the calls of a Run
// may wait for each other.
func TestRunAcrossGOMAXPROCS(t *testing.T) { withAndWithoutPool(t, testRunAcrossGOMAXPROCS) }

func testRunAcrossGOMAXPROCS(t *testing.T) {
	saved := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(saved)
	for _, procs := range []int{1, 2, saved + 2} {
		runtime.GOMAXPROCS(procs)
		var all sync.WaitGroup
		all.Add(4)
		Run(4, func(int) {
			all.Done()
			all.Wait() // returns only once all four calls run at once
		})
	}
}

// TestIdlePoolUsesNoCPU checks that workers stop polling soon after the work: over
// 200ms of idleness after a burst of Runs the process uses well under a tenth of a
// core. A worker that polled for ever would use a whole core, or on a loaded machine
// still a large share of one, so the bound does not depend on the machine's load.
func TestIdlePoolUsesNoCPU(t *testing.T) {
	if !poolOn {
		t.Skip("GML_POOL=off")
	}
	n := max(2, runtime.GOMAXPROCS(0)) // as many as poll (the pool fits GOMAXPROCS)
	var sink atomic.Int64
	for range 1000 {
		Run(n, func(i int) { sink.Add(int64(i)) })
	}
	time.Sleep(spinTime + 10*time.Millisecond) // the polls end
	before := cpuTime(t)
	time.Sleep(200 * time.Millisecond)
	used := cpuTime(t) - before
	if used > 20*time.Millisecond {
		t.Fatalf("an idle pool used %v of CPU in 200ms", used)
	}
	t.Logf("an idle pool of %d workers used %v of CPU in 200ms", len(thePool.workers), used)
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skipf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestPauseReturns checks that pause executes n hints and returns, none for n <= 0
// (a negative count must not run the loop round).
func TestPauseReturns(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 100} {
		pause(n)
	}
}

// TestPoolSettings checks the reading of GML_POOL and GML_POOL_SPIN: a bad value is
// ignored (reported on stderr), the defaults stand.
func TestPoolSettings(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{{"", true}, {"on", true}, {"off", false}, {"no", true}} {
		if got := poolSetting(c.s); got != c.want {
			t.Errorf("GML_POOL=%q: pool %v, want %v", c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		s    string
		want time.Duration
	}{
		{"", defaultSpin}, {"0", 0}, {"200us", 200 * time.Microsecond}, {"10ms", 10 * time.Millisecond},
		{"11ms", defaultSpin}, {"-1us", defaultSpin}, {"fast", defaultSpin},
	} {
		if got := spinSetting(c.s); got != c.want {
			t.Errorf("GML_POOL_SPIN=%q: %v, want %v", c.s, got, c.want)
		}
	}
}

// TestPostLayout checks that a post keeps each field apart at its extremes: the
// largest call count and polling time, a For, and call numbers that wrap at 36 bits.
func TestPostLayout(t *testing.T) {
	for _, c := range []struct {
		number uint64
		spin   time.Duration
		isFor  bool
		n      int
	}{
		{1, 0, false, 2}, {1<<36 - 1, 10 * time.Millisecond, true, postCalls}, {12345, defaultSpin, false, 17},
	} {
		post := postOf(c.number, c.spin, c.isFor, c.n)
		if post>>postNumber != c.number || postSpin(post) != c.spin || (post&postFor != 0) != c.isFor || int(post&postCalls) != c.n {
			t.Errorf("postOf(%d, %v, %v, %d) = %#x: reads back %d, %v, %v, %d", c.number, c.spin, c.isFor, c.n, post,
				post>>postNumber, postSpin(post), post&postFor != 0, post&postCalls)
		}
	}
	if next := postOf(1<<36-1, 0, false, 2)>>postNumber + 1; postOf(next, 0, false, 2)>>postNumber != 0 {
		t.Errorf("the call number after 2^36-1 is %d, want 0 (wrapped)", postOf(next, 0, false, 2)>>postNumber)
	}
}

// TestSpinStopsWhenPreempted checks SpinUntil's answer to a poller that finds it was
// descheduled (here a poll that sleeps past preemptedGap): it stops, and nobody polls
// for quietTime after, checking ready once instead.
func TestSpinStopsWhenPreempted(t *testing.T) {
	defer quietAt.Store(0)
	quietAt.Store(0)
	var polls int
	if SpinUntil(func() bool {
		polls++
		if polls == 1 {
			time.Sleep(2 * preemptedGap)
		}
		return false
	}, time.Second) {
		t.Fatal("SpinUntil reported a condition that never held")
	}
	if polls > pollsPerClock {
		t.Errorf("a preempted poller polled %d times, want it to stop at the first look at the clock", polls)
	}
	polls = 0
	if SpinUntil(func() bool { polls++; return false }, time.Second) || polls != 1 {
		t.Errorf("in the quiet time after a preemption SpinUntil polled %d times, want 1", polls)
	}
}
