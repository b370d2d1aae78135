package gpu

import (
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	vk "github.com/goki/vulkan"
)

// Matrix products through an outside library on the Vulkan buffers themselves.
//
// A productEngine (cuBLASLt through CUDA in cuda_engine.go; hipBLASLt through HIP would be
// a second) runs products on its own stream over device memory it imported from Vulkan,
// and one timeline semaphore, shared by both, orders that stream against the Vulkan
// queue. A recording that holds such products is split into command buffers, one
// before each run of consecutive products: at a run, the engine's stream is first given
// every group (wait for the timeline to reach the value the preceding command buffer
// signals, run the products, signal the next value), and then all command buffers are
// submitted at once, each waiting for the value its preceding group signals. The host
// waits only for the fence at the end, as for any recording.
//
// Failure: a product the engine cannot plan (no algorithm for the shape) is recorded on
// the shaders. An error while queueing a run's products runs that run step by step,
// the failed products on the shaders, and turns the engine off for the rest of the
// process (or, when the error is the product's own, that product's shape) with one
// logged warning; a prepared program then records itself again. A failure the engine
// reports while the run executes (or a stream that stops making progress) fails that
// run with an error, since Vulkan work after the product already read its output, and
// turns the engine off likewise.

// productEngine is the seam between the Vulkan backend and an outside product library.
type productEngine interface {
	// describe names the library and its versions, for diagnostics.
	describe() string
	// start readies the engine at its first use (context, stream, the timeline's
	// import); its error keeps every product on the shaders and is reported as the
	// reason.
	start(d *Device, tl *timeline) error
	// plan prepares product p at record time: imports the memory it touches and picks
	// the algorithm (cached per shape). An error keeps p on the shaders.
	plan(p *extProduct) error
	// batch packs planned products that run back to back; with timed, it measures each.
	batch(ps []*extProduct, timed bool) engineBatch
	// failed reports an asynchronous failure of queued work; nil while there is none.
	failed() error
	// sync waits until the queued work has finished or failed.
	sync() error
	// forget drops what the engine holds of a block about to be freed.
	forget(b *block)
	// close frees everything; the device is idle.
	close()
}

// engineBatch is a group of planned products queued together at every run.
type engineBatch interface {
	// enqueue queues on the engine's stream: wait for the timeline to reach wait, the
	// products in order, signal signal. It does not wait for them.
	enqueue(wait, signal uint64) error
	// times returns each product's duration in ns in the last run (timed batches).
	times() []float64
	release()
}

// errProduct marks an engine error that concerns one product's shape only: that shape
// goes back to the shaders, the engine stays on for the others.
var errProduct = errors.New("product not supported")

// extProduct is one product run by the engine: C = op(A)·op(B) + Beta·C over Batch
// row-major matrices, A and B of type In, C of type Out, with leading dimensions and
// batch strides in elements (a zero stride repeats one matrix).
type extProduct struct {
	M, N, K, Batch int
	TransA, TransB bool
	A, B, C        *Buffer
	LDA, LDB, LDC  int
	SA, SB, SC     int
	In, Out        DType
	TF32           bool // f32 operands may be rounded to TensorFloat-32
	Beta           float32
	Label          string
	// fallback records the same product on the shaders into a recorder: the path of a
	// run whose products the engine could not queue.
	fallback func(r *Recorder) error
	// key names the shape for the engine's cache and for turning one shape off.
	key string
	// plan is the engine's prepared state.
	plan any
	// vkBefore is the number of timed Vulkan dispatches recorded before the product.
	vkBefore int
}

// work is the product's multiply-adds.
func (p *extProduct) work() int64 {
	return int64(p.Batch) * int64(p.M) * int64(p.N) * int64(p.K)
}

// outBytes is the extent of C's storage that the product writes, in bytes.
func (p *extProduct) outBytes() int64 {
	return int64(p.Out.Size()) * (int64(p.SC)*int64(p.Batch-1) + int64(p.LDC)*int64(p.M))
}

// fastState is where a device's engine stands.
type fastState int

const (
	fastIdle     fastState = iota // found, not yet started (at the first big product)
	fastReady                     // started and checked
	fastOff                       // unavailable or turned off; reason says why
	fastStarting                  // starting: only the self-test's product is taken
)

