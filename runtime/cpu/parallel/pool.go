package parallel

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// poolOn is false when GML_POOL=off: Run then starts a goroutine per call, as gml did
// before the pool (an escape hatch, and the reference the pool is measured against).
var poolOn = poolSetting(os.Getenv("GML_POOL"))

// spinTime is how long an idle worker, and Run's caller waiting for the workers, poll
// before they park (GML_POOL_SPIN, default defaultSpin). The ops of a training step
// follow each other within microseconds to tens of microseconds, so a worker that
// polls that long is found awake by the next op, which then skips the Go scheduler's
// wake-up; a longer idle costs the poll once and then nothing.
var spinTime = spinSetting(os.Getenv("GML_POOL_SPIN"))

// defaultSpin bounds the polling: long enough to bridge the gap between the ops of a
// step, short enough that polling workers hand their threads back to the Go scheduler
// (its garbage collector, timers, a goroutine back from cgo) before anything waits on
// them for long, and cost a loaded machine's other processes little.
const defaultSpin = 50 * time.Microsecond

// pollsPerClock is how many polls a spinning goroutine makes between looks at the
// clock; each poll is a load that hits the cache until the line is written, and one
// PAUSE (some tens of nanoseconds on current x86 cores), so the clock is read every
// microsecond or so.
const pollsPerClock = 16

// poolSetting reads GML_POOL: empty or "on" is the pool, "off" a goroutine per call;
// anything else is reported on stderr and ignored.
func poolSetting(s string) bool {
	switch s {
	case "", "on":
		return true
	case "off":
		return false
	}
	fmt.Fprintf(os.Stderr, "gml: GML_POOL=%q is neither on nor off; using the pool\n", s)
	return true
}

