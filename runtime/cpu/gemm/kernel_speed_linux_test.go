package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gml-dev/gml/runtime/cpu/internal/hugepage"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

// The tests of this file measure the micro-kernel's speed on the machine they run on
// (doc.go, "Micro-kernel speed"); they run only with GML_GEMM_SPEED=1:
//
//	GML_GEMM_SPEED=1 GML_THREADS=2 taskset -c 0,1 go test -run 'TestKernel(Speed|Pair)$' -v ./runtime/cpu/gemm
//
// GML_GEMM_SPEED_KERNELS lists the kernels to compare, separated by ";": a shape's name
// (kernel.go), optionally with changes to its tuning, "avx512;avx512:kc=192,sweep=256"
// (default: Native's kernel); GML_GEMM_SPEED_CASES the cases, by the first word of
// their name separated by ",", "L1,macro,1024x4096x4096tb" (default: all);
// GML_GEMM_SPEED_ROUNDS the rounds (default 6).

// addChain runs n rounds of eight dependent one-cycle integer operations (adds, xors, and
// two-operand LEAs as the compiler writes some of the adds), so its time gives the core's
// clock.
//
//go:noinline
func addChain(n int, d int) int {
	x := 0
	for range n {
		x += d
		x ^= d
		x += d
		x ^= d
		x += d
		x ^= d
		x += d
		x ^= d
	}
	return x
}

var chainSink int

// clockGHz measures the core's clock with addChain: the best of three runs of a few
// milliseconds. A core may run its 512-bit FMAs at a lower clock than this integer code,
// so FMAs per cycle computed with it are a lower bound.
func clockGHz() float64 {
	const n = 1 << 20
	best := math.Inf(1)
	for range 3 {
		start := time.Now()
		chainSink += addChain(n, 3)
		best = min(best, time.Since(start).Seconds())
	}
	return 8 * n / best / 1e9
}

// speedKernel is a kernel under measurement and the spec that named it.
type speedKernel struct {
	name string
	kern *kernel
}

// speedKernels returns the kernels GML_GEMM_SPEED_KERNELS names.
func speedKernels(t *testing.T) []speedKernel {
	spec := os.Getenv("GML_GEMM_SPEED_KERNELS")
	if spec == "" {
		kern, err := nativeKernel()
		if err != nil {
			t.Skip(err)
		}
		return []speedKernel{{kern.name, kern}}
	}
	var ks []speedKernel
	for _, s := range strings.Split(spec, ";") {
		name, changes, _ := strings.Cut(s, ":")
		known := false
		for _, sh := range shapes {
			known = known || sh.name == name
		}
		if !known {
			t.Fatalf("GML_GEMM_SPEED_KERNELS: unknown shape %q", name)
		}
		kern := *kernelOf(name)
		for _, kv := range strings.Split(changes, ",") {
			if kv == "" {
				continue
			}
			key, val, _ := strings.Cut(kv, "=")
			x, err := strconv.Atoi(val)
			if err != nil {
				t.Fatalf("GML_GEMM_SPEED_KERNELS %q: %v", s, err)
			}
			field := map[string]*int{"mc": &kern.mc, "kc": &kern.kc, "nc": &kern.nc, "sweep": &kern.sweep}[key]
			if field == nil {
				t.Fatalf("GML_GEMM_SPEED_KERNELS %q: unknown tuning %q", s, key)
			}
			*field = x
		}
		ks = append(ks, speedKernel{s, &kern})
	}
	return ks
}

