package gpu

import (
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// fakeEngine is a product engine that computes on the host over the device's mapped
// memory (lavapipe's device memory is the host's), ordered by the device's timeline
// exactly as the CUDA engine is: each batch waits on the host for its value, computes,
// and signals the next. It tests the splitting, ordering and failure logic of
// interop.go without CUDA. Failures are injected by count.
type fakeEngine struct {
	tl *timeline

	mu         sync.Mutex
	wg         sync.WaitGroup
	enqueues   int
	failAt     int   // the enqueue that fails (0: none)
	failErr    error // what it returns
	asyncAt    int   // the enqueue whose batch fails while running (0: none)
	asyncErr   error
	noPlan     map[string]bool // shapes plan refuses
	products   int             // products computed
	forgotten  int
	stuck      chan struct{} // start blocks until it is closed (nil: no block)
	holdDevice bool          // and holds the device's lock meanwhile
	closed     bool
}

func (e *fakeEngine) describe() string { return "fake engine" }

func (e *fakeEngine) start(d *Device, tl *timeline) error {
	if e.stuck != nil {
		if e.holdDevice {
			d.mu.Lock()
			defer d.mu.Unlock()
		}
		<-e.stuck
	}
	e.tl = tl
	return nil
}

func (e *fakeEngine) plan(p *extProduct) error {
	p.key = fmt.Sprintf("%dx%dx%d/%d %v%v", p.M, p.N, p.K, p.Batch, p.TransA, p.TransB)
	for _, b := range []*Buffer{p.A, p.B, p.C} {
		if b.blk.mapped == nil {
			return fmt.Errorf("the fake engine needs mapped device memory")
		}
	}
	if p.In != F32 || p.Out != F32 {
		return fmt.Errorf("the fake engine multiplies f32 only")
	}
	if e.noPlan[p.key] {
		return fmt.Errorf("no algorithm for %s", p.key)
	}
	return nil
}

func (e *fakeEngine) batch(ps []*extProduct, timed bool) engineBatch {
	return &fakeBatch{e: e, ps: ps}
}

func (e *fakeEngine) failed() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.asyncErr
}

func (e *fakeEngine) sync() error {
	e.wg.Wait()
	return nil
}

func (e *fakeEngine) forget(b *block) { e.forgotten++ }

func (e *fakeEngine) close() {
	e.wg.Wait()
	e.closed = true
}

type fakeBatch struct {
	e  *fakeEngine
	ps []*extProduct
	ns []float64
}

func (b *fakeBatch) enqueue(wait, signal uint64) error {
	e := b.e
	e.mu.Lock()
	e.enqueues++
	n := e.enqueues
	e.mu.Unlock()
	if n == e.failAt {
		return e.failErr
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			ok, err := e.tl.wait(wait, time.Second)
			if err != nil {
				panic(err)
			}
			if ok {
				break
			}
		}
		if n == e.asyncAt {
			e.mu.Lock()
			e.asyncErr = errors.New("injected asynchronous failure")
			e.mu.Unlock()
			return // never signals, as a faulted CUDA stream
		}
		start := time.Now()
		for _, p := range b.ps {
			hostProduct(p)
			e.mu.Lock()
			e.products++
			e.mu.Unlock()
		}
		b.ns = []float64{float64(time.Since(start).Nanoseconds())}
		if err := e.tl.signal(signal); err != nil {
			panic(err)
		}
	}()
	return nil
}

func (b *fakeBatch) times() []float64 { return make([]float64, len(b.ps)) }
func (b *fakeBatch) release()         {}

// hostProduct computes p on the host over mapped memory.
func hostProduct(p *extProduct) {
	view := func(b *Buffer) []float32 {
		return unsafe.Slice((*float32)(unsafe.Add(b.blk.mapped, b.off)), b.size/4)
	}
	a, bb, c := view(p.A), view(p.B), view(p.C)
	for z := 0; z < p.Batch; z++ {
		for i := 0; i < p.M; i++ {
			for j := 0; j < p.N; j++ {
				var s float64
				for k := 0; k < p.K; k++ {
					ai := z*p.SA + i*p.LDA + k
					if p.TransA {
						ai = z*p.SA + k*p.LDA + i
					}
					bi := z*p.SB + k*p.LDB + j
					if p.TransB {
						bi = z*p.SB + j*p.LDB + k
					}
					s += float64(a[ai]) * float64(bb[bi])
				}
				ci := z*p.SC + i*p.LDC + j
				if p.Beta != 0 {
					s += float64(p.Beta) * float64(c[ci])
				}
				c[ci] = float32(s)
			}
		}
	}
}

