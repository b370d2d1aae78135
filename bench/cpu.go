package bench

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gml-dev/gml/internal/openblas"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu"
	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/tensor"
)

func init() {
	register("cpu", "CPU backend kernels: f32 matmul GFLOP/s against OpenBLAS, conv2d GFLOP/s, elementwise GB/s", benchCPU)
}

// benchCPU measures the CPU backend's own kernels, each prepared as a one-node program
// exactly as a graph would run it: square f32 matmul and, in the same run, OpenBLAS's
// sgemm (the reference, when it loads) on as many threads as ours; a 3×3 conv2d forward
// and both backward passes; and an f32 add. Every figure is the best of -runs timed runs
// after one warm-up run (the best, not the median, because on shared machines other
// processes only ever slow a run down); each timed run repeats the kernel until it has
// taken at least -min_time.
func benchCPU(args []string) error {
	fs := flag.NewFlagSet("bench cpu", flag.ContinueOnError)
	sizesFlag := fs.String("sizes", "256,512,1024,2048", "comma-separated matmul cases: N (square), MxNxK with an optional ta/tb/tatb suffix (transposed operands) and /B (a batch of B products), or \"train\" for the products of the nn workloads' training steps")
	runs := fs.Int("runs", 7, "timed runs per figure (the best is reported)")
	minTime := fs.Duration("min_time", 50*time.Millisecond, "least time of one timed run")
	only := fs.String("case", "", "run only the cases of this bench: matmul, conv2d or elementwise")
	refFile := fs.String("ref", "", "compare with the figures of this file (an earlier `gml bench cpu` run, JSON lines) instead of OpenBLAS in the same run; matched by case and thread count")
	profile := fs.Bool("profile", false, "print the per-op profile of the timed runs to stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile (go tool pprof) of the run to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *runs < 1 {
		return fmt.Errorf("-runs must be at least 1, got %d", *runs)
	}
	if *only != "" && *only != "matmul" && *only != "conv2d" && *only != "elementwise" {
		return fmt.Errorf("-case %q: want matmul, conv2d or elementwise", *only)
	}
	shapes, err := parseMatMulCases(*sizesFlag)
	if err != nil {
		return fmt.Errorf("-sizes: %w", err)
	}
	b := &cpuBench{t: timer{runs: *runs, minTime: *minTime}, be: cpu.New(), impl: gemm.Default(), threads: parallel.Workers()}
	defer b.be.Close()
	if b.impl == gemm.OpenBLAS {
		// The backend's products are OpenBLAS's: on our thread count, like the rest.
		openblas.SetNumThreads(b.threads)
	}
	if note := gemm.DefaultNote(); note != "" {
		fmt.Fprintln(os.Stderr, "gml bench cpu:", note)
	}
	if *refFile != "" {
		refs, err := readReferences(*refFile)
		if err != nil {
			return fmt.Errorf("-ref: %w", err)
		}
		b.refs = refs
	} else {
		b.openBLAS = b.openBLASReference()
	}
	if *profile {
		b.prof = runtime.NewProfile()
		defer func() {
			fmt.Fprintln(os.Stderr, runtime.ProfileReport{Device: "cpu", Rows: b.prof.Stats()})
		}()
	}
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return fmt.Errorf("-cpuprofile: %w", err)
	}
	defer stop()
	if *only == "" || *only == "matmul" {
		for _, sh := range shapes {
			if err := b.matMul(sh); err != nil {
				return err
			}
		}
	}
	if *only == "" || *only == "conv2d" {
		if err := b.conv(); err != nil {
			return err
		}
	}
	if *only == "" || *only == "elementwise" {
		return b.add()
	}
	return nil
}

// cpuBench is one run of `gml bench cpu`.
type cpuBench struct {
	t        timer
	be       *cpu.Backend
	impl     gemm.Impl // behind the backend's products
	threads  int       // the backend's worker threads
	openBLAS bool      // time OpenBLAS beside our products
	refs     *references
	prof     *runtime.Profile // per-op profile of the timed runs, when asked for
}

