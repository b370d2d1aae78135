package parallel

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestForCoversRangeOnce(t *testing.T) { withAndWithoutPool(t, testForCoversRangeOnce) }

func testForCoversRangeOnce(t *testing.T) {
	cases := []struct{ n, grain int }{
		{0, 1}, {1, 1}, {2, 1}, {7, 3}, {1000, 1}, {1000, 999}, {1000, 5000}, {5, 0},
	}
	// Sizes that do not divide evenly over sixteen or five workers (17 on sixteen: nine
	// chunks of 2), as on a many-core host.
	for n := 1; n <= 40; n++ {
		cases = append(cases, struct{ n, grain int }{n, 1})
	}
	saved := threadsEnv
	defer func() { threadsEnv = saved }()
	for _, threads := range []int{0, 5, 16} {
		if threads > 0 {
			threadsEnv = func() int { return threads }
		}
		for _, tc := range cases {
			forCoversRangeOnce(t, tc.n, tc.grain)
		}
	}
}

// forCoversRangeOnce runs For(n, grain) and checks that its chunks are non-empty,
// within [0, n), at least grain long (the last may be shorter), no more than Workers(),
// and cover every index once.
func forCoversRangeOnce(t *testing.T, n, grain int) {
	hits := make([]int32, n)
	var calls atomic.Int32
	For(n, grain, func(lo, hi int) {
		calls.Add(1)
		if lo >= hi || lo < 0 || hi > n {
			t.Errorf("n=%d grain=%d workers=%d: chunk [%d,%d) is empty or outside [0,%d)", n, grain, Workers(), lo, hi, n)
			return
		}
		if hi-lo < grain && hi != n {
			t.Errorf("n=%d grain=%d: chunk [%d,%d) smaller than the grain", n, grain, lo, hi)
		}
		for i := lo; i < hi; i++ {
			atomic.AddInt32(&hits[i], 1)
		}
	})
	for i, h := range hits {
		if h != 1 {
			t.Fatalf("n=%d grain=%d workers=%d: index %d visited %d times", n, grain, Workers(), i, h)
		}
	}
	if int(calls.Load()) > max(Workers(), 1) {
		t.Errorf("n=%d: %d calls, more than %d workers", n, calls.Load(), Workers())
	}
}

func TestForCarriesPanic(t *testing.T) { withAndWithoutPool(t, testForCarriesPanic) }

func testForCarriesPanic(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want the worker's panic value", r)
		}
	}()
	For(100, 1, func(lo, hi int) {
		if hi == 100 {
			panic("boom")
		}
	})
	t.Fatal("For returned normally after a worker panicked")
}

func TestRunStartsEveryIndex(t *testing.T) { withAndWithoutPool(t, testRunStartsEveryIndex) }

func testRunStartsEveryIndex(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5} {
		var started atomic.Int32
		hits := make([]int32, n)
		Run(n, func(i int) {
			started.Add(1)
			// Every call waits for all others to start: only possible when each has
			// its own goroutine.
			for started.Load() < int32(n) {
			}
			atomic.AddInt32(&hits[i], 1)
		})
		for i, h := range hits {
			if h != 1 {
				t.Fatalf("n=%d: index %d ran %d times", n, i, h)
			}
		}
	}
}

// withAndWithoutPool runs test with a goroutine per Run (GML_POOL=off), on the pool as
// configured, and on a pool whose workers park at once (GML_POOL_SPIN=0), which takes
// the wake-up paths on every call.
func withAndWithoutPool(t *testing.T, test func(t *testing.T)) {
	savedOn, savedSpin := poolOn, spinTime
	defer func() { poolOn, spinTime = savedOn, savedSpin }()
	for _, mode := range []struct {
		name string
		on   bool
		spin time.Duration
	}{{"goroutines", false, savedSpin}, {"pool", true, savedSpin}, {"parking", true, 0}} {
		poolOn, spinTime = mode.on, mode.spin
		t.Run(mode.name, test)
	}
}

func TestParseThreads(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"", 0, true}, {"1", 1, true}, {"16", 16, true}, {"4096", 4096, true},
		{"0", 0, false}, {"-2", 0, false}, {"4097", 0, false}, {"two", 0, false}, {" 4", 0, false},
	} {
		n, err := parseThreads(c.in)
		if n != c.want || (err == nil) != c.ok {
			t.Errorf("parseThreads(%q) = %d, %v; want %d, ok %v", c.in, n, err, c.want, c.ok)
		}
	}
}

// WorkersFor gives one worker per MinWork, never none and never more than Workers().
func TestWorkersFor(t *testing.T) {
	w := Workers()
	for _, c := range []struct{ work, want int }{
		{0, 1}, {MinWork - 1, 1}, {MinWork, 1}, {2 * MinWork, min(2, w)}, {3*MinWork - 1, min(2, w)},
		{1 << 40, w},
	} {
		if got := WorkersFor(c.work); got != c.want {
			t.Errorf("WorkersFor(%d) = %d, want %d (Workers() = %d)", c.work, got, c.want, w)
		}
	}
}

// TestRunNested runs Run inside Run's calls, which find the pool busy and start
// goroutines, and Run after a panic, which must have released the pool.
func TestRunNested(t *testing.T) { withAndWithoutPool(t, testRunNested) }

func testRunNested(t *testing.T) {
	var total atomic.Int32
	Run(3, func(int) {
		Run(4, func(int) { total.Add(1) })
	})
	if total.Load() != 12 {
		t.Fatalf("nested Run made %d calls, want 12", total.Load())
	}
	func() {
		defer func() { _ = recover() }()
		Run(3, func(i int) {
			if i == 2 {
				panic("boom")
			}
		})
	}()
	total.Store(0)
	Run(3, func(int) { total.Add(1) })
	if total.Load() != 3 {
		t.Fatalf("Run after a panic made %d calls, want 3", total.Load())
	}
}

// BenchmarkRun times a Run of Workers() empty calls: the cost every split op pays to
// start its workers and meet them again.
func BenchmarkRun(b *testing.B) {
	var sink atomic.Int32
	for b.Loop() {
		Run(Workers(), func(i int) { sink.Add(int32(i)) })
	}
}

// BenchmarkRunTwo times a Run of two, an op split in two: it wakes one worker.
func BenchmarkRunTwo(b *testing.B) {
	var sink atomic.Int32
	for b.Loop() {
		Run(2, func(i int) { sink.Add(int32(i)) })
	}
}

// BenchmarkOps times a stream of ops as a training step makes them: a Run (or a For)
// of Workers() calls of some microseconds of work each, then a gap of serial work on
// the caller (a small op, the scheduler), short enough for the workers to be found
// polling or long enough that they park.
func BenchmarkOps(b *testing.B) {
	for _, gap := range []int{1, 20, 200} {
		var sink atomic.Uint64
		b.Run(fmt.Sprintf("Run/gap%dµs", gap), func(b *testing.B) {
			for b.Loop() {
				Run(Workers(), func(i int) { sink.Add(busy(5)) })
				sink.Add(busy(gap))
			}
		})
		b.Run(fmt.Sprintf("For/gap%dµs", gap), func(b *testing.B) {
			for b.Loop() {
				For(Workers(), 1, func(lo, hi int) { sink.Add(busy(5 * (hi - lo))) })
				sink.Add(busy(gap))
			}
		})
	}
}

// busy computes for about µs microseconds (at some GHz) and returns the result.
func busy(µs int) uint64 {
	x := uint64(1)
	for range µs * 750 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}