// fastPath is a device's outside product engine and its state.
type fastPath struct {
	engine       productEngine
	caps         exportCaps
	exportMemory bool // device-local blocks are allocated exportable
	tl           *timeline
	// minWork is the least multiply-adds of a product that the engine runs: below it,
	// the fixed cost of crossing between the queue and the stream outweighs the gain.
	minWork int64
	// stall is how long a run may go without the timeline moving before the engine is
	// declared stuck.
	stall time.Duration

	// stage says what the engine's start is doing, for the message of a stuck start;
	// abandoned is set when a start got stuck: the engine is never called again.
	stage     atomic.Value
	abandoned atomic.Bool

	mu     sync.Mutex
	state  fastState
	reason string            // why products take the path they do
	bad    map[string]string // shapes turned off, with the error
}

// defaultMinWork is the threshold of products sent to the engine, in f32-equivalent
// multiply-adds (weighedWork; GML_CUDA_MIN_WORK overrides it). Measured on the H200
// (PERF.md, cuBLASLt): a run of products handed over between shader work costs about
// 0.35 ms, two switches of the GPU between the Vulkan and the CUDA context, whatever
// orders them (GPU-side semaphore waits or the host). Against the shaders' 37-40 TFLOP/s
// in f32 and cuBLASLt's 51, that pays from about 2^35 multiply-adds.
const defaultMinWork = 1 << 35

// weighedWork scales a product's multiply-adds to the f32 product that gains as much
// from the engine, so that one threshold serves every type: the shaders' f16 and bf16
// products run at 257-272 TFLOP/s against cuBLASLt's 690-720 (half the f32 gain per
// multiply-add: break-even about 2^36), and TF32 products, which run as f32 on the
// shaders, at 37-40 against 350-365 (four times: about 2^33).
func weighedWork(work int64, in DType, tf32 bool) int64 {
	switch {
	case in == F16 || in == BF16:
		return (work + 1) / 2 // a threshold of 1 still takes every product
	case tf32:
		return work * 4
	}
	return work
}

// stallLimit bounds a run's time without progress on the timeline while the engine
// has work: longer means the engine is stuck.
const stallLimit = 30 * time.Second

// startLimit bounds the engine's start and self-test (a variable for tests).
var startLimit = 60 * time.Second

// setStage records what the engine's start does now.
func (f *fastPath) setStage(s string) { f.stage.Store(s) }

func newFastPath(e productEngine, caps exportCaps) *fastPath {
	f := &fastPath{engine: e, caps: caps, exportMemory: true, minWork: defaultMinWork, stall: stallLimit, bad: map[string]string{}}
	if s := os.Getenv("GML_CUDA_MIN_WORK"); s != "" {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= 0 {
			f.minWork = v
		}
	}
	return f
}

// ProductPath says which path a device's matrix products take, and why.
type ProductPath struct {
	// Engine names the outside library ("cuBLASLt 13.0.0 (CUDA runtime 13.0)"), or is
	// empty when none was found.
	Engine string
	// Active reports that big products run through Engine; otherwise every product
	// runs on the Vulkan shaders.
	Active bool
	// MinWork is the least multiply-adds (M·N·K over the batch) of an f32 product that
	// goes to Engine when Active; f16 and bf16 products need twice as many, TF32 ones a
	// quarter (Takes).
	MinWork int64
	// Reason says why products take this path: what was missing, or what failed.
	Reason string
}

// Takes reports whether a product of work multiply-adds (M·N·K over the batch) with
// operands of type in (tf32: f32 operands that may be rounded to TensorFloat-32) goes
// to Engine.
func (p ProductPath) Takes(work int64, in DType, tf32 bool) bool {
	return p.Active && weighedWork(work, in, tf32) >= p.MinWork
}

// String renders the path as one line, as `gml devices` prints it.
func (p ProductPath) String() string {
	switch {
	case p.Active:
		return fmt.Sprintf("%s for f32 products of at least %d multiply-adds (f16 and bf16 twice, TF32 a quarter), Vulkan shaders below", p.Engine, p.MinWork)
	case p.Engine != "" && p.Reason == "":
		return fmt.Sprintf("%s found, started at the first product of at least %d multiply-adds", p.Engine, p.MinWork)
	case p.Engine != "":
		return fmt.Sprintf("Vulkan shaders (%s not used: %s)", p.Engine, p.Reason)
	}
	return "Vulkan shaders (" + p.Reason + ")"
}