// openBLASReference reports whether OpenBLAS can serve as the reference of this run and
// sets its thread count to ours, so both sides use the same cores.
func (b *cpuBench) openBLASReference() bool {
	if err := openblas.Load(); err != nil {
		fmt.Fprintln(os.Stderr, "gml bench cpu: no reference figures:", err)
		return false
	}
	if b.impl == gemm.OpenBLAS {
		fmt.Fprintln(os.Stderr, "gml bench cpu: the backend's products are OpenBLAS (GML_BLAS=openblas): no reference to compare them with")
		return false
	}
	openblas.SetNumThreads(b.threads)
	fmt.Fprintf(os.Stderr, "gml bench cpu: %v on %d threads against %s (%s) on %d threads, best of %d runs\n",
		b.impl, b.threads, openblas.Path(), openblas.Config(), openblas.Threads(), b.t.runs)
	return true
}

// emit prints r, compared with the reference file's figure for caseName when a file was
// given.
func (b *cpuBench) emit(r result) {
	if b.refs != nil {
		ref, err := b.refs.lookup(r, r.Case, "cpu")
		if err != nil {
			fmt.Fprintf(os.Stderr, "gml bench cpu: %s %s: no ratio: %v\n", r.Bench, r.Case, err)
		} else {
			r.compare(ref)
		}
	}
	emit(r)
}

// timer runs an operation the configured number of times and keeps the best rate.
type timer struct {
	runs    int
	minTime time.Duration
}

// best returns the largest work/second over the timed runs of op, after one warm-up.
func (t timer) best(work float64, op func() error) (float64, error) {
	if err := op(); err != nil {
		return 0, err
	}
	best := 0.0
	for range t.runs {
		r, err := t.rate(work, op)
		if err != nil {
			return 0, err
		}
		best = max(best, r)
	}
	return best, nil
}

// rate times one run: op repeated until it has taken at least minTime, as work/second.
func (t timer) rate(work float64, op func() error) (float64, error) {
	start := time.Now()
	reps := 0
	for time.Since(start) < t.minTime || reps == 0 {
		if err := op(); err != nil {
			return 0, err
		}
		reps++
	}
	return work * float64(reps) / time.Since(start).Seconds(), nil
}

// openBLASSettle is how long OpenBLAS's idle threads keep spinning after a call; the
// benchmark waits this long before timing our kernel so they do not steal its cores.
const openBLASSettle = 300 * time.Millisecond

func randomF32(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.Float64()*2 - 1)
	}
	return s
}

// kernel is one node prepared on the CPU backend, its inputs computed and filled with
// random data, so that running it times the backend's kernel for that node and nothing
// else (no scheduling, no transfers).
type kernel struct {
	prog runtime.Program
	prof *runtime.Profile
	bufs []runtime.Buffer
	be   *cpu.Backend
}

// prepare builds the kernel of node out: every node out depends on gets a buffer, the
// graph inputs random values, and the nodes before out run once.
func (b *cpuBench) prepare(out *tensor.Node) (*kernel, error) {
	k := &kernel{be: b.be, prof: b.prof}
	var order []*tensor.Node
	seen := map[*tensor.Node]bool{}
	var visit func(n *tensor.Node)
	visit = func(n *tensor.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		for _, x := range n.Inputs() {
			visit(x)
		}
		order = append(order, n)
	}
	visit(out)
	seg := &runtime.Segment{Buffers: map[*tensor.Node]runtime.Buffer{}}
	for i, n := range order {
		size := int64(n.Shape().Size() * n.DType().Size())
		buf, err := b.be.Alloc(size, runtime.PoolScratch)
		if err != nil {
			k.free()
			return nil, err
		}
		k.bufs = append(k.bufs, buf)
		seg.Buffers[n] = buf
		if n.Op() == tensor.OpInput {
			t, err := tensor.FromFloat32s(n.Shape(), randomF32(n.Shape().Size(), uint64(i+1)))
			if err == nil {
				err = b.be.Upload(buf, t.Bytes())
			}
			if err != nil {
				k.free()
				return nil, err
			}
		}
	}
	seg.Nodes = order[:len(order)-1]
	setup, err := b.be.Prepare(seg)
	if err == nil {
		err = setup.Run(nil)
		setup.Release()
	}
	if err == nil {
		seg.Nodes = order[len(order)-1:]
		k.prog, err = b.be.Prepare(seg)
	}
	if err != nil {
		k.free()
		return nil, fmt.Errorf("preparing %v: %w", out, err)
	}
	return k, nil
}