// attachFake gives d a fake engine taking every product.
func attachFake(t *testing.T, d *Device) *fakeEngine {
	t.Helper()
	if !d.mem.mappable {
		t.Skip("the fake engine needs device memory the host can map (lavapipe)")
	}
	tl, err := newTimeline(d, false)
	if err != nil {
		t.Skipf("no timeline semaphores: %v", err)
	}
	e := &fakeEngine{tl: tl, noPlan: map[string]bool{}}
	f := newFastPath(e, exportCaps{})
	f.exportMemory, f.minWork, f.tl = false, 0, tl
	f.state = fastReady // TestSelfTest starts one
	d.fast = f
	t.Cleanup(func() { e.wg.Wait() })
	return e
}

// TestSelfTest: the first product starts the engine with a checked product through
// device memory.
func TestSelfTest(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	d.fast.state = fastIdle
	if p := d.CheckProductPath(); !p.Active {
		t.Fatalf("after the self-test: %+v", p)
	}
	if e.products != 1 {
		t.Errorf("the self-test computed %d products, want 1", e.products)
	}
}

// TestSelfTestQueueFailure: an engine whose self-test product cannot be queued is not
// used, with the error as the reason, and nothing falls over.
func TestSelfTestQueueFailure(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	d.fast.state = fastIdle
	e.failAt, e.failErr = 1, errors.New("injected queueing failure")
	p := d.CheckProductPath()
	if p.Active || !strings.Contains(p.Reason, "injected queueing failure") {
		t.Fatalf("after a failed self-test: %+v", p)
	}
}

// TestStuckStart: a start that never returns leaves the products on the shaders, with a
// reason naming where it stuck, and the engine is not called again, even at Close.
func TestStuckStart(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	d.fast.state = fastIdle
	e.stuck = make(chan struct{})
	defer close(e.stuck)
	defer func(l time.Duration) { startLimit = l }(startLimit)
	startLimit = 50 * time.Millisecond
	p := d.CheckProductPath()
	if p.Active || !strings.Contains(p.Reason, "did not finish within") || !strings.Contains(p.Reason, "starting CUDA") {
		t.Fatalf("after a stuck start: %+v", p)
	}
	if ok, err := fastMatMulTaken(t, d); ok || err != nil {
		t.Errorf("a product after a stuck start went to the engine (%v, %v)", ok, err)
	}
	d.Close()
	if e.closed {
		t.Error("Close called the abandoned engine")
	}
}

// TestStuckStartHoldingDevice: Close gives up, with an error, on a device whose stuck
// engine start holds its lock, rather than hang.
func TestStuckStartHoldingDevice(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	d.fast.state = fastIdle
	e.stuck, e.holdDevice = make(chan struct{}), true
	defer close(e.stuck)
	defer func(l time.Duration) { startLimit = l }(startLimit)
	startLimit = 50 * time.Millisecond
	if p := d.CheckProductPath(); p.Active {
		t.Fatalf("after a stuck start: %+v", p)
	}
	if err := d.Close(); err == nil || !strings.Contains(err.Error(), "stuck start") {
		t.Errorf("Close of a device held by a stuck start = %v", err)
	}
}

// fastMatMulTaken records a product the engine would take and reports whether it did.
func fastMatMulTaken(t *testing.T, d *Device) (bool, error) {
	a, b, c := mustAlloc(t, d, make([]float32, 64*64)), mustAlloc(t, d, make([]float32, 64*64)), mustAlloc(t, d, make([]float32, 64*64))
	r, err := d.NewRecorder()
	if err != nil {
		return false, err
	}
	defer r.Discard()
	return r.fastMatMul(MatMul{M: 64, N: 64, K: 64, A: a, B: b, C: c})
}

// chain is a sequence of products where each reads the previous one's result: shader
// products (a Tile forces the shaders) and engine products alternate, with two engine
// products back to back, batched ones, a transposed operand and an accumulating one.
type chainStep struct {
	p      MatMul
	engine bool
}

func chainSteps(tile *Tile) []chainStep {
	return []chainStep{
		{MatMul{M: 24, N: 20, K: 16, Tile: tile}, false},
		{MatMul{M: 24, N: 12, K: 20}, true},
		{MatMul{M: 24, N: 8, K: 12, TransB: true}, true},
		{MatMul{M: 24, N: 16, K: 8, Tile: tile}, false},
		{MatMul{M: 12, N: 16, K: 16, Batch: 2, BroadcastB: true, Beta: 0.5}, true},
		{MatMul{M: 24, N: 16, K: 16, Tile: tile}, false},
	}
}