// SetProductThreshold sets the least multiply-adds (M·N·K over the batch) of an f32
// product that goes to the device's outside library (other types scaled as
// ProductPath.Takes says), for products recorded afterwards: 0 sends
// every product the library can take, math.MaxInt64 none. It is a tuning knob for
// benchmarks (GML_CUDA_MIN_WORK sets it at Open); it does nothing without a library.
func (d *Device) SetProductThreshold(minWork int64) {
	if f := d.fast; f != nil {
		f.mu.Lock()
		f.minWork = minWork
		f.mu.Unlock()
	}
}

// ProductPath reports the path of the device's matrix products. It does not start
// the engine; CheckProductPath does.
func (d *Device) ProductPath() ProductPath {
	f := d.fast
	if f == nil { // newFastPath is only ever given an engine
		reason := d.fastReason
		if reason == "" {
			reason = "no outside library"
		}
		return ProductPath{Reason: reason}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return ProductPath{Engine: f.engine.describe(), Active: f.state == fastReady, MinWork: f.minWork, Reason: f.reason}
}

// CheckProductPath starts the device's outside engine if it has one (a CUDA context,
// a product through Vulkan memory checked against the host) and reports the path.
func (d *Device) CheckProductPath() ProductPath {
	if d.fast != nil {
		d.fast.ready(d)
	}
	return d.ProductPath()
}

// ready reports whether the engine runs products now, starting it on first use. The
// start runs one small product through it and checks the result, so that a driver or
// sandbox that accepts the calls but does not share memory or order work is found here,
// with its reason, rather than in a user's results.
func (f *fastPath) ready(d *Device) bool {
	f.mu.Lock()
	switch f.state {
	case fastReady:
		f.mu.Unlock()
		return true
	case fastOff, fastStarting:
		f.mu.Unlock()
		return false
	}
	f.state = fastStarting
	f.mu.Unlock()
	// A start stuck inside the library (seen once on an H200 before first runs were
	// warmed up, see plan) must not hang the caller: past startLimit the engine is
	// abandoned where it stands, named in the reason, and never called again.
	done := make(chan error, 1)
	go func() {
		f.setStage("starting CUDA: context, stream, timeline import, cuBLASLt handle")
		err := f.engine.start(d, f.tl)
		if err == nil && !f.abandoned.Load() {
			err = f.selfTest(d)
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(startLimit):
		f.abandoned.Store(true)
		err = fmt.Errorf("its start did not finish within %v, stuck %s", startLimit, f.stage.Load())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.state, f.reason = fastOff, err.Error()
		log.Printf("gml: %s: matrix products stay on the Vulkan shaders: %v", f.engine.describe(), err)
		return false
	}
	f.state = fastReady
	return true
}

// accepts reports whether a product of this size and type goes to the engine
// (starting it).
func (f *fastPath) accepts(d *Device, work int64, in DType, tf32 bool) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	below := weighedWork(work, in, tf32) < f.minWork
	f.mu.Unlock()
	return !below && f.ready(d)
}

// turnOff stops the engine for the rest of the process with one logged warning; an
// errProduct error stops only that product's shape.
func (f *fastPath) turnOff(err error, key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if errors.Is(err, errProduct) && key != "" {
		if _, seen := f.bad[key]; !seen {
			f.bad[key] = err.Error()
			log.Printf("gml: %s: %v; this product runs on the Vulkan shaders from now on", f.engine.describe(), err)
		}
		return
	}
	if f.state == fastOff {
		return
	}
	f.state, f.reason = fastOff, "turned off after an error: "+err.Error()
	log.Printf("gml: %s: %v; matrix products run on the Vulkan shaders from now on", f.engine.describe(), err)
}

// usable reports whether the engine may run these products now.
func (f *fastPath) usable(groups []*extGroup) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.state != fastReady && f.state != fastStarting {
		return false
	}
	for _, g := range groups {
		for _, p := range g.ps {
			if _, bad := f.bad[p.key]; bad {
				return false
			}
		}
	}
	return true
}

// extGroup is a run of consecutive products between two command buffers.
type extGroup struct {
	ps    []*extProduct
	batch engineBatch
}

