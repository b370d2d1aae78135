package runtime

import (
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"weak"

	"github.com/gml-dev/gml/tensor"
)

// Runtime compiles graphs for one preferred device, with the CPU as fallback, and owns
// the device buffers of the variables its graphs use. A notebook usually has one
// (Default); programs may make several, for instance one per device to compare them.
type Runtime struct {
	mu        sync.Mutex
	preferred Backend
	cpu       Backend
	vars      map[*tensor.Variable]*resident
	kept      map[weak.Pointer[tensor.Tensor]]uint64 // Keep: tensor -> generation
	keepGen   uint64
	mem       *accounting
	stats     Stats
	prof      *Profile
	log       io.Writer // nil unless GML_LOG_DEVICE=1
	closed    bool
}

// resident is a variable's buffer on its home backend.
type resident struct {
	backend Backend
	buf     Buffer
	pool    Pool
}

// Option configures New.
type Option func(*config)

type config struct {
	device string
}

// Device selects the preferred device: "auto" (a real GPU when one is found, else the
// CPU; software Vulkan such as lavapipe is chosen only by asking for it), "gpu" (the
// Vulkan backend's device, lavapipe included; an error when there is none), "cpu", or
// any other query FindDevice understands: an index, an ID ("vulkan:1"), a type
// ("integrated-gpu", "software-gpu"), "best", part of a name ("H200"). Without this
// option the environment variable GML_DEVICE decides, and then "auto".
func Device(name string) Option { return func(c *config) { c.device = name } }

// New opens the devices and returns a runtime. The CPU backend is always opened: it
// runs whatever the preferred device cannot.
func New(opts ...Option) (*Runtime, error) {
	c := config{device: os.Getenv("GML_DEVICE")}
	for _, o := range opts {
		o(&c)
	}
	if c.device == "" {
		c.device = "auto"
	}
	cpu, err := open("cpu")
	if err != nil {
		return nil, err
	}
	r := newRuntime(cpu, cpu)
	switch q := strings.ToLower(c.device); q {
	case "cpu":
	case "auto":
		if g, err := open("gpu"); err == nil && g.Info().Kind != SoftwareGPU {
			r.preferred = g
		} else {
			note := "no GPU backend linked"
			switch {
			case err != nil && !strings.Contains(err.Error(), "no \"gpu\" backend"):
				note = err.Error()
			case err == nil:
				note = g.Info().Name + " is a software implementation; use Device(\"gpu\") to run on it"
			}
			r.logf("gml: using the CPU (%s)", note)
		}
	default:
		d, err := FindDevice(c.device)
		if err == nil {
			r.preferred, err = d.Open()
		}
		if err != nil {
			return nil, fmt.Errorf("runtime: device %q requested: %w", c.device, err)
		}
	}
	info := r.preferred.Info()
	r.logf("gml: device %s: %s", r.preferred.Name(), info.Name)
	return r, nil
}

// newRuntime makes a runtime over opened backends.
func newRuntime(preferred, cpu Backend) *Runtime {
	r := &Runtime{cpu: cpu, preferred: preferred, vars: map[*tensor.Variable]*resident{}, kept: map[weak.Pointer[tensor.Tensor]]uint64{}, mem: newAccounting()}
	if os.Getenv("GML_LOG_DEVICE") == "1" {
		r.log = os.Stderr
	}
	// A runtime dropped without Close frees its variables' buffers when collected (its
	// executables keep it reachable until they are collected too).
	goruntime.AddCleanup(r, func(vars map[*tensor.Variable]*resident) {
		for _, res := range vars {
			res.backend.Free(res.buf)
		}
	}, r.vars)
	return r
}

var (
	defaultMu sync.Mutex
	defaultRT *Runtime
)

// Default returns the process-wide runtime, creating it on first use with the device
// named by GML_DEVICE (or "auto").
func Default() (*Runtime, error) {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if defaultRT != nil {
		return defaultRT, nil
	}
	r, err := New()
	if err != nil {
		return nil, err
	}
	defaultRT = r
	return r, nil
}

// Backend names the preferred backend in use: "cpu" or "vulkan".
func (r *Runtime) Backend() string { return r.preferred.Name() }

// DeviceInfo describes the preferred device.
func (r *Runtime) DeviceInfo() DeviceInfo { return r.preferred.Info() }

func (r *Runtime) logf(format string, args ...any) {
	if r.log != nil {
		fmt.Fprintf(r.log, format+"\n", args...)
	}
}