func (k *kernel) run() error { return k.prog.Run(k.prof) }

func (k *kernel) free() {
	if k.prog != nil {
		k.prog.Release()
	}
	for _, buf := range k.bufs {
		k.be.Free(buf)
	}
}

// matMulCase is one product of `gml bench cpu`: batch products of op(A) (m×k) by op(B)
// (k×n), with A stored transposed when ta and B when tb.
type matMulCase struct {
	m, n, k, batch int
	ta, tb         bool
	square         bool // given as one size: named f32_nN
}

// trainingCases are the products of the nn workloads' training steps (bench nn): the
// transformer's 2048-token projections and MLP, the products of their input gradients
// (B transposed) and weight gradients (A transposed, summed over the tokens), its
// attention heads as batches (the fused attention kernel's tile products), the
// 784-128 MLP's layer at batch 32 and 256 with its weight gradient, and cnn28's dense
// layer (1600 features to 128 at batch 64) with its input and weight gradients.
const trainingCases = "2048x128x128,2048x512x128,2048x128x512,2048x128x128tb,2048x512x128tb,2048x128x512tb," +
	"128x128x2048ta,128x512x2048ta,512x128x2048ta,64x64x16tb/256,64x16x64/256," +
	"32x128x784,784x128x32ta,256x128x784,784x128x256ta,64x128x1600,64x1600x128tb,1600x128x64ta"

// parseMatMulCases reads the -sizes list.
func parseMatMulCases(list string) ([]matMulCase, error) {
	list = strings.ReplaceAll(list, "train", trainingCases)
	var cases []matMulCase
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if n, err := strconv.Atoi(f); err == nil {
			if n < 1 {
				return nil, fmt.Errorf("%q is not a positive size", f)
			}
			cases = append(cases, matMulCase{m: n, n: n, k: n, batch: 1, square: true})
			continue
		}
		c := matMulCase{batch: 1}
		spec, batch, hasBatch := strings.Cut(f, "/")
		if hasBatch {
			b, err := strconv.Atoi(batch)
			if err != nil || b < 1 {
				return nil, fmt.Errorf("%q: batch %q is not a positive integer", f, batch)
			}
			c.batch = b
		}
		dims := strings.TrimRight(spec, "tab")
		switch spec[len(dims):] {
		case "":
		case "ta":
			c.ta = true
		case "tb":
			c.tb = true
		case "tatb":
			c.ta, c.tb = true, true
		default:
			return nil, fmt.Errorf("%q: suffix %q is not ta, tb or tatb", f, spec[len(dims):])
		}
		parts := strings.Split(dims, "x")
		var v [3]int
		for i := range v {
			if len(parts) != 3 {
				return nil, fmt.Errorf("%q is neither a size nor MxNxK", f)
			}
			n, err := strconv.Atoi(parts[i])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%q: %q is not a positive integer", f, parts[i])
			}
			v[i] = n
		}
		c.m, c.n, c.k = v[0], v[1], v[2]
		cases = append(cases, c)
	}
	return cases, nil
}

// name is the case's name in the output: f32_n1024, f32_2048x128x512tb, f32_64x64x16tb_b256.
func (c matMulCase) name() string {
	if c.square {
		return fmt.Sprintf("f32_n%d", c.n)
	}
	s := fmt.Sprintf("f32_%dx%dx%d", c.m, c.n, c.k)
	if c.ta {
		s += "ta"
	}
	if c.tb {
		s += "tb"
	}
	if c.batch > 1 {
		s += fmt.Sprintf("_b%d", c.batch)
	}
	return s
}