// splitRecorder is the state of a Recorder that holds outside products.
type splitRecorder struct {
	cbs    []vk.CommandBuffer // finished command buffers, each followed by groups[i]
	groups []*extGroup
	mark   int // the Recorder's dispatch count after the last product
}

// splitRecording is the part of a Recording that holds outside products.
type splitRecording struct {
	cbs    []vk.CommandBuffer // len(groups)+1 command buffers
	groups []*extGroup
}

// external records product p to run through the device's engine, after planning it.
// It reports false (and records nothing) when the engine cannot take p.
func (r *Recorder) external(p *extProduct) (bool, error) {
	if !r.d.fast.plan(p) {
		return false, nil
	}
	return r.add(p)
}

// plan plans p on the engine and reports whether it may run there: a shape the engine
// cannot plan, or one turned off after an error, stays on the shaders; a failure that
// is not the shape's (memory the engine cannot import) turns the engine off.
func (f *fastPath) plan(p *extProduct) bool {
	if err := f.engine.plan(p); err != nil {
		f.turnOff(fmt.Errorf("%w: %v", errProduct, err), p.key)
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, bad := f.bad[p.key]
	return !bad
}

// add records a planned product.
func (r *Recorder) add(p *extProduct) (bool, error) {
	if r.done {
		return false, fmt.Errorf("gpu: product %s on a submitted recorder", p.Label)
	}
	s := r.split
	if s == nil {
		s = &splitRecorder{}
		r.split = s
	}
	if len(s.groups) == 0 || s.mark != r.dispatches {
		// Vulkan work was recorded since the last product: it runs before this one, in
		// a command buffer of its own.
		if err := check(vk.EndCommandBuffer(r.cb), "vkEndCommandBuffer"); err != nil {
			return false, err
		}
		s.cbs = append(s.cbs, r.cb)
		s.groups = append(s.groups, &extGroup{})
		cb, err := r.d.startCommands(r.pool, false)
		if err != nil {
			return false, err
		}
		// The timeline orders everything across the boundary.
		r.cb, r.dirty, r.read = cb, r.dirty[:0], r.read[:0]
	}
	p.vkBefore = len(r.labels)
	g := s.groups[len(s.groups)-1]
	g.ps = append(g.ps, p)
	s.mark = r.dispatches
	return true, nil
}

// endSplit builds the split part of a recording whose last command buffer is cb.
func (r *Recorder) endSplit(cb vk.CommandBuffer) *splitRecording {
	s := r.split
	if s == nil {
		return nil
	}
	timed := r.queries != vk.NullQueryPool
	for _, g := range s.groups {
		g.batch = r.d.fast.engine.batch(g.ps, timed)
	}
	return &splitRecording{cbs: append(s.cbs, cb), groups: s.groups}
}

// timedCount is the number of timings a timed recording's run returns so far: the
// timed dispatches and the outside products.
func (r *Recorder) timedCount() int {
	n := len(r.labels)
	if r.queries != vk.NullQueryPool && r.split != nil {
		for _, g := range r.split.groups {
			n += len(g.ps)
		}
	}
	return n
}

func (s *splitRecording) release() {
	for _, g := range s.groups {
		if g.batch != nil {
			g.batch.release()
			g.batch = nil
		}
	}
}

// Stale reports whether the recording holds outside products that the engine no longer
// runs (it was turned off): such a recording still runs correctly, but step by step,
// so a prepared program records itself again.
func (rc *Recording) Stale() bool {
	return rc.split != nil && !rc.d.fast.usable(rc.split.groups)
}

// runSplit runs a split recording. d.mu must be held; the fence is unsignalled.
func (rc *Recording) runSplit() ([]float64, error) {
	d, s := rc.d, rc.split
	f := d.fast
	n := len(s.cbs)
	base := f.tl.next
	f.tl.next += uint64(2*n + 2)
	tr := f.startTrace(base, s)
	defer tr.finish()
	queued := 0
	var err error
	if f.usable(s.groups) {
		for ; queued < len(s.groups); queued++ {
			g := s.groups[queued]
			if err = g.batch.enqueue(base+2*uint64(queued)+1, base+2*uint64(queued)+2); err != nil {
				break
			}
		}
	}
	if queued < len(s.groups) {
		if err != nil {
			f.turnOff(err, s.groups[queued].failedKey(err))
		}
		return rc.runStepwise(base, queued)
	}
	tr.enqueuedNow()
	pre, free, err := d.pendingCommands()
	defer free()
	if err == nil {
		err = d.submitSplit(s.cbs, pre, base)
	}
	if err != nil {
		// The stream waits for values no batch will signal: let it through.
		f.turnOff(err, "")
		f.drain(base, len(s.groups))
		return nil, err
	}
	tr.submittedNow()
	if err := d.waitRun(base, n); err != nil {
		return nil, err
	}
	var times []float64
	if rc.queries != vk.NullQueryPool {
		for _, g := range s.groups {
			times = append(times, g.batch.times()...)
		}
	}
	return times, nil
}

// failedKey is the shape key to turn off for an error of this group: the product's
// own error names it; any other error turns the whole engine off.
func (g *extGroup) failedKey(err error) string {
	var pe *productError
	if errors.As(err, &pe) && pe.index < len(g.ps) {
		return g.ps[pe.index].key
	}
	return ""
}

// productError is an engine error of the index-th product of a batch.
type productError struct {
	index int
	err   error
}

func (e *productError) Error() string { return e.err.Error() }
func (e *productError) Unwrap() error { return e.err }

// pollInterval is how often a run's wait looks at the engine.
const pollInterval = 20 * time.Millisecond

// waitRun waits for a split run's fence, watching the engine: if it fails or stops
// making progress, the batches waiting for it are let through and the run fails.
// d.mu must be held.
func (d *Device) waitRun(base uint64, n int) error {
	f := d.fast
	var failure error
	var failedAt time.Time
	last, since := uint64(0), time.Now()
	for {
		res := vk.WaitForFences(d.dev, 1, []vk.Fence{d.fence}, vk.True, uint64(pollInterval.Nanoseconds()))
		if res == vk.Success {
			vk.ResetFences(d.dev, 1, []vk.Fence{d.fence})
			if failure != nil {
				return fmt.Errorf("gpu: %s failed during the run, whose results are lost: %w", f.engine.describe(), failure)
			}
			return nil
		}
		if res != vk.Timeout {
			return check(res, "vkWaitForFences")
		}
		v, err := f.tl.value()
		if err != nil {
			return err
		}
		if v != last {
			last, since = v, time.Now()
		}
		if failure == nil {
			if failure = f.engine.failed(); failure == nil && time.Since(since) > f.stall {
				failure = fmt.Errorf("its stream made no progress for %v", f.stall)
			}
			if failure != nil {
				failedAt = time.Now()
				f.turnOff(failure, "")
			}
		}
		if failure != nil {
			f.unblock(base, n, v)
			if time.Since(failedAt) > f.stall {
				// The queue itself no longer moves: rather than hang, the device is
				// given up for the rest of the process, as after a lost device.
				d.closed = true
				log.Printf("gml: the Vulkan queue did not finish a run within %v after %s failed; the device is unusable from now on", f.stall, f.engine.describe())
				return fmt.Errorf("gpu: the Vulkan queue did not finish a run after %s failed (%v); the device is unusable (reopen it)", f.engine.describe(), failure)
			}
		}
	}
}

// unblock signals, from the host, the value a batch waits for when the engine will not:
// values base+2i+1 are the batches' own signals, base+2i+2 the engine's.
func (f *fastPath) unblock(base uint64, n int, v uint64) {
	if v < base+1 || v+1 > base+2*uint64(n)-2 || (v-base)%2 == 0 {
		return
	}
	f.tl.signal(v + 1)
}

// drain lets queued groups through when no batch will signal what they wait for,
// signalling each group's value from the host and waiting for the engine's answer.
func (f *fastPath) drain(base uint64, groups int) {
	for i := range groups {
		v := base + 2*uint64(i) + 1
		if f.tl.signal(v) != nil || f.waitEngine(v+1) != nil {
			return
		}
	}
}

// runStepwise runs a split recording one command buffer at a time: the groups before
// queued were given to the engine (and are waited for on the timeline), the others run
// on the shaders, each in a recording of its own. d.mu must be held; it is released
// while the shader products are recorded and run.
func (rc *Recording) runStepwise(base uint64, queued int) ([]float64, error) {
	d, s := rc.d, rc.split
	f := d.fast
	timed := rc.queries != vk.NullQueryPool
	var times []float64
	for i, cb := range s.cbs {
		value := uint64(0)
		if i < len(s.groups) {
			value = base + 2*uint64(i) + 1
		}
		pre, free, err := d.pendingCommands()
		cbs := []vk.CommandBuffer{cb}
		if pre != nil {
			cbs = []vk.CommandBuffer{pre, cb}
		}
		if err == nil {
			if err = d.submitSignal(cbs, value); err == nil {
				err = d.waitFence()
			}
		}
		free()
		if err != nil {
			return nil, err
		}
		if i == len(s.groups) {
			break
		}
		g := s.groups[i]
		if i < queued {
			err := f.waitEngine(value + 1)
			if err == nil {
				if timed {
					times = append(times, g.batch.times()...)
				}
				continue
			}
			f.turnOff(err, "")
		}
		if i == queued {
			// Products this group queued before its error may still run: let them end
			// before the shaders write the same outputs.
			f.engine.sync()
		}
		d.mu.Unlock()
		t, err := g.runOnShaders(d)
		d.mu.Lock()
		if err != nil {
			return nil, err
		}
		if timed {
			times = append(times, t...)
		}
	}
	return times, nil
}

// waitEngine waits for the timeline to reach v, which the engine signals, watching it.
func (f *fastPath) waitEngine(v uint64) error {
	last, since := uint64(0), time.Now()
	for {
		ok, err := f.tl.wait(v, pollInterval)
		if err != nil || ok {
			return err
		}
		if err := f.engine.failed(); err != nil {
			return err
		}
		cur, err := f.tl.value()
		if err != nil {
			return err
		}
		if cur != last {
			last, since = cur, time.Now()
		}
		if time.Since(since) > f.stall {
			return fmt.Errorf("its stream made no progress for %v", f.stall)
		}
	}
}

// runOnShaders records the group's products on the shaders and runs them, returning
// each one's wall time in ns.
func (g *extGroup) runOnShaders(d *Device) ([]float64, error) {
	times := make([]float64, len(g.ps))
	for i, p := range g.ps {
		start := time.Now()
		r, err := d.newRecorder(false)
		if err != nil {
			return nil, err
		}
		if err := p.fallback(r); err != nil {
			r.Discard()
			return nil, fmt.Errorf("gpu: %s on the shaders: %w", p.Label, err)
		}
		if _, err := r.Submit(); err != nil {
			return nil, err
		}
		times[i] = float64(time.Since(start).Nanoseconds())
	}
	return times, nil
}

// mergeTimings puts the outside products' times (in recording order) among the
// dispatches' timings at the places they were recorded.
func (rc *Recording) mergeTimings(vkt []Timing, ext []float64) []Timing {
	if rc.split == nil {
		return vkt
	}
	out := make([]Timing, 0, len(vkt)+len(ext))
	i, j := 0, 0
	for _, g := range rc.split.groups {
		for _, p := range g.ps {
			for ; i < p.vkBefore && i < len(vkt); i++ {
				out = append(out, vkt[i])
			}
			ns := 0.0
			if j < len(ext) {
				ns = ext[j]
			}
			out = append(out, Timing{Label: p.Label, Ns: ns})
			j++
		}
	}
	return append(out, vkt[i:]...)
}

// closeFast releases the engine and the timeline; the device is idle.
func (d *Device) closeFast() {
	if d.fast == nil {
		return
	}
	if d.fast.abandoned.Load() {
		return // the stuck start may hold the engine and wait on the timeline
	}
	d.fast.engine.close()
	if d.fast.tl != nil {
		d.fast.tl.destroy()
	}
}

// lockForClose takes d.mu for Close. After a stuck engine start (which may hold it
// forever) it gives up after a few seconds rather than hang the process's exit.
func (d *Device) lockForClose() bool {
	if d.fast == nil || !d.fast.abandoned.Load() {
		d.mu.Lock()
		return true
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if d.mu.TryLock() {
			return true
		}
	}
	return false
}

// forgetBlock tells the engine a block is about to be freed.
func (d *Device) forgetBlock(b *block) {
	if d.fast != nil && b.exported && !d.fast.abandoned.Load() {
		d.fast.engine.forget(b)
	}
}