func speedRounds(def int) int {
	if n, err := strconv.Atoi(os.Getenv("GML_GEMM_SPEED_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return def
}

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	hugepage.AdviseFloats(x)
	for i := range x {
		x[i] = r.Float32() - 0.5
	}
	return x
}

// speedCase is one measurement: run does flops(kern) floating-point operations on
// threads goroutines.
type speedCase struct {
	name    string
	threads int
	flops   func(kern *kernel) float64
	run     func(kern *kernel)
}

// kernelCases are the measurements of the kernel without the driver, on one goroutine:
// the kernel alone with its operands in L1 (k = 128, one call repeated), and the
// macro-kernel over one packed 384×256 A block and 256×3072 B block (mb rounded down to
// the kernel's rows), C 4096 floats wide as in the mlp4096 step: the avx512 kernel's
// strip of A in L1, B streamed from L2.
func kernelCases(r *rand.Rand) []speedCase {
	const kb, reps = 128, 40000
	a, b := randFloats(r, maxTile/nr*kb), randFloats(r, 2*nr*kb)
	c := make([]float32, maxTile)
	const mb, kc, nb, ldc = 384, 256, 3072, 4096
	ma, mbuf := randFloats(r, mb*kc), randFloats(r, nb*kc)
	mc := make([]float32, mb*ldc)
	hugepage.AdviseFloats(mc)
	var tile [maxTile]float32
	return []speedCase{
		{"L1 k=128", 1, func(kern *kernel) float64 {
			return 2 * float64(kern.mr*kern.width()*kb*reps)
		}, func(kern *kernel) {
			for range reps {
				kern.full(kb, a, 1, kern.mr, b, nr, nr*kb, c, kern.width(), 1, true)
			}
		}},
		{"macro 384x3072x256", 1, func(kern *kernel) float64 {
			return 2 * 2 * float64(mb/kern.mr*kern.mr*nb*kc)
		}, func(kern *kernel) {
			ab := aBlock{data: ma, strip: kern.mr * kc, rs: 1, cs: kern.mr}
			bb := bBlock{data: mbuf, panel: nr * kc, rs: nr, inPlace: nb}
			for range 2 {
				macroKernel(kern, ab, bb, &tile, mb/kern.mr*kern.mr, nb, kc, mc, ldc, 1, true, nil, nil)
			}
		}},
	}
}

// TestKernelSpeed times the kernels interleaved, in rounds that alternate their order
// (ABC, CBA): the kernelCases, and the three products of the mlp4096 step (1024×4096 by
// 4096×4096, plain and with B transposed, and 4096×1024ᵀ by 1024×4096) through the
// driver with GML_THREADS workers. It prints the median GFLOP/s with its range, 512-bit
// FMAs per cycle per goroutine at the clock measured around each run (two is the peak
// of a core with two FMA units), and the median and range of the per-round ratios to
// the first kernel.
func TestKernelSpeed(t *testing.T) {
	if os.Getenv("GML_GEMM_SPEED") == "" {
		t.Skip("GML_GEMM_SPEED not set")
	}
	ks := speedKernels(t)
	rounds := speedRounds(6)
	r := rand.New(rand.NewPCG(1, 2))
	cases := kernelCases(r)
	for _, sh := range []struct {
		name           string
		m, n, k        int
		transA, transB bool
	}{
		{"1024x4096x4096tb", 1024, 4096, 4096, false, true},
		{"1024x4096x4096", 1024, 4096, 4096, false, false},
		{"4096x4096x1024ta", 4096, 4096, 1024, true, false},
	} {
		ar, ac := sh.m, sh.k
		if sh.transA {
			ar, ac = ac, ar
		}
		br, bc := sh.k, sh.n
		if sh.transB {
			br, bc = bc, br
		}
		a, b := randFloats(r, ar*ac), randFloats(r, br*bc)
		c := make([]float32, sh.m*sh.n)
		hugepage.AdviseFloats(c)
		flops := 2 * float64(sh.m*sh.n*sh.k)
		cases = append(cases, speedCase{sh.name, parallel.Workers(), func(*kernel) float64 { return flops }, func(kern *kernel) {
			sgemm(kern, true, sh.m, sh.n, sh.k, 1, matrix{a, ac, sh.transA}, matrix{b, bc, sh.transB}, 0, c, sh.n, nil, nil)
		}})
	}
	var only []string
	if s := os.Getenv("GML_GEMM_SPEED_CASES"); s != "" {
		only = strings.Split(s, ",")
	}
	fmt.Printf("clock %.2f GHz (add chain); %d workers, %d rounds; GFLOP/s median [range], FMA/cycle, ratio to %s median [range]\n",
		clockGHz(), parallel.Workers(), rounds, ks[0].name)
	for _, sc := range cases {
		if only != nil && !slices.Contains(only, strings.Fields(sc.name)[0]) {
			continue
		}
		for _, k := range ks { // warm up
			sc.run(k.kern)
		}
		gf := make([][]float64, len(ks))
		fpc := make([][]float64, len(ks))
		for round := range rounds {
			for o := range ks {
				i := o
				if round%2 == 1 {
					i = len(ks) - 1 - o
				}
				ghz := clockGHz()
				start := time.Now()
				sc.run(ks[i].kern)
				sec := time.Since(start).Seconds()
				ghz = (ghz + clockGHz()) / 2
				g := sc.flops(ks[i].kern) / sec / 1e9
				gf[i] = append(gf[i], g)
				fpc[i] = append(fpc[i], g/32/ghz/float64(sc.threads))
			}
		}
		var line strings.Builder
		fmt.Fprintf(&line, "%-20s", sc.name)
		for i, k := range ks {
			ratios := make([]float64, rounds)
			for j := range ratios {
				ratios[j] = gf[i][j] / gf[0][j]
			}
			g, f := slices.Sorted(slices.Values(gf[i])), slices.Sorted(slices.Values(fpc[i]))
			slices.Sort(ratios)
			fmt.Fprintf(&line, " | %s %.0f [%.0f-%.0f] %.2f/c x%.3f [%.2f-%.2f]", k.name, g[len(g)/2], g[0], g[len(g)-1],
				f[len(f)/2], ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1])
		}
		fmt.Println(line.String())
	}
}

