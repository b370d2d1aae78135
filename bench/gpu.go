package bench

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gml-dev/gml/gpu"
	"github.com/gml-dev/gml/tensor"
)

func init() {
	register("gpu-matmul", "GPU matmul TFLOP/s (f32, tf32, f16, bf16; Vulkan shaders, or cuBLASLt where found) against PyTorch on the H200", benchGPUMatMul)
}

func parseTiles(s string) ([]gpu.Tile, error) {
	var out []gpu.Tile
	for _, spec := range strings.Fields(strings.ReplaceAll(s, ";", " ")) {
		var v []uint32
		for _, f := range strings.Split(spec, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				return nil, fmt.Errorf("tile %q: %v", spec, err)
			}
			v = append(v, uint32(n))
		}
		if len(v) == 5 {
			v = append(v, 0)
		}
		if len(v) != 6 {
			return nil, fmt.Errorf("tile %q: want BM,BN,BK,TM,TN[,WarpN] (f32) or BM,BN,BK,WM,WN[,GroupM] (f16/bf16)", spec)
		}
		t := gpu.Tile{BM: v[0], BN: v[1], BK: v[2], TM: v[3], TN: v[4], WM: v[3], WN: v[4], WarpN: v[5], GroupM: v[5]}
		if t.WarpN == 0 {
			t.WarpN = 8
		}
		out = append(out, t)
	}
	return out, nil
}