// spinSetting reads GML_POOL_SPIN, a Go duration from 0 (park at once: a machine whose
// cores are busy with other processes) to 10ms; a bad value is reported on stderr and
// ignored.
func spinSetting(s string) time.Duration {
	if s == "" {
		return defaultSpin
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > 10*time.Millisecond {
		fmt.Fprintf(os.Stderr, "gml: GML_POOL_SPIN=%q is not a duration from 0 to 10ms; using %v\n", s, defaultSpin)
		return defaultSpin
	}
	return d
}

// cacheLine is the span that two goroutines' hot fields must not share: 64-byte lines,
// which Intel's adjacent-line prefetcher fetches in pairs.
const cacheLine = 128

// pool runs the calls of Run and For on worker goroutines that stay between calls. A
// goroutine started per call costs little to create, but its start waits for the Go
// scheduler to wake an idle thread, one after another: a Run of 16 empty calls took
// 8µs on the 16-core host. A polling worker answers within a cache-line transfer.
//
// Only one Run or For uses the pool at a time (busy); one that finds it busy (nested or
// concurrent) starts goroutines. The calls of Run(n) are fixed: worker w makes call w+1
// and the caller call 0, so an op split in few parts wakes few workers, and the
// low-numbered workers, used by every op, are the ones found polling. The chunks of a
// For are claimed instead (claim), by the caller and by workers 0 to n-2 as they come:
// a worker that is slow to start (parked, or its thread descheduled on a busy machine)
// finds them done and the For does not wait for it. Either is posted with one store
// (post) to a line that the polling workers read and only the caller writes: the
// caller pays no line transfer per worker, and the workers left out see it and poll on.
type pool struct {
	busy atomic.Bool
	_    [cacheLine - 4]byte
	post atomic.Uint64 // the call in progress or last made, in the layout of postOf
	_    [cacheLine - 8]byte
	// claim is a For's number (as in its post) << postNumber | its next chunk.
	claim atomic.Uint64
	_     [cacheLine - 8]byte
	// pending counts the calls (of a For: chunks) not yet returned; the caller polls it.
	pending atomic.Int32
	_       [cacheLine - 4]byte
	job     job
	// waiting says that the caller parked on done; the last call to return sends it.
	waiting  atomic.Bool
	panicked atomic.Bool
	panicVal any // the first panic of this call's calls, once panicked is set
	done     chan struct{}
	workers  []*worker
}

var thePool = pool{done: make(chan struct{}, 1)}

// postOf lays out a post: the call's number in the high 36 bits, then how long its
// workers poll afterwards in µs (14 bits: up to 16ms, more than GML_POOL_SPIN may ask),
// then whether it is a For (1 bit), then its count of calls (13 bits, which bounds n).
// A parked worker tells a new call from its last by the post, so the number must not
// come round to the same value while it sleeps: at a call a microsecond, 36 bits last
// 19 hours.
func postOf(number uint64, spin time.Duration, isFor bool, n int) uint64 {
	p := number<<postNumber | uint64(spin.Microseconds())<<postSpinShift | uint64(n)
	if isFor {
		p |= postFor
	}
	return p
}

const (
	postNumber    = 28
	postSpinShift = 14
	postFor       = 1 << 13
	postCalls     = postFor - 1
)

// postSpin is how long the workers of post poll afterwards.
func postSpin(post uint64) time.Duration {
	return time.Duration(post>>postSpinShift&(1<<(postNumber-postSpinShift)-1)) * time.Microsecond
}

// worker is one goroutine of the pool, with its state on cache lines of its own (a
// worker is exactly cacheLine bytes, a size class Go aligns to its size). It polls
// pool.post for a call that includes it, parks on wake when its polling time is up,
// and is sent a token by the call that finds parked set.
type worker struct {
	workerState
	_ [cacheLine - unsafe.Sizeof(workerState{})]byte
}

type workerState struct {
	parked atomic.Bool
	wake   chan struct{}
	calls  uint64 // calls made, written by the worker alone (read by the tests)
}

// job is what the calls of a pooled Run or For do: run(i), or chunk i of a For's n
// items, each chunk of size items (the last may hold fewer). A For's chunks are
// computed here rather than in a closure of For's, which would be allocated per call.
type job struct {
	run     func(int)
	each    func(lo, hi int)
	size, n int
}

func (j *job) do(i int) {
	if j.each != nil {
		j.each(i*j.size, min((i+1)*j.size, j.n))
		return
	}
	j.run(i)
}

// runPooled makes the calls 0..n-1 of j on the pool, each on its own goroutine (Run) or,
// for a For, on the caller and whichever workers claim them, and reports false (having
// run nothing) when the pool is off or busy, or n would need more workers than the
// process has cores or than a post can count (postCalls).
func runPooled(n int, j job) bool {
	p := &thePool
	isFor := j.each != nil
	if !poolOn || n-1 > max(Workers(), runtime.NumCPU()) || n > postCalls || !p.busy.CompareAndSwap(false, true) {
		return false
	}
	defer p.busy.Store(false)
	last := p.post.Load()
	for len(p.workers) < n-1 {
		w := &worker{workerState: workerState{wake: make(chan struct{}, 1)}}
		p.workers = append(p.workers, w)
		go w.loop(p, len(p.workers), last)
	}
	// When the pool's goroutines outnumber the threads that may run Go code, a poller
	// would hold a thread that a worker it waits for needs: nobody polls then.
	spin := spinTime
	if len(p.workers)+1 > runtime.GOMAXPROCS(0) {
		spin = 0
	}
	post := postOf(last>>postNumber+1, spin, isFor, n)
	p.job = j
	p.pending.Store(int32(n))
	if isFor {
		p.claim.Store(post >> postNumber << postNumber)
	}
	p.post.Store(post)
	// Wake the parked workers of the call. Either a worker's check after it sets parked
	// sees the new post, or this sees parked and sends; when both happen, the
	// CompareAndSwap decides who, and a token is sent only to a worker that waits for it.
	for _, w := range p.workers[:n-1] {
		if w.parked.Load() && w.parked.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
			// The woken worker is queued on this thread until an idle one takes it;
			// where threads are scarce that happens when a Run's caller parks, not
			// polls. (A For does not wait for workers that have not started.)
			if !isFor {
				spin = 0
			}
		}
	}
	if isFor {
		p.claimChunks(post)
	} else {
		p.call(0)
	}
	p.wait(spin)
	p.job = job{} // let the collector have what the bodies hold
	if p.panicked.Load() {
		v := p.panicVal
		p.panicVal = nil
		p.panicked.Store(false)
		panic(v)
	}
	return true
}

// loop makes call i of every Run, and claims chunks of every For, that includes it,
// for ever; seen is the post before the worker's first. A parked worker costs nothing
// but its stack.
func (w *worker) loop(p *pool, i int, seen uint64) {
	for {
		seen = w.next(p, i, seen)
		w.calls++
		var wokeCaller bool
		if seen&postFor != 0 {
			wokeCaller = p.claimChunks(seen)
		} else {
			wokeCaller = p.call(i)
		}
		if wokeCaller {
			// The caller, woken, waits to run on this thread (the scheduler queues a
			// woken goroutine on the waker's thread): let it, rather than poll.
			runtime.Gosched()
		}
	}
}