// matMul times the backend's product and, when OpenBLAS is the reference, OpenBLAS's
// (one call per batch item), alternating the two so that both see the same background
// load; after each OpenBLAS run it waits for OpenBLAS's threads to stop spinning.
func (b *cpuBench) matMul(mc matMulCase) error {
	g := tensor.NewGraph()
	ra, ca, rb, cb := mc.m, mc.k, mc.k, mc.n
	if mc.ta {
		ra, ca = ca, ra
	}
	if mc.tb {
		rb, cb = cb, rb
	}
	lead := func(r, c int) []int {
		if mc.batch > 1 {
			return []int{mc.batch, r, c}
		}
		return []int{r, c}
	}
	k, err := b.prepare(tensor.MatMulT(g.Input("a", tensor.F32, lead(ra, ca)...), g.Input("b", tensor.F32, lead(rb, cb)...), mc.ta, mc.tb))
	if err != nil {
		return fmt.Errorf("matmul %s: %w", mc.name(), err)
	}
	defer k.free()
	sa, sb, sc := ra*ca, rb*cb, mc.m*mc.n
	a, bm, c := randomF32(mc.batch*sa, 1), randomF32(mc.batch*sb, 2), make([]float32, mc.batch*sc)
	flops := 2 * float64(mc.m) * float64(mc.n) * float64(mc.k) * float64(mc.batch)
	ops := []func() error{k.run}
	if b.openBLAS {
		ops = append(ops, func() error {
			for t := range mc.batch {
				if err := gemm.OpenBLAS.Sgemm(mc.ta, mc.tb, mc.m, mc.n, mc.k, 1, a[t*sa:], ca, bm[t*sb:], cb, 0, c[t*sc:], mc.n); err != nil {
					return err
				}
			}
			return nil
		})
	}
	best := make([]float64, len(ops))
	for round := -1; round < b.t.runs; round++ { // round -1 warms up
		for i, op := range ops {
			r, err := b.t.rate(flops, op)
			if err != nil {
				return fmt.Errorf("matmul %s: %w", mc.name(), err)
			}
			if round >= 0 {
				best[i] = max(best[i], r)
			}
			if i == 1 {
				time.Sleep(openBLASSettle)
			}
		}
	}
	r := result{Bench: "matmul", Case: mc.name(), Device: "cpu", Impl: b.impl.String(),
		Threads: b.threads, Value: round(best[0]/1e9, 1), Unit: "GFLOP/s"}
	if b.openBLAS {
		r.compare(reference{name: "openblas", threads: openblas.Threads(), value: round(best[1]/1e9, 1)})
	}
	b.emit(r)
	return nil
}

// conv times a LeNet-sized layer: batch 64, 32 to 64 channels, 28×28, 3×3, padding 1,
// forward and the two gradients a training step computes (with respect to the input and
// to the weights).
func (b *cpuBench) conv() error {
	g := tensor.NewGraph()
	x, w := g.Input("x", tensor.F32, 64, 32, 28, 28), g.Input("w", tensor.F32, 64, 32, 3, 3)
	y := tensor.Conv2D(x, w, tensor.ConvOptions{Padding: tensor.PadSymmetric(1)})
	dy := g.Input("dy", tensor.F32, y.Shape()...)
	grads := tensor.GradWithSeed([]*tensor.Node{y}, []*tensor.Node{dy}, []*tensor.Node{x, w})
	flops := 2 * float64(y.Shape().Size()) * float64(32*3*3)
	for _, c := range []struct {
		name string
		node *tensor.Node
	}{{"fwd", y}, {"bwd_data", grads[0]}, {"bwd_filter", grads[1]}} {
		k, err := b.prepare(c.node)
		if err != nil {
			return fmt.Errorf("conv2d %s: %w", c.name, err)
		}
		v, err := b.t.best(flops, k.run)
		k.free()
		if err != nil {
			return fmt.Errorf("conv2d %s: %w", c.name, err)
		}
		b.emit(result{Bench: "conv2d", Case: "f32_b64_c32_k64_28x28_3x3_" + c.name, Device: "cpu", Impl: b.impl.String(),
			Threads: b.threads, Value: round(v/1e9, 1), Unit: "GFLOP/s"})
	}
	return nil
}

// add times the backend's c = a + b on 16M float32 elements, counting the bytes read and
// written.
func (b *cpuBench) add() error {
	const n = 16 << 20
	g := tensor.NewGraph()
	k, err := b.prepare(tensor.Add(g.Input("a", tensor.F32, n), g.Input("b", tensor.F32, n)))
	if err != nil {
		return fmt.Errorf("add: %w", err)
	}
	defer k.free()
	v, err := b.t.best(3*4*n, k.run)
	if err != nil {
		return fmt.Errorf("add: %w", err)
	}
	b.emit(result{Bench: "elementwise", Case: "f32_add_16M", Device: "cpu", Threads: b.threads, Value: round(v/1e9, 1), Unit: "GB/s"})
	return nil
}