// benchGPUMatMul times square matrix products with timestamp queries after a warm-up and
// prints one JSON line per type and size, compared with PyTorch on the same GPU model.
func benchGPUMatMul(args []string) error {
	fs := flag.NewFlagSet("bench gpu-matmul", flag.ContinueOnError)
	anchors := fs.String("anchors", anchorFile("pytorch_h200.jsonl"), "reference file (JSON lines): PyTorch's matmul figures, compared only on the GPU they were measured on, or an earlier run")
	sizes := fs.String("n", "1024,4096,8192", "matrix sizes")
	types := fs.String("types", "f32,f16,bf16", "input types: f32, tf32 (f32 operands multiplied in TensorFloat-32 where cuBLASLt runs the product), f16, bf16")
	crossover := fs.String("crossover", "", "instead, time products of these sizes interleaved with shader work, through cuBLASLt and on the shaders (microseconds per product), to place the threshold between them")
	handover := fs.Bool("handover", false, "instead, time round trips between the Vulkan queue and cuBLASLt's stream, and each side alone (microseconds per round trip, -reps of them, 200 unless set), under the scheduling settings in force (GML_VK_QUEUE_PRIORITY, GML_CUDA_STREAM_PRIORITY, GML_CUDA_SCHEDULE)")
	reps := fs.Int("reps", 20, "timed products per case (median reported)")
	// On the H200 a workgroup-scope cooperative-matrix pipeline runs about 5x slower for
	// its first 1-4 seconds on a machine (the driver seems to swap in better code, then
	// caches it on disk), hence a long default warm-up.
	warm := fs.Duration("warmup", 5*time.Second, "warm-up time per case, so clocks and pipelines settle")
	layouts := fs.String("layout", "nn", "operand layouts: nn, nt (B transposed), tn (A transposed)")
	tilesF32 := fs.String("tiles-f32", "", "f32 tiles to try, \"BM,BN,BK,TM,TN[,WarpN];...\" (best reported)")
	tilesCoop := fs.String("tiles-coop", "", "f16/bf16 tiles to try, \"BM,BN,BK,WM,WN[,GroupM];...\" (best reported)")
	shader := fs.String("shader", "", "force a cooperative-matrix shader variant (tuning)")
	stats := fs.String("stats", "", "write what the driver says about each compiled kernel (registers, spills, code) to this directory; time kernels without it, since capturing may change them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *stats != "" {
		// Read by gpu.Open: pipelines then capture the driver's statistics.
		os.Setenv("GML_VK_PIPELINE_STATS", "1")
	}
	refs, err := readReferences(*anchors)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gml bench gpu-matmul: no reference figures (%v); printing without ratios\n", err)
	}
	tf, err := parseTiles(*tilesF32)
	if err != nil {
		return err
	}
	tc, err := parseTiles(*tilesCoop)
	if err != nil {
		return err
	}
	d, err := gpu.Open()
	if err != nil {
		return err
	}
	defer d.Close()
	if *stats != "" {
		defer writePipelineReports(d, *stats)
	}
	if *crossover != "" {
		return benchCrossover(d, *crossover, *types, *reps)
	}
	if *handover {
		trips := 200 // a round trip takes tens of microseconds
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "reps" {
				trips = *reps
			}
		})
		return benchHandover(d, trips)
	}
	d.SetProfiling(true)
	path := d.CheckProductPath()
	fmt.Fprintf(os.Stderr, "gml bench gpu-matmul: matrix products: %s\n", path)
	for _, ts := range strings.Split(*types, ",") {
		in, ok := map[string]gpu.DType{"f32": gpu.F32, "tf32": gpu.F32, "f16": gpu.F16, "bf16": gpu.BF16}[ts]
		if !ok {
			return fmt.Errorf("unknown type %q (f32, tf32, f16, bf16)", ts)
		}
		tiles := []*gpu.Tile{nil}
		for i := range tf {
			if in == gpu.F32 {
				tiles = append(tiles, &tf[i])
			}
		}
		for i := range tc {
			if in != gpu.F32 {
				tiles = append(tiles, &tc[i])
			}
		}
		for _, ns := range strings.Split(*sizes, ",") {
			n, err := strconv.Atoi(ns)
			if err != nil || n <= 0 {
				return fmt.Errorf("bad size %q", ns)
			}
			c, err := prepareMatMul(d, in, n)
			if err != nil {
				return err
			}
			c.tf32 = ts == "tf32"
			for _, layout := range strings.Split(*layouts, ",") {
				tA, tB := layout == "tn", layout == "nt"
				if !tA && !tB && layout != "nn" {
					c.free()
					return fmt.Errorf("unknown layout %q (nn, nt, tn)", layout)
				}
				best, bestTile := 0.0, ""
				for _, t := range tiles {
					v, err := c.time(d, t, *shader, tA, tB, *reps, *warm)
					if err != nil {
						fmt.Fprintf(os.Stderr, "gml bench gpu-matmul: %s %s n=%d tile %+v: %v\n", ts, layout, n, t, err)
						continue
					}
					name := "default"
					if t != nil {
						name = fmt.Sprintf("%d,%d,%d,%d,%d", t.BM, t.BN, t.BK, max(t.TM, t.WM), max(t.TN, t.WN))
						if in == gpu.F32 {
							name += fmt.Sprintf(",%d", t.WarpN)
						} else {
							name += fmt.Sprintf(",%d", t.GroupM)
						}
					}
					if len(tiles) > 1 {
						fmt.Fprintf(os.Stderr, "tile %s %s %s n=%d: %.1f TFLOP/s\n", name, ts, layout, n, v)
					}
					if v > best {
						best, bestTile = v, name
					}
				}
				if best == 0 {
					continue
				}
				// The PyTorch anchors are untransposed products; transposed layouts are
				// compared with them too, since a training step needs all three.
				r := result{Bench: "gpu-matmul", Case: fmt.Sprintf("%s_n%d", ts, n), Device: d.Info.Name, Impl: "vulkan", Value: round(best, 2), Unit: "TFLOP/s"}
				if path.Takes(int64(n)*int64(n)*int64(n), in, c.tf32) && bestTile == "default" && *shader == "" {
					r.Impl = "cublaslt"
				}
				if layout != "nn" {
					r.Case = fmt.Sprintf("%s_%s_n%d", ts, layout, n)
				}
				if bestTile != "default" {
					r.Case += "_tile" + bestTile
				}
				if ref, err := refs.lookup(r, fmt.Sprintf("%s_n%d", ts, n), d.Info.Name); err == nil {
					ref.value = round(ref.value, 2)
					r.compare(ref)
				} else if refs != nil {
					fmt.Fprintf(os.Stderr, "gml bench gpu-matmul: %s: no ratio: %v\n", r.Case, err)
				}
				emit(r)
			}
			c.free()
		}
	}
	return nil
}

