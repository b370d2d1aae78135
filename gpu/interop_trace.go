package gpu

import (
	"fmt"
	"log"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// GML_CUDA_TRACE=1 traces split runs (recordings with products through the outside
// engine): a goroutine polls the shared timeline from the host and notes when each
// value appears, so a run's hand-overs split into the time from a Vulkan batch's
// signal to the engine's (the wait on the stream, the products, the signal) and from
// the engine's signal to the next batch's (the queue's wait, the shader work, the
// signal). The lines go to the log: runs 1, 2, 4, 8, ... of the process (every run
// with GML_CUDA_TRACE=all).

// traceMode is GML_CUDA_TRACE: 0 off, 1 runs at powers of two, 2 every run.
var traceMode = func() int {
	switch strings.ToLower(os.Getenv("GML_CUDA_TRACE")) {
	case "", "0", "off", "false", "no":
		return 0
	case "all":
		return 2
	}
	return 1
}()

// traceRuns counts traced split runs.
var traceRuns atomic.Int64

// splitTrace is the host's view of one split run.
type splitTrace struct {
	t0            time.Time
	groups, prods int
	base          uint64
	enqueued      time.Duration   // the engine's groups queued
	submitted     time.Duration   // the Vulkan batches submitted
	done          time.Duration   // the fence signalled
	seen          []time.Duration // seen[j]: when base+1+j was first seen (0: never)
	polls         int
	stop          atomic.Bool
	finished      chan struct{}
}

// startTrace starts polling the timeline for a run over values base+1 .. base+2·groups+1.
func (f *fastPath) startTrace(base uint64, s *splitRecording) *splitTrace {
	if traceMode == 0 {
		return nil
	}
	t := &splitTrace{t0: time.Now(), groups: len(s.groups), base: base, seen: make([]time.Duration, 2*len(s.groups)+2), finished: make(chan struct{})}
	for _, g := range s.groups {
		t.prods += len(g.ps)
	}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(t.finished)
		top := base + 2*uint64(len(s.groups)) // the last group's signal
		// It polls once more after the stop, so that a run it had no time to watch
		// still ends with every value seen.
		for stopped := false; ; {
			v, err := f.tl.value()
			if err != nil {
				return
			}
			t.polls++
			now := time.Since(t.t0)
			for j := min(int64(v)-int64(base), int64(len(t.seen))) - 1; j >= 0 && t.seen[j] == 0; j-- {
				t.seen[j] = now
			}
			if v >= top || stopped {
				return
			}
			stopped = t.stop.Load()
		}
	}()
	return t
}

// enqueuedNow and submittedNow note when the engine's groups and the Vulkan batches
// were queued.
func (t *splitTrace) enqueuedNow() {
	if t != nil {
		t.enqueued = time.Since(t.t0)
	}
}

func (t *splitTrace) submittedNow() {
	if t != nil {
		t.submitted = time.Since(t.t0)
	}
}

// finish stops the poller and logs the run when its turn comes.
func (t *splitTrace) finish() {
	if t == nil {
		return
	}
	t.done = time.Since(t.t0)
	t.stop.Store(true)
	<-t.finished
	n := traceRuns.Add(1)
	if traceMode == 1 && n&(n-1) != 0 {
		return
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	// toEngine[i]: batch i's signal to group i's; toQueue[i]: group i's signal to batch i+1's.
	var toEngine, toQueue []float64
	for i := range t.groups {
		vk, eng := t.seen[2*i], t.seen[2*i+1]
		if vk > 0 && eng > 0 {
			toEngine = append(toEngine, us(eng-vk))
		}
		if i+1 < t.groups {
			if next := t.seen[2*i+2]; eng > 0 && next > 0 {
				toQueue = append(toQueue, us(next-eng))
			}
		}
	}
	first := 0.0
	if t.seen[0] > 0 {
		first = us(t.seen[0])
	}
	log.Printf("gml: cuda trace: run %d: %d groups, %d products; enqueue %.0f us, submit %.0f us, first Vulkan signal %.0f us, fence %.0f us; Vulkan signal to engine signal %s us; engine signal to next Vulkan signal %s us; %d polls",
		n, t.groups, t.prods, us(t.enqueued), us(t.submitted), first, us(t.done), quantiles(toEngine), quantiles(toQueue), t.polls)
}

// quantiles renders min / median / max of xs.
func quantiles(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%.0f/%.0f/%.0f", s[0], s[len(s)/2], s[len(s)-1])
}