// next polls, as long as seen says, and then parks until a call after seen includes
// call i, and returns its post. The polling time runs from the worker's last call:
// the calls that leave the worker out do not keep it polling.
func (w *worker) next(p *pool, i int, seen uint64) uint64 {
	var post uint64
	includes := func() bool {
		post = p.post.Load()
		return post != seen && int(post&postCalls) > i
	}
	if SpinUntil(includes, postSpin(seen)) {
		return post
	}
	for {
		w.parked.Store(true)
		if includes() && w.parked.CompareAndSwap(true, false) {
			return post
		}
		<-w.wake
		// The token comes from a call that includes this worker. It may be the one
		// the worker has just made (its caller found it parked again after that
		// call), or a For that ended without it: then the worker parks again.
		if includes() {
			return post
		}
	}
}

// claimChunks calls body on the chunks of the For of post that are left, one by one,
// and reports whether it woke the caller. A claim fails once the chunks are all taken
// or the For has ended (claim holds a later number), so a worker that comes late
// takes nothing, not even the body of another call.
func (p *pool) claimChunks(post uint64) (wokeCaller bool) {
	number, n := post>>postNumber, post&postCalls
	for {
		c := p.claim.Load()
		chunk := c & (1<<postNumber - 1)
		if c>>postNumber != number || chunk >= n {
			return wokeCaller
		}
		if p.claim.CompareAndSwap(c, c+1) && p.call(int(chunk)) {
			wokeCaller = true
		}
	}
}

// call runs body(i), keeping the first panic, and counts it returned; the last call to
// return wakes the caller if it parked, and reports that. The worker that returns last
// may find the next call's caller parked (this call's caller saw pending reach 0 while
// polling and went on): the token it sends then is a spurious wake, which wait
// tolerates.
func (p *pool) call(i int) (wokeCaller bool) {
	defer func() {
		if r := recover(); r != nil && p.panicked.CompareAndSwap(false, true) {
			p.panicVal = r
		}
		if p.pending.Add(-1) == 0 && p.waiting.Load() && p.waiting.CompareAndSwap(true, false) {
			p.done <- struct{}{}
			wokeCaller = true
		}
	}()
	p.job.do(i)
	return false
}

// wait returns once every call of the Run has returned: it polls for spin, then
// parks on done.
func (p *pool) wait(spin time.Duration) {
	ready := func() bool { return p.pending.Load() == 0 }
	if SpinUntil(ready, spin) {
		return
	}
	for {
		p.waiting.Store(true)
		if ready() && p.waiting.CompareAndSwap(true, false) {
			return
		}
		<-p.done
		if ready() {
			return
		}
	}
}

// SpinUntil polls ready, with the processor's spin-wait hint between polls, until it
// holds (true) or spin has passed (false). The pool's workers and callers wait with it,
// and so may the calls of one Run that wait for each other (the GEMM workers waiting for
// a packing task or an item of another): a wait of microseconds should not go through
// the Go scheduler, a long one should not hold the core. It checks ready once and returns while the machine is found oversubscribed
// (see preemptedGap): polling there takes the core the awaited goroutine needs.
func SpinUntil(ready func() bool, spin time.Duration) bool {
	if spin <= 0 {
		return ready()
	}
	start := sinceEpoch()
	if int64(start) < quietAt.Load() {
		return ready()
	}
	last := start
	for {
		for range pollsPerClock {
			if ready() {
				return true
			}
			pause(1)
		}
		now := sinceEpoch()
		if now-last > preemptedGap {
			quietAt.Store(int64(now + quietTime))
			return false
		}
		if now-start > spin {
			return false
		}
		last = now
	}
}

// A poller that finds a gap of preemptedGap between two looks at the clock, which
// are a microsecond apart while it runs, had its thread descheduled by the operating
// system: the machine has more threads to run than cores, and polling there takes a
// core from another process or from the Run's own caller, so nobody polls for
// quietTime. The gap is longer than a garbage collector's stop of the world, shorter
// than the slices an oversubscribed Linux scheduler hands out.
const (
	preemptedGap = 200 * time.Microsecond
	quietTime    = 100 * time.Millisecond
)

// quietAt is when polling may start again (sinceEpoch), after a poller was preempted.
var quietAt atomic.Int64 // a time.Duration since epoch

var epoch = time.Now()

// sinceEpoch reads the monotonic clock, in nanoseconds.
func sinceEpoch() time.Duration { return time.Since(epoch) }
