package ag

import (
	"fmt"
	"sync"

	_ "github.com/gml-dev/gml/backends" // programs using ag get every backend
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Tape records ag operations for one runtime (one device) and runs them: it holds the
// open trace (the graph recorded since the last run), the cache of compiled traces, the
// dropout seed counter and the per-step profile. Every parameter belongs to the tape
// it was created on, and an op's inputs must share a tape; constants join whichever
// tape uses them. A notebook normally uses the default tape (on runtime.Default());
// NewTape makes others, for instance one per device, and WithTape or SetTape select
// the tape new parameters and constant-only ops use.
type Tape struct {
	mu    sync.Mutex
	rt    *runtime.Runtime
	open  *trace // the trace being recorded; nil when nothing is pending
	rec   *trace // a Capture's trace while its function records, else nil
	cache *traceCache
	// eager (check mode) runs every op as it is recorded.
	eager bool
	// anomaly makes each run check the values it computed for NaN and Inf.
	anomaly bool
	seq     int    // ops recorded so far: the tape position of the next op
	seed    uint32 // the next dropout seed
	params  map[*tensor.Variable]*param
	slots   map[*tensor.Variable]bool // optimizer state: moments, step counters, rates
	prof    *profiler
	// isDefault marks the tape CurrentTape made on runtime.Default().
	isDefault bool
}

// TapeOption configures NewTape.
type TapeOption func(*tapeConfig)

type tapeConfig struct {
	device   string
	rt       *runtime.Runtime
	capacity int
	noReuse  bool
}

// Device runs a new tape on a device: "auto", "cpu" or "gpu" (see runtime.Device).
func Device(name string) TapeOption { return func(c *tapeConfig) { c.device = name } }

// OnRuntime runs a new tape on an existing runtime, sharing its resident variables
// (FromNet uses the runtime of the model it views).
func OnRuntime(r *runtime.Runtime) TapeOption { return func(c *tapeConfig) { c.rt = r } }

// CacheSize bounds how many compiled traces the tape keeps (default 64); the least
// recently used is freed first.
func CacheSize(n int) TapeOption { return func(c *tapeConfig) { c.capacity = n } }

// TraceCache turns the reuse of compiled traces on (the default) or off. Off, every
// run compiles its trace afresh: slower, for measuring what the cache saves.
func TraceCache(on bool) TapeOption { return func(c *tapeConfig) { c.noReuse = !on } }

// NewTape returns a tape on its own runtime (Device) or on a given one (OnRuntime);
// with neither, on runtime.Default().
func NewTape(opts ...TapeOption) (*Tape, error) {
	c := tapeConfig{capacity: 64}
	for _, o := range opts {
		o(&c)
	}
	r := c.rt
	if r == nil {
		var err error
		if c.device == "" {
			r, err = runtime.Default()
		} else {
			r, err = runtime.New(runtime.Device(c.device))
		}
		if err != nil {
			return nil, fmt.Errorf("ag: opening the runtime: %w", err)
		}
	}
	if c.capacity < 1 {
		return nil, fmt.Errorf("ag: cache size %d: want at least 1", c.capacity)
	}
	tc := newTraceCache(c.capacity)
	tc.noReuse = c.noReuse
	return &Tape{rt: r, cache: tc, params: map[*tensor.Variable]*param{}, slots: map[*tensor.Variable]bool{}, seed: 1}, nil
}

var (
	currentMu sync.Mutex
	current   *Tape
	// noGrad counts the NoGrad calls in progress.
	noGrad int
)

// CurrentTape returns the tape new parameters and constant-only ops use, creating the
// default tape (on runtime.Default()) on first use.
func CurrentTape() *Tape {
	currentMu.Lock()
	defer currentMu.Unlock()
	if current != nil && current.isDefault {
		// After runtime.Shutdown the default runtime is a new one: so is the default tape.
		if r, err := runtime.Default(); err == nil && r != current.rt {
			current = nil
		}
	}
	if current == nil {
		t, err := NewTape()
		if err != nil {
			failErr("tape", err)
		}
		t.isDefault = true
		current = t
	}
	return current
}

// SetTape makes t the current tape and returns the previous one (nil when none was made
// yet).
func SetTape(t *Tape) *Tape {
	currentMu.Lock()
	defer currentMu.Unlock()
	prev := current
	current = t
	return prev
}

// WithTape runs fn with t as the current tape, then restores the previous one.
func WithTape(t *Tape, fn func()) {
	prev := SetTape(t)
	defer SetTape(prev)
	fn()
}

// NoGrad runs fn without recording gradients: tensors it makes do not require them,
// so no Backward can reach through them (evaluation, manual weight updates).
func NoGrad(fn func()) {
	currentMu.Lock()
	noGrad++
	currentMu.Unlock()
	defer func() {
		currentMu.Lock()
		noGrad--
		currentMu.Unlock()
	}()
	fn()
}

func gradEnabled() bool {
	currentMu.Lock()
	defer currentMu.Unlock()
	return noGrad == 0
}

// Eager turns check mode on or off for the current tape: each op then runs as soon as it
// is recorded, so a failing op is named by its own error, at the line that recorded
// it. Results are the same as deferred runs; only speed differs.
func Eager(on bool) {
	t := CurrentTape()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.eager = on
}

// Runtime returns the tape's runtime.
func (t *Tape) Runtime() *runtime.Runtime { return t.rt }

// Device names the tape's preferred backend: "cpu" or "vulkan".
func (t *Tape) Device() string { return t.rt.Backend() }

// Flush runs whatever the tape has recorded and not yet run. Reading a value, Step and
// Backward's consumers flush by themselves; Flush is for timing and for freeing the
// recorded graph early.
func (t *Tape) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.flush(); err != nil {
		failErr("flush", err)
	}
}