// variable returns v's resident buffer, allocating it on backend on and uploading the
// initial value at first use. Variables named "optimizer/..." (moments, step counters,
// learning rates: the convention nn follows) are counted on the optimizer pool, all
// others on the weights pool.
func (r *Runtime) variable(v *tensor.Variable, on Backend) (*resident, error) {
	if res, ok := r.vars[v]; ok {
		return res, nil
	}
	pool := PoolWeights
	if strings.HasPrefix(v.Name(), "optimizer/") {
		pool = PoolOptimizer
	}
	bytes := int64(v.DType().Bytes(v.Shape().Size()))
	buf, err := r.alloc(on, bytes, pool)
	if err != nil {
		return nil, fmt.Errorf("runtime: %v: %w", v, err)
	}
	if err := r.upload(on, buf, v.Init().Bytes()); err != nil {
		r.free(on, buf, pool)
		return nil, fmt.Errorf("runtime: uploading %v: %w", v, err)
	}
	res := &resident{backend: on, buf: buf, pool: pool}
	r.vars[v] = res
	return res, nil
}

// Read returns the current value of a variable; its initial value if no graph has used it.
func (r *Runtime) Read(v *tensor.Variable) (*tensor.Tensor, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.vars[v]
	if !ok {
		return v.Init().Clone(), nil
	}
	t := tensor.New(v.DType(), v.Shape()...)
	if err := r.download(res.backend, res.buf, t.Bytes()); err != nil {
		return nil, fmt.Errorf("runtime: reading %v: %w", v, err)
	}
	return t, nil
}

// Write overwrites a variable's value on its device.
func (r *Runtime) Write(v *tensor.Variable, t *tensor.Tensor) error {
	if t.DType() != v.DType() || !t.Shape().Equal(v.Shape()) {
		return fmt.Errorf("runtime: writing %v%v into %v", t.DType(), t.Shape(), v)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := r.variable(v, r.preferred)
	if err != nil {
		return err
	}
	return r.upload(res.backend, res.buf, t.Bytes())
}

// Release frees a variable's device buffer; a later use uploads its initial value again.
func (r *Runtime) Release(v *tensor.Variable) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res, ok := r.vars[v]; ok {
		r.free(res.backend, res.buf, res.pool)
		delete(r.vars, v)
	}
}

// Keep declares that t's data will not change while it is kept, so that an executable
// fed t again skips the upload when the input's buffer still holds it: a batch reused
// across training steps, or any input repeated between runs, crosses to the device
// once (as a tensor moved to the GPU does in PyTorch). Changing t's data while it is
// kept is a promise broken that the runtime cannot see: call Keep again after a change
// (the next run uploads t once more), or Unkeep it. Keeping does not hold t: once t is
// unreachable it is collected and forgotten, so keeping every new batch leaks nothing.
func (r *Runtime) Keep(t *tensor.Tensor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keepGen++
	w := weak.Make(t)
	if _, ok := r.kept[w]; !ok {
		goruntime.AddCleanup(t, r.forget, w)
	}
	r.kept[w] = r.keepGen
}

// forget drops a collected kept tensor.
func (r *Runtime) forget(w weak.Pointer[tensor.Tensor]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.kept, w)
}

// Unkeep ends Keep: every later run that is fed t uploads it.
func (r *Runtime) Unkeep(t *tensor.Tensor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.kept, weak.Make(t))
}

// Close frees every variable buffer the runtime holds. Executables compiled by it must
// be freed first. The shared backends stay open (see Shutdown).
func (r *Runtime) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for v, res := range r.vars {
		r.free(res.backend, res.buf, res.pool)
		delete(r.vars, v)
	}
	r.closed = true
	return nil
}

// Stats counts what the scheduler and the transfers did since the runtime was made.
type Stats struct {
	Fallbacks     int   // nodes compiled onto the CPU because the preferred device lacks the op
	Uploads       int   // host -> device transfers
	UploadBytes   int64 // bytes moved host -> device
	Downloads     int   // device -> host transfers
	DownloadBytes int64 // bytes moved device -> host
	KeptFeeds     int   // feeds not uploaded again because the device still held them (Keep)
}

// Stats returns the counters.
func (r *Runtime) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

// Profile turns per-op profiling on (with a fresh profile) or off.
func (r *Runtime) Profile(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.prof = NewProfile()
	} else {
		r.prof = nil
	}
}

// ProfileReport returns the profile gathered since Profile(true), rendered as a table.
func (r *Runtime) ProfileReport() ProfileReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.prof == nil {
		return ProfileReport{}
	}
	return ProfileReport{Device: r.preferred.Name(), Rows: r.prof.Stats()}
}

func (r *Runtime) isHost(b Backend) bool { return b == r.cpu }

func (r *Runtime) upload(b Backend, buf Buffer, src []byte) error {
	if !r.isHost(b) {
		r.stats.Uploads++
		r.stats.UploadBytes += int64(len(src))
	}
	return b.Upload(buf, src)
}

func (r *Runtime) download(b Backend, buf Buffer, dst []byte) error {
	if !r.isHost(b) {
		r.stats.Downloads++
		r.stats.DownloadBytes += int64(len(dst))
	}
	return b.Download(buf, dst)
}