// runChain records the chain on d (products from step 1 on read the previous result as
// A, reshaped), runs it runs times and returns the final result with the host's.
func runChain(t *testing.T, d *Device, runs int) (got, want []float32, rc *Recording) {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	tile := tileF32Small
	steps := chainSteps(&tile)
	x := randSlice(r, 24*16)
	cur := mustAlloc(t, d, x)
	rec, err := d.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	ps := make([]MatMul, len(steps))
	bs, cs := make([][]float32, len(steps)), make([][]float32, len(steps))
	for i, s := range steps {
		p := s.p
		if p.Batch == 0 {
			p.Batch = 1
		}
		nb := p.K * p.N
		if !p.BroadcastB {
			nb *= p.Batch
		}
		bs[i], cs[i] = randSlice(r, nb), randSlice(r, p.Batch*p.M*p.N)
		p.A, p.B, p.C = cur, mustAlloc(t, d, bs[i]), mustAlloc(t, d, cs[i])
		if err := rec.MatMul(p); err != nil {
			t.Fatal(err)
		}
		ps[i], cur = p, p.C
	}
	rc, err = rec.End()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Release)
	for range runs {
		if _, err := rc.Run(); err != nil {
			t.Fatal(err)
		}
		// The accumulating product reads what the previous run wrote.
		want = x
		for i, p := range ps {
			cs[i] = hostRef(p, want, bs[i], cs[i])
			want = cs[i]
		}
	}
	got = make([]float32, len(want))
	if err := d.Download(Copy{Buf: cur, Data: Float32Bytes(got)}); err != nil {
		t.Fatal(err)
	}
	return got, want, rc
}