// Clear drops everything the tape holds besides parameters and their gradients: the
// pending trace is discarded unrun and the compiled traces are freed with the values
// they hold, so tensors recorded so far can no longer be read.
func (t *Tape) Clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open != nil {
		t.open.discard(fmt.Errorf("the tape was cleared before it ran"))
		t.open = nil
	}
	t.cache.clear()
}

// Free releases the tape's compiled traces; the tape stays usable (later steps compile
// again). Parameters keep their device buffers until the runtime releases them.
func (t *Tape) Free() { t.Clear() }

// trace returns the trace ops record into: a Capture's while its function runs, else
// the open trace, started when needed. The caller holds t.mu.
func (t *Tape) trace() *trace {
	if t.rec != nil {
		return t.rec
	}
	if t.open == nil {
		t.open = newTrace(t)
	}
	return t.open
}

// nextSeed returns the seed of the next dropout site.
func (t *Tape) nextSeed() uint32 {
	s := t.seed
	t.seed++
	return s
}

// tapeOf returns the tape of the inputs that have one (parameters and recorded
// tensors), or the current tape when none has; inputs of different tapes are an error.
func tapeOf(op string, in []*Tensor) *Tape {
	var tp *Tape
	for i, x := range in {
		if x == nil {
			fail(op, "input %d is nil", i)
		}
		if x.tape == nil {
			continue
		}
		if tp == nil {
			tp = x.tape
		} else if x.tape != tp {
			fail(op, "input %d (%s) belongs to another tape (device %s) than input 0 (device %s)", i, x.describe(), x.tape.Device(), tp.Device())
		}
	}
	if tp == nil {
		tp = CurrentTape()
	}
	return tp
}

// KeepOnDevice declares host tensors that will not change (a batch reused every step,
// a fixed dataset) so runs on the current tape upload each once rather than at every
// run (runtime.Keep). Change one and call KeepOnDevice again.
func KeepOnDevice(ts ...*tensor.Tensor) {
	tp := CurrentTape()
	for _, t := range ts {
		if t != nil {
			tp.rt.Keep(t)
		}
	}
}
