package bench

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gml-dev/gml/gpu"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

func init() {
	register("gguf", "products with quantised weights (Q4_0, Q8_0, Q4_K): matvec and batch-32 GB/s and GFLOP/s on the CPU and GPU, against a plain copy", benchGGUF)
}

// benchGGUF times x @ wᵀ with w quantised, as a GGUF model's linear layers run: a
// matrix-vector product (one token) and a batch of 32 rows, for each type, on the CPU
// backend and on the GPU backend where there is one. GB/s counts the weights' bytes (the
// traffic a matrix-vector product is bound by); GFLOP/s counts 2·M·N·K. The reference of
// the GB/s figures is a plain copy measured in the same run on the same device (a
// parallel copy on the CPU as `gml bench cpu` measures it, an f32 copy kernel on the
// GPU), counted as bytes read plus bytes written; the goal for Q4_0's matrix-vector
// product on the CPU is a ratio of 0.7. CPU figures are wall time, best of -runs; GPU
// figures are GPU timestamps of the product's dispatch, best of -runs averages.
func benchGGUF(args []string) error {
	fs := flag.NewFlagSet("bench gguf", flag.ContinueOnError)
	device := fs.String("device", "all", "cpu, gpu or all")
	typesFlag := fs.String("types", "q4_0,q8_0,q4_k", "weight types")
	rows := fs.Int("n", 14336, "rows of the weight matrix (output features)")
	k := fs.Int("k", 4096, "columns of the weight matrix (input features; a multiple of 256)")
	batches := fs.String("batch", "1,32", "rows of x: 1 is a matrix-vector product")
	runs := fs.Int("runs", 7, "timed runs per figure (the best is reported)")
	minTime := fs.Duration("min_time", 100*time.Millisecond, "least time of one timed run")
	copyMiB := fs.Int("copy", 256, "MiB of f32 the reference copy moves (well beyond the caches)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *k%256 != 0 || *k <= 0 || *rows <= 0 || *runs < 1 || *copyMiB < 1 {
		return fmt.Errorf("-k must be a positive multiple of 256, -n, -runs and -copy positive")
	}
	var types []tensor.DType
	for _, s := range strings.Split(*typesFlag, ",") {
		dt, err := tensor.ParseDType(strings.TrimSpace(s))
		if err != nil || !dt.IsQuantized() {
			return fmt.Errorf("-types: %q is not q4_0, q8_0 or q4_k", s)
		}
		types = append(types, dt)
	}
	var ms []int
	for _, s := range strings.Split(*batches, ",") {
		var m int
		if _, err := fmt.Sscan(strings.TrimSpace(s), &m); err != nil || m < 1 {
			return fmt.Errorf("-batch: %q is not a positive integer", s)
		}
		ms = append(ms, m)
	}
	t := timer{runs: *runs, minTime: *minTime}
	var backends []runtime.Backend
	if *device == "cpu" || *device == "all" {
		backends = append(backends, cpu.New())
	}
	if *device == "gpu" || *device == "all" {
		g, err := gpu.NewBackend()
		switch {
		case err == nil:
			backends = append(backends, g)
		case *device == "gpu":
			return err
		default:
			fmt.Fprintf(os.Stderr, "gml bench gguf: no GPU (%v); CPU only\n", err)
		}
	}
	for _, be := range backends {
		defer be.Close()
		if err := benchGGUFOn(be, t, types, ms, *rows, *k, *copyMiB<<18); err != nil {
			return fmt.Errorf("%s: %w", be.Name(), err)
		}
	}
	return nil
}

func benchGGUFOn(be runtime.Backend, t timer, types []tensor.DType, ms []int, n, k, copyFloats int) error {
	gpuDev := be.Name() != "cpu"
	dev, threads := "cpu", parallel.Workers()
	if gpuDev {
		dev, threads = "gpu", 0
	}
	copyRate, err := copyBandwidth(be, t, copyFloats)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	ref := reference{name: "copy", threads: threads, value: round(copyRate/1e9, 1)}
	emit(result{Bench: "gguf", Case: fmt.Sprintf("copy_f32_%dMiB", copyFloats>>18), Device: dev, Threads: threads, Value: ref.value, Unit: "GB/s"})
	for _, dt := range types {
		wbytes := float64(dt.Bytes(n * k))
		for _, m := range ms {
			g := tensor.NewGraph()
			y := tensor.MatMulT(g.Input("x", tensor.F32, m, k), g.Input("w", dt, n, k), false, true)
			p, err := prepareOn(be, y)
			if err != nil {
				return err
			}
			var secs float64
			if gpuDev {
				secs, err = p.gpuSeconds(t)
			} else {
				var rate float64
				rate, err = t.best(1, p.run)
				secs = 1 / rate
			}
			p.free()
			if err != nil {
				return err
			}
			shape := fmt.Sprintf("%s_%dx%d", dt, n, k)
			what := "matvec"
			if m > 1 {
				what = fmt.Sprintf("batch%d", m)
			}
			r := result{Bench: "gguf", Case: shape + "_" + what + "_bytes", Device: dev, Threads: threads, Value: round(wbytes/secs/1e9, 3), Unit: "GB/s"}
			r.compare(ref)
			emit(r)
			emit(result{Bench: "gguf", Case: shape + "_" + what + "_flops", Device: dev, Threads: threads,
				Value: round(2*float64(m)*float64(n)*float64(k)/secs/1e9, 2), Unit: "GFLOP/s"})
		}
	}
	return nil
}