func mustAlloc(t *testing.T, d *Device, data []float32) *Buffer {
	t.Helper()
	b, err := d.Alloc(uint64(4 * len(data)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Free)
	if err := d.Upload(Copy{Buf: b, Data: Float32Bytes(data)}); err != nil {
		t.Fatal(err)
	}
	return b
}

// hostRef computes p (untransposed A of M×K per batch, B as stored) on the host.
func hostRef(p MatMul, a, b, c []float32) []float32 {
	out := make([]float32, len(c))
	for z := 0; z < p.Batch; z++ {
		for i := 0; i < p.M; i++ {
			for j := 0; j < p.N; j++ {
				var s float64
				for k := 0; k < p.K; k++ {
					bi := k*p.N + j
					if p.TransB {
						bi = j*p.K + k
					}
					if !p.BroadcastB {
						bi += z * p.K * p.N
					}
					s += float64(a[z*p.M*p.K+i*p.K+k]) * float64(b[bi])
				}
				s += float64(p.Beta) * float64(c[z*p.M*p.N+i*p.N+j])
				out[z*p.M*p.N+i*p.N+j] = float32(s)
			}
		}
	}
	return out
}

// TestSplitRecording runs the chain with engine products between shader ones: the
// recording splits into three command buffers around two groups (the two consecutive
// engine products share one), and repeated runs (new timeline values each) agree with
// the host.
func TestSplitRecording(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	got, want, rc := runChain(t, d, 3)
	if e := relErr(got, want); e > 1e-5 {
		t.Fatalf("relative error %.3g", e)
	}
	if rc.split == nil || len(rc.split.cbs) != 3 || len(rc.split.groups) != 2 || len(rc.split.groups[0].ps) != 2 {
		t.Fatalf("want 3 command buffers around groups of 2 and 1 products, have %+v", rc.split)
	}
	if e.products != 9 || e.enqueues != 6 {
		t.Errorf("engine computed %d products in %d batches, want 9 in 6", e.products, e.enqueues)
	}
	if p := d.ProductPath(); !p.Active || p.Engine != "fake engine" {
		t.Errorf("ProductPath = %+v, want the fake engine active", p)
	}
}

// TestSplitTrace: with GML_CUDA_TRACE=all every split run logs its groups, products
// and hand-overs as the host saw the timeline.
func TestSplitTrace(t *testing.T) {
	d := openTest(t)
	attachFake(t, d)
	saved := traceMode
	traceMode = 2
	t.Cleanup(func() { traceMode = saved })
	var out strings.Builder
	log.SetOutput(&out)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	runChain(t, d, 2)
	lines := strings.Count(out.String(), "gml: cuda trace: run ")
	if lines != 2 || !strings.Contains(out.String(), "2 groups, 3 products") || !strings.Contains(out.String(), "Vulkan signal to engine signal ") {
		t.Errorf("want 2 trace lines of 2 groups and 3 products with hand-over times, the log has %d:\n%s", lines, out.String())
	}
	if strings.Contains(out.String(), "engine signal to next Vulkan signal - us") {
		t.Errorf("a hand-over back to the queue was not seen:\n%s", out.String())
	}
}

// TestSplitQueueFailure fails the queueing of the second group's products: that run
// goes step by step with the group on the shaders and still agrees with the host, the
// shape is turned off, and the recording reports itself stale.
func TestSplitQueueFailure(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	e.failAt = 2
	e.failErr = &productError{index: 0, err: fmt.Errorf("%w: injected", errProduct)}
	got, want, rc := runChain(t, d, 1)
	if err := relErr(got, want); err > 1e-5 {
		t.Fatalf("relative error %.3g", err)
	}
	if !rc.Stale() {
		t.Error("a recording with a turned-off shape is not stale")
	}
	if len(d.fast.bad) != 1 || !d.ProductPath().Active {
		t.Errorf("want one shape off and the engine on, have %v, %+v", d.fast.bad, d.ProductPath())
	}
	// A product of that shape now stays on the shaders; the others still go out.
	bad := chainSteps(nil)[4].p
	bad.Batch = 2
	before := e.products
	runMatMul(t, d, bad, rand.New(rand.NewPCG(5, 6)))
	if e.products != before {
		t.Error("a turned-off shape went to the engine again")
	}
}

// TestSplitEngineOff fails a queueing with an error that is not the product's: the run
// still agrees with the host, and the engine is off for every later product.
func TestSplitEngineOff(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	e.failAt = 1
	e.failErr = errors.New("injected stream failure")
	got, want, _ := runChain(t, d, 2)
	if err := relErr(got, want); err > 1e-5 {
		t.Fatalf("relative error %.3g", err)
	}
	p := d.ProductPath()
	if p.Active || !strings.Contains(p.Reason, "injected stream failure") {
		t.Errorf("ProductPath = %+v, want off with the injected reason", p)
	}
	if e.products != 0 {
		t.Errorf("the engine computed %d products after failing", e.products)
	}
}

// TestSplitAsyncFailure makes a batch fail while the run executes (it never signals):
// the run ends promptly with an error instead of hanging, the engine is off, and the
// device goes on working.
func TestSplitAsyncFailure(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	e.asyncAt = 1
	r := rand.New(rand.NewPCG(7, 8))
	p := MatMul{M: 8, N: 8, K: 8, Batch: 1}
	a, b, c := randSlice(r, 64), randSlice(r, 64), make([]float32, 64)
	p.A, p.B, p.C = mustAlloc(t, d, a), mustAlloc(t, d, b), mustAlloc(t, d, c)
	rec, err := d.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.MatMul(p); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = rec.Submit()
	if err == nil || !strings.Contains(err.Error(), "injected asynchronous failure") {
		t.Fatalf("Submit = %v, want the injected failure", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("the failed run took %v", time.Since(start))
	}
	if d.ProductPath().Active {
		t.Error("the engine stayed on after an asynchronous failure")
	}
	got, want := runMatMul(t, d, p, r)
	if e := relErr(got, want); e > 1e-5 {
		t.Fatalf("after the failure: relative error %.3g", e)
	}
}

// TestSplitPlanRefused: a shape the engine cannot plan runs on the shaders, with the
// engine still on for others.
func TestSplitPlanRefused(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	e.noPlan["5x7x3/1 falsefalse"] = true
	r := rand.New(rand.NewPCG(9, 10))
	got, want := runMatMul(t, d, MatMul{M: 5, N: 7, K: 3, Batch: 1}, r)
	if err := relErr(got, want); err > 1e-5 {
		t.Fatalf("relative error %.3g", err)
	}
	if e.products != 0 || !d.ProductPath().Active {
		t.Errorf("products on the engine %d, path %+v", e.products, d.ProductPath())
	}
}

// TestSplitThreshold: products below the threshold stay on the shaders.
func TestSplitThreshold(t *testing.T) {
	d := openTest(t)
	e := attachFake(t, d)
	d.fast.minWork = 1000
	r := rand.New(rand.NewPCG(11, 12))
	runMatMul(t, d, MatMul{M: 9, N: 10, K: 11, Batch: 1}, r) // 990 multiply-adds
	runMatMul(t, d, MatMul{M: 10, N: 10, K: 10, Batch: 1}, r)
	if e.products != 1 {
		t.Errorf("the engine computed %d products, want only the one at the threshold", e.products)
	}
}

// TestProductPathTakes: the threshold is in f32 multiply-adds, and 16-bit and TF32
// products are weighed by what the engine gains on them.
func TestProductPathTakes(t *testing.T) {
	p := ProductPath{Active: true, MinWork: 1 << 35}
	for _, c := range []struct {
		work int64
		in   DType
		tf32 bool
		want bool
	}{
		{1 << 35, F32, false, true},
		{1<<35 - 1, F32, false, false},
		{1 << 35, BF16, false, false},
		{1 << 36, BF16, false, true},
		{1 << 36, F16, false, true},
		{1 << 33, F32, true, true},
		{1<<33 - 1, F32, true, false},
	} {
		if got := p.Takes(c.work, c.in, c.tf32); got != c.want {
			t.Errorf("Takes(%d, %v, tf32 %v) = %v, want %v", c.work, c.in, c.tf32, got, c.want)
		}
	}
	if (ProductPath{MinWork: 0}).Takes(1<<40, F32, false) {
		t.Error("an inactive path takes a product")
	}
}

// TestCUDANotFound: with no CUDA library in the search path, loading reports it
// cleanly, naming where it looked; and the device in this test run reports its path
// coherently: on the shaders with a reason, or (an NVIDIA GPU with the libraries) the
// engine found and started lazily at the first big product.
func TestCUDANotFound(t *testing.T) {
	_, err := openCUDA([]string{t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "libcudart not found") || !strings.Contains(err.Error(), "GML_CUDA_LIB_DIRS") {
		t.Errorf("openCUDA in an empty folder = %v, want a not-found error naming the search", err)
	}
	d := openTest(t)
	p := d.ProductPath()
	if p.Engine == "" && (p.Active || p.Reason == "" || d.fastReason != "" && p.Reason != d.fastReason) {
		t.Errorf("ProductPath = %+v without an engine, want inactive with the probe's reason %q", p, d.fastReason)
	}
	if !strings.HasPrefix(p.String(), "Vulkan shaders") && !p.Active && p.Engine == "" {
		t.Errorf("ProductPath.String() = %q", p.String())
	}
}

// TestCUDALibDirs: the override comes first and the Python wheels' folders are found.
func TestCUDALibDirs(t *testing.T) {
	venv := t.TempDir()
	lib := filepath.Join(venv, "lib/python3.12/site-packages/nvidia/cu13/lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VIRTUAL_ENV", venv)
	t.Setenv("GML_CUDA_LIB_DIRS", "/first"+string(filepath.ListSeparator)+"/second")
	dirs := cudaLibDirs()
	if len(dirs) < 3 || dirs[0] != "/first" || dirs[1] != "/second" || dirs[2] != "" {
		t.Errorf("dirs start %q, want the override then the linker's search", dirs[:min(3, len(dirs))])
	}
	found := false
	for _, d := range dirs {
		found = found || d == lib
	}
	if !found {
		t.Errorf("the virtual environment's %s is not searched: %q", lib, dirs)
	}
}

// TestTimings: a timed split recording returns one timing per dispatch and per engine
// product, in recording order.
func TestSplitTimings(t *testing.T) {
	d := openTest(t)
	if d.Info.TimestampPeriod == 0 {
		t.Skip("no timestamps")
	}
	attachFake(t, d)
	d.SetProfiling(true)
	defer d.SetProfiling(false)
	r := rand.New(rand.NewPCG(13, 14))
	tile := tileF32Small
	a, b := randSlice(r, 64), randSlice(r, 64)
	p := MatMul{M: 8, N: 8, K: 8, A: mustAlloc(t, d, a), B: mustAlloc(t, d, b), C: mustAlloc(t, d, make([]float32, 64))}
	rec, err := d.NewRecorder()
	if err != nil {
		t.Fatal(err)
	}
	labels := []string{"s1", "e1", "e2", "s2"}
	for _, l := range labels {
		q := p
		q.Label = l
		if l[0] == 's' {
			q.Tile = &tile
		}
		if err := rec.MatMul(q); err != nil {
			t.Fatal(err)
		}
	}
	tm, err := rec.Submit()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range tm {
		got = append(got, x.Label)
	}
	if strings.Join(got, ",") != strings.Join(labels, ",") {
		t.Errorf("timings %v, want %v", got, labels)
	}
}