// TestKernelPair runs the kernelCases with the first kernel on goroutines pinned to CPUs 0
// and 1 (their threads' affinity): alone on each, then on both at once. Two CPUs that
// share a core (SMT siblings: one L1, one L2, two FMA units) each run at about half
// their speed alone when both run; a CPU slower alone than the other is slowed from
// outside (on a virtual machine, by what the host runs beside it).
func TestKernelPair(t *testing.T) {
	if os.Getenv("GML_GEMM_SPEED") == "" {
		t.Skip("GML_GEMM_SPEED not set")
	}
	if runtime.NumCPU() < 2 {
		t.Skip("fewer than two CPUs")
	}
	kern := speedKernels(t)[0].kern
	r := rand.New(rand.NewPCG(1, 2))
	cases := [2][]speedCase{kernelCases(r), kernelCases(r)} // operands of their own per CPU
	run := func(ci int, cpus []int) (gf, fpc [2]float64) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, cpu := range cpus {
			wg.Go(func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var set unix.CPUSet
				set.Set(cpu)
				if err := unix.SchedSetaffinity(0, &set); err != nil {
					t.Errorf("CPU %d: %v", cpu, err)
					return
				}
				ghz := clockGHz()
				sc := cases[cpu][ci]
				sc.run(kern) // warm up
				<-start
				t0 := time.Now()
				sc.run(kern)
				gf[cpu] = sc.flops(kern) / time.Since(t0).Seconds() / 1e9
				fpc[cpu] = gf[cpu] / 32 / ghz
			})
		}
		time.Sleep(20 * time.Millisecond) // until both have warmed up
		close(start)
		wg.Wait()
		return gf, fpc
	}
	rounds := speedRounds(3)
	fmt.Printf("%v pinned: GFLOP/s and FMA/cycle on CPU 0 alone, CPU 1 alone, both at once (in reverse order on odd rounds)\n", kern)
	phases := [][]int{{0}, {1}, {0, 1}}
	for ci := range cases[0] {
		for round := range rounds {
			res := make([]string, len(phases))
			for o := range phases {
				pi := o
				if round%2 == 1 {
					pi = len(phases) - 1 - o
				}
				gf, fpc := run(ci, phases[pi])
				var s strings.Builder
				for _, cpu := range phases[pi] {
					fmt.Fprintf(&s, " cpu%d %.0f %.2f/c", cpu, gf[cpu], fpc[cpu])
				}
				res[pi] = s.String()
			}
			fmt.Printf("%-20s r%d | alone:%s |%s | both:%s\n", cases[0][ci].name, round, res[0], res[1], res[2])
		}
	}
}