// writePipelineReports prints one line per compiled kernel to stderr and writes the
// driver's internal representations of each into dir.
func writePipelineReports(d *gpu.Device, dir string) {
	reports, err := d.PipelineReports()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gml bench gpu-matmul: %v\n", err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "gml bench gpu-matmul: %v\n", err)
		return
	}
	for i, r := range reports {
		fmt.Fprintln(os.Stderr, r)
		for name, text := range r.Internals {
			file := filepath.Join(dir, fmt.Sprintf("%02d_%s.txt", i, strings.Map(func(c rune) rune {
				if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
					return c
				}
				return '_'
			}, name)))
			if err := os.WriteFile(file, []byte(r.Kernel+"\n"+text), 0o644); err != nil {
				fmt.Fprintf(os.Stderr, "gml bench gpu-matmul: %v\n", err)
			}
		}
	}
}

// mmCase is one benchmark problem: random n×n operands of one input type on the
// device, with their host copies (rounded to the input type) for checking.
type mmCase struct {
	in   gpu.DType
	tf32 bool
	n    int
	a, b []float32
	bufs []*gpu.Buffer
}

func (c *mmCase) free() {
	for _, x := range c.bufs {
		x.Free()
	}
}

// prepareMatMul uploads random operands for an n×n×n product of type in.
func prepareMatMul(d *gpu.Device, in gpu.DType, n int) (*mmCase, error) {
	r := rand.New(rand.NewPCG(uint64(n), uint64(in)))
	c := &mmCase{in: in, n: n, a: make([]float32, n*n), b: make([]float32, n*n)}
	for i := range c.a {
		c.a[i], c.b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	var ab, bb []byte
	if in == gpu.F32 {
		ab, bb = gpu.Float32Bytes(c.a), gpu.Float32Bytes(c.b)
	} else {
		conv, back := tensor.Float32ToF16, tensor.F16ToFloat32
		if in == gpu.BF16 {
			conv, back = tensor.Float32ToBF16, tensor.BF16ToFloat32
		}
		ah, bh := make([]uint16, n*n), make([]uint16, n*n)
		for i := range c.a {
			ah[i], bh[i] = conv(c.a[i]), conv(c.b[i])
			c.a[i], c.b[i] = back(ah[i]), back(bh[i])
		}
		ab, bb = gpu.Uint16Bytes(ah), gpu.Uint16Bytes(bh)
	}
	for _, size := range []int{len(ab), len(bb), 4 * n * n} {
		x, err := d.Alloc(uint64(size))
		if err != nil {
			c.free()
			return nil, err
		}
		c.bufs = append(c.bufs, x)
	}
	if err := d.Upload(gpu.Copy{Buf: c.bufs[0], Data: ab}, gpu.Copy{Buf: c.bufs[1], Data: bb}); err != nil {
		c.free()
		return nil, err
	}
	return c, nil
}

// time returns the median TFLOP/s over reps products recorded into one command buffer,
// after warming up for warm, with A or B read transposed when tA or tB is set. It checks
// 64 sampled outputs against a float64 dot product.
func (c *mmCase) time(d *gpu.Device, tile *gpu.Tile, shader string, tA, tB bool, reps int, warm time.Duration) (float64, error) {
	n := c.n
	p := gpu.MatMul{M: n, N: n, K: n, A: c.bufs[0], B: c.bufs[1], C: c.bufs[2], Input: c.in, Tile: tile, TransA: tA, TransB: tB, TF32: c.tf32}
	if c.in != gpu.F32 {
		p.Shader = shader
	}
	if err := d.Zero(c.bufs[2]); err != nil {
		return 0, err
	}
	run := func(count int) ([]gpu.Timing, error) {
		rec, err := d.NewRecorder()
		if err != nil {
			return nil, err
		}
		for i := 0; i < count; i++ {
			if err := rec.MatMul(p); err != nil {
				rec.Discard()
				return nil, err
			}
		}
		return rec.Submit()
	}
	for start := time.Now(); time.Since(start) < warm; {
		if _, err := run(reps); err != nil {
			return 0, err
		}
	}
	tm, err := run(reps)
	if err != nil {
		return 0, err
	}
	out := make([]float32, n*n)
	if err := d.Download(gpu.Copy{Buf: c.bufs[2], Data: gpu.Float32Bytes(out)}); err != nil {
		return 0, err
	}
	r := rand.New(rand.NewPCG(1, uint64(n)))
	for s := 0; s < 64; s++ {
		i, j := r.IntN(n), r.IntN(n)
		var want, mag float64
		for k := 0; k < n; k++ {
			ai, bi := i*n+k, k*n+j
			if tA {
				ai = k*n + i
			}
			if tB {
				bi = j*n + k
			}
			prod := float64(c.a[ai]) * float64(c.b[bi])
			want += prod
			mag += math.Abs(prod)
		}
		tol := 1e-3
		if c.tf32 {
			tol = 4e-3 // operands rounded to 10 bits of mantissa
		}
		if math.Abs(float64(out[i*n+j])-want) > tol*mag || math.IsNaN(float64(out[i*n+j])) {
			return 0, fmt.Errorf("wrong result at (%d,%d): %g, want %g", i, j, out[i*n+j], want)
		}
	}
	ns := make([]float64, len(tm))
	for i, t := range tm {
		ns[i] = t.Ns
	}
	sort.Float64s(ns)
	return 2 * float64(n) * float64(n) * float64(n) / ns[len(ns)/2] / 1e3, nil
}

// benchCrossover times, for each size and type, a recording of reps steps that each
// run a small shader dispatch and then an n×n×n product reading nothing it wrote: once
// with the products through the device's outside library (cuBLASLt) and once on the
// shaders. The wall time per step includes what crossing between the Vulkan queue
// and the library's stream costs, which is what the threshold
// (gpu.Device.SetProductThreshold, GML_CUDA_MIN_WORK) weighs.
func benchCrossover(d *gpu.Device, sizes, types string, reps int) error {
	path := d.CheckProductPath()
	if !path.Active {
		return fmt.Errorf("no outside product library to compare with: %s", path)
	}
	defer d.SetProductThreshold(path.MinWork)
	tile := gpu.Tile{BM: 64, BN: 64, BK: 16, TM: 4, TN: 4, WarpN: 8}
	for _, ts := range strings.Split(types, ",") {
		in, ok := map[string]gpu.DType{"f32": gpu.F32, "f16": gpu.F16, "bf16": gpu.BF16}[ts]
		if !ok {
			return fmt.Errorf("unknown type %q (f32, f16, bf16)", ts)
		}
		small, err := prepareMatMul(d, gpu.F32, 64)
		if err != nil {
			return err
		}
		for _, ns := range strings.Split(sizes, ",") {
			n, err := strconv.Atoi(ns)
			if err != nil || n <= 0 {
				small.free()
				return fmt.Errorf("bad size %q", ns)
			}
			c, err := prepareMatMul(d, in, n)
			if err != nil {
				small.free()
				return err
			}
			for _, impl := range []string{"cublaslt", "vulkan"} {
				limit := int64(0)
				if impl == "vulkan" {
					limit = math.MaxInt64
				}
				d.SetProductThreshold(limit)
				rec, err := d.NewRecorder()
				if err != nil {
					return err
				}
				for range reps {
					if err := rec.MatMul(gpu.MatMul{M: 64, N: 64, K: 64, A: small.bufs[0], B: small.bufs[1], C: small.bufs[2], Tile: &tile}); err != nil {
						rec.Discard()
						return err
					}
					if err := rec.MatMul(gpu.MatMul{M: n, N: n, K: n, A: c.bufs[0], B: c.bufs[1], C: c.bufs[2], Input: in}); err != nil {
						rec.Discard()
						return err
					}
				}
				rc, err := rec.End()
				if err != nil {
					return err
				}
				best := math.Inf(1)
				for range 5 {
					start := time.Now()
					if _, err := rc.Run(); err != nil {
						rc.Release()
						return err
					}
					best = min(best, float64(time.Since(start).Microseconds())/float64(reps))
				}
				rc.Release()
				emit(result{Bench: "gpu-matmul", Case: fmt.Sprintf("crossover_%s_n%d", ts, n), Device: d.Info.Name, Impl: impl, Value: round(best, 1), Unit: "us/step"})
			}
			c.free()
		}
		small.free()
	}
	return nil
}

// benchHandover prints what a crossing between the Vulkan queue and the outside
// library's stream costs against each side alone (gpu.Device.HandoverProbe), one line
// per way, with the scheduling settings on standard error.
func benchHandover(d *gpu.Device, trips int) error {
	settings, times, err := d.HandoverProbe(trips)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "gml bench gpu-matmul: hand-over settings: %s\n", settings)
	for _, h := range times {
		emit(result{Bench: "gpu-matmul", Case: "handover_" + h.Case, Device: d.Info.Name, Value: round(h.Micros, 1), Unit: "us/round-trip"})
	}
	return nil
}