// copyBandwidth measures a plain copy of n floats, as bytes read plus written per
// second: Go's copy over the cores on the CPU, the f32 copy kernel (a cast to the same
// type) on a GPU.
func copyBandwidth(be runtime.Backend, t timer, n int) (float64, error) {
	if be.Name() == "cpu" {
		src, dst := make([]float32, n), make([]float32, n)
		for i := range src {
			src[i] = float32(i)
		}
		return t.best(float64(8*n), func() error {
			parallel.For(n, 1<<20, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
			return nil
		})
	}
	g := tensor.NewGraph()
	p, err := prepareOn(be, tensor.Cast(g.Input("x", tensor.F32, n), tensor.F32))
	if err != nil {
		return 0, err
	}
	defer p.free()
	secs, err := p.gpuSeconds(t)
	return float64(8*n) / secs, err
}

// prepared is one node prepared on a backend with its inputs uploaded once, so that a
// run times the node's kernel alone.
type prepared struct {
	be   runtime.Backend
	node *tensor.Node
	prog runtime.Program
	bufs []runtime.Buffer
}

// prepareOn gives out and its inputs (graph inputs, filled with random values or
// random quantised weights) buffers on be and prepares out's node.
func prepareOn(be runtime.Backend, out *tensor.Node) (*prepared, error) {
	p := &prepared{be: be, node: out}
	seg := &runtime.Segment{Nodes: []*tensor.Node{out}, Buffers: map[*tensor.Node]runtime.Buffer{}}
	for i, n := range append(append([]*tensor.Node(nil), out.Inputs()...), out) {
		buf, err := be.Alloc(int64(n.DType().Bytes(n.Shape().Size())), runtime.PoolScratch)
		if err != nil {
			p.free()
			return nil, err
		}
		p.bufs = append(p.bufs, buf)
		seg.Buffers[n] = buf
		if n == out {
			continue
		}
		t, err := tensor.FromFloat32s(n.Shape(), randomF32(n.Shape().Size(), uint64(i+1)))
		if err == nil && n.DType() != tensor.F32 {
			t, err = t.Quantize(n.DType())
		}
		if err == nil {
			err = be.Upload(buf, t.Bytes())
		}
		if err != nil {
			p.free()
			return nil, err
		}
	}
	prog, err := be.Prepare(seg)
	if err != nil {
		p.free()
		return nil, fmt.Errorf("preparing %v: %w", out, err)
	}
	p.prog = prog
	return p, nil
}

func (p *prepared) run() error { return p.prog.Run(nil) }

// gpuSeconds returns the node's GPU time per run from timestamps: the best over t's
// runs of the mean over as many runs as fill its minimum time.
func (p *prepared) gpuSeconds(t timer) (float64, error) {
	if err := p.prog.Run(nil); err != nil { // warm-up: pipelines, clocks
		return 0, err
	}
	best := 0.0
	for range t.runs {
		prof := runtime.NewProfile()
		start := time.Now()
		for time.Since(start) < t.minTime {
			if err := p.prog.Run(prof); err != nil {
				return 0, err
			}
		}
		for _, s := range prof.Stats() {
			if s.Op == p.node.Op() && s.Count > 0 {
				per := s.Time.Seconds() / float64(s.Count)
				if best == 0 || per < best {
					best = per
				}
			}
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("the GPU reported no time for %v", p.node)
	}
	return best, nil
}

func (p *prepared) free() {
	if p.prog != nil {
		p.prog.Release()
	}
	for _, b := range p.bufs {
		p.be.Free(b)
	}
}
