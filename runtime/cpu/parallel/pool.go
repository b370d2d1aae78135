package parallel

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinTime is how long a pool worker, and Run's caller waiting for the workers, poll
// before they sleep: the parallel ops of a training step follow each other within
// tens of microseconds, so the workers are found awake, while an idle process stops
// using the CPU almost at once.
const spinTime = 200 * time.Microsecond

// pollsPerCheck is how many polls a spinning goroutine makes between looks at the
// clock, and yieldEvery how often it then yields (runtime.Gosched) so that the
// garbage collector's workers find a thread: a yield takes the scheduler's global
// lock, and sixteen goroutines yielding every microsecond made a Run cost 50µs on a
// 16-core host. When the pool's goroutines outnumber GOMAXPROCS nobody spins: a
// spinner would hold a thread that a worker it waits for needs.
const (
	pollsPerCheck = 1024
	yieldEvery    = 100 * time.Microsecond
)

// poolOn turns the pool on (GML_POOL=on). It is off by default because its polling
// workers cost more than they save where it counts: on the 16-core H200 host they made
// training steps 1.4-2x slower (cnn28 10.2 against 7.0 ms, transformer 83.5 against
// 59.7, mlp784_b256 2.08 against 1.07) and the GPU's mlp4096 step 15% slower, since a
// goroutine coming back from a cgo call waits for a thread the pollers hold; on a loaded
// 2-core machine they take the CPU from other processes. It won on 2 quiet cores
// (mlp784_b32 0.26 against 0.40 ms), which is why it stays as an option.
var poolOn = os.Getenv("GML_POOL") == "on"

// pool holds the worker goroutines of Run. A goroutine started per call costs little
// to create, but on a many-core host its start waits for the Go scheduler to wake an
// idle thread, and the wakes happen one after another: a Run of 16 empty calls took
// 8µs on the 16-core host (BenchmarkRun, GML_POOL=off), paid by every op, where a
// spinning worker answers in a cache-line transfer. Only one Run uses the pool at a time
// (busy); a Run that finds it busy (a nested or concurrent one) starts goroutines.
type pool struct {
	busy    atomic.Bool
	crowded atomic.Bool // the pool's goroutines and the caller outnumber GOMAXPROCS
	workers []*worker
}

var thePool pool

// worker is one goroutine of the pool. A call is posted by setting call and then
// bumping seq; the worker polls seq for spinTime after its last call, then sleeps
// on wake.
type worker struct {
	seq      atomic.Uint64
	call     *call
	index    int
	sleeping atomic.Bool
	wake     chan struct{}
	_        [64]byte // keeps the next worker's seq off this one's cache line
}

// call is one Run on the pool.
type call struct {
	body     func(int)
	pending  atomic.Int32 // calls of body not yet returned
	done     chan struct{}
	once     sync.Once
	panicked any
}

// finish records one returned body and wakes the caller after the last.
func (c *call) finish() {
	if c.pending.Add(-1) == 0 {
		close(c.done)
	}
}

// do calls body(i), keeping the first panic.
func (c *call) do(i int) {
	defer func() {
		if r := recover(); r != nil {
			c.once.Do(func() { c.panicked = r })
		}
	}()
	c.body(i)
}

// runPooled runs body(0..n-1) on the pool, reporting false (having run nothing) when
// the pool is busy or would need more workers than it may have.
func runPooled(n int, body func(int)) bool {
	if !poolOn || n-1 > max(Workers(), runtime.NumCPU()) || !thePool.busy.CompareAndSwap(false, true) {
		return false
	}
	defer thePool.busy.Store(false)
	for len(thePool.workers) < n-1 {
		w := &worker{wake: make(chan struct{}, 1)}
		thePool.workers = append(thePool.workers, w)
		go w.loop()
	}
	// Read here, once per Run: runtime.GOMAXPROCS takes the scheduler's lock.
	thePool.crowded.Store(len(thePool.workers)+1 > runtime.GOMAXPROCS(0))
	c := &call{body: body, done: make(chan struct{})}
	c.pending.Store(int32(n))
	for i := 1; i < n; i++ {
		w := thePool.workers[i-1]
		w.call, w.index = c, i
		w.seq.Add(1)
		if w.sleeping.Load() && w.sleeping.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
	c.do(0)
	c.finish()
	if !spin(func() bool { return c.pending.Load() == 0 }) {
		<-c.done
	}
	if c.panicked != nil {
		panic(c.panicked)
	}
	return true
}

// spin polls ready for spinTime (not at all when the pool is crowded) and reports
// whether it became true.
func spin(ready func() bool) bool {
	if thePool.crowded.Load() {
		return ready()
	}
	start := time.Now()
	yielded := start
	for polls := 1; ; polls++ {
		if ready() {
			return true
		}
		if polls%pollsPerCheck == 0 {
			now := time.Now()
			if now.Sub(start) > spinTime {
				return false
			}
			if now.Sub(yielded) > yieldEvery {
				runtime.Gosched()
				yielded = now
			}
		}
	}
}

// loop runs the worker's calls for ever.
func (w *worker) loop() {
	var last uint64
	for {
		if !spin(func() bool { return w.seq.Load() != last }) {
			// Sleep, unless a call was posted meanwhile. Either this check sees the
			// poster's seq, or the poster sees sleeping and sends a wake; when both
			// happen the poster's CompareAndSwap wins and its wake is consumed here.
			w.sleeping.Store(true)
			if w.seq.Load() == last || !w.sleeping.CompareAndSwap(true, false) {
				<-w.wake
			}
		}
		last = w.seq.Load()
		c, i := w.call, w.index
		c.do(i)
		c.finish()
	}
}
