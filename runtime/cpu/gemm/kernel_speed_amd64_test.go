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

// addChain runs n rounds of eight dependent adds of d (one cycle each on any x86-64
// core), so its time gives the core's clock.
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

// clockGHz measures the core's clock with addChain.
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

type speedVariant struct {
	name string
	kern *kernel
}

// speedVariants are the kernels TestKernelSpeed compares.
func speedVariants(t *testing.T) []speedVariant {
	base := asmKernel(shapeAVX512)
	if base == nil {
		t.Skip("no avx512 assembly on this CPU")
	}
	k12a := *base
	k12a.full = kernelAVX512A
	k14 := *base
	k14.mr, k14.full, k14.narrow = 14, kernelAVX512x14, kernelAVX512x14Narrow
	k14.mc = 378
	k14p := k14
	k14p.full = func(k int, a []float32, rsA, csA int, b []float32, rsB, offB int, c []float32, ldc int, alpha float32, add bool) {
		if rsA == 1 && csA == 14 && rsB == nr {
			kernelAVX512x14P(k, a, rsA, csA, b, rsB, offB, c, ldc, alpha, add)
			return
		}
		kernelAVX512x14(k, a, rsA, csA, b, rsB, offB, c, ldc, alpha, add)
	}
	k14p32 := k14
	k14p32.full = func(k int, a []float32, rsA, csA int, b []float32, rsB, offB int, c []float32, ldc int, alpha float32, add bool) {
		if rsA == 1 && csA == 14 && rsB == nr {
			kernelAVX512x14P32(k, a, rsA, csA, b, rsB, offB, c, ldc, alpha, add)
			return
		}
		kernelAVX512x14(k, a, rsA, csA, b, rsB, offB, c, ldc, alpha, add)
	}
	all := []speedVariant{{"k12", base}, {"k12a", &k12a}, {"k14", &k14}, {"k14p", &k14p}, {"k14p32", &k14p32}}
	want := os.Getenv("GML_GEMM_SPEED_VARIANTS")
	if want == "" {
		return all
	}
	// A variant is a kernel's name, optionally followed by tuning changes:
	// "k14p:kc=192,sweep=256".
	var vs []speedVariant
	for _, spec := range strings.Split(want, ";") {
		name, changes, _ := strings.Cut(spec, ":")
		i := slices.IndexFunc(all, func(v speedVariant) bool { return v.name == name })
		if i < 0 {
			t.Fatalf("unknown variant %q", name)
		}
		k := *all[i].kern
		for _, kv := range strings.Split(changes, ",") {
			if kv == "" {
				continue
			}
			key, val, _ := strings.Cut(kv, "=")
			x, err := strconv.Atoi(val)
			if err != nil {
				t.Fatalf("variant %q: %v", spec, err)
			}
			switch key {
			case "mc":
				k.mc = x
			case "kc":
				k.kc = x
			case "nc":
				k.nc = x
			case "sweep":
				k.sweep = x
			default:
				t.Fatalf("variant %q: unknown key %q", spec, key)
			}
		}
		vs = append(vs, speedVariant{spec, &k})
	}
	return vs
}

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	hugepage.AdviseFloats(x)
	for i := range x {
		x[i] = r.Float32() - 0.5
	}
	return x
}

// speedCase is one measurement of TestKernelSpeed: run does flops(v) floating-point
// operations with kernel v on threads goroutines.
type speedCase struct {
	name    string
	threads int
	flops   func(v speedVariant) float64
	run     func(v speedVariant)
}

// TestKernelSpeed (run with GML_GEMM_SPEED=1; GML_GEMM_SPEED_ROUNDS, default 6) times
// the avx512 kernel variants interleaved round by round: the kernel alone on operands in
// L1 (k = 128, one call repeated), the macro-kernel over one mc×kc A block and a kc×nc B
// block packed as the driver packs them (C 4096 wide, as in the mlp4096 step), on one
// goroutine, and whole products through the driver with GML_THREADS workers. It prints
// GFLOP/s, the core clock from a dependent add chain, and 512-bit FMAs per cycle (two
// is the peak of a core with two FMA units).
func TestKernelSpeed(t *testing.T) {
	if os.Getenv("GML_GEMM_SPEED") == "" {
		t.Skip("GML_GEMM_SPEED not set")
	}
	vs := speedVariants(t)
	rounds, _ := strconv.Atoi(os.Getenv("GML_GEMM_SPEED_ROUNDS"))
	if rounds <= 0 {
		rounds = 6
	}
	r := rand.New(rand.NewPCG(1, 2))
	var cases []speedCase

	// The kernel alone, in L1.
	{
		const kb = 128
		a, b := randFloats(r, 14*kb), randFloats(r, 2*nr*kb)
		c := make([]float32, 14*32)
		const reps = 2000
		cases = append(cases, speedCase{"L1 k=128", 1, func(v speedVariant) float64 {
			return 2 * float64(v.kern.mr*32*kb*reps)
		}, func(v speedVariant) {
			for range reps {
				v.kern.full(kb, a, 1, v.kern.mr, b, nr, nr*kb, c, 32, 1, true)
			}
		}})
	}
	// The macro-kernel over one block, on one goroutine.
	{
		const mb, kb, nb, ldc = 384, 256, 3072, 4096
		a, b := randFloats(r, mb*kb), randFloats(r, nb*kb)
		c := make([]float32, mb*ldc)
		hugepage.AdviseFloats(c)
		cases = append(cases, speedCase{"macro 384x3072x256", 1, func(v speedVariant) float64 {
			return 2 * 2 * float64(mb/v.kern.mr*v.kern.mr*nb*kb)
		}, func(v speedVariant) {
			var ws workspace
			m := mb / v.kern.mr * v.kern.mr
			ab := aBlock{data: a, strip: v.kern.mr * kb, rs: 1, cs: v.kern.mr}
			bb := bBlock{data: b, panel: nr * kb, rs: nr, inPlace: nb}
			for range 2 {
				macroKernel(v.kern, ab, bb, &ws.tile, m, nb, kb, c, ldc, 1, true, nil, nil)
			}
		}})
	}
	// Whole products.
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
		cases = append(cases, speedCase{sh.name, parallel.Workers(), func(speedVariant) float64 { return flops }, func(v speedVariant) {
			sgemm(v.kern, true, sh.m, sh.n, sh.k, 1, matrix{a, ac, sh.transA}, matrix{b, bc, sh.transB}, 0, c, sh.n, nil, nil)
		}})
	}
	only := os.Getenv("GML_GEMM_SPEED_CASES")
	fmt.Printf("clock %.2f GHz (add chain); ", clockGHz())
	fmt.Printf("%d workers, %d rounds, variants interleaved (ABC-CBA); GFLOP/s, FMA/cycle at the clock measured around each\n", parallel.Workers(), rounds)
	for _, sc := range cases {
		if only != "" && !strings.Contains(only, strings.Fields(sc.name)[0]) {
			continue
		}
		for _, v := range vs { // warm up
			sc.run(v)
		}
		g := make([][]float64, len(vs))
		fpc := make([][]float64, len(vs))
		for round := range rounds {
			for o := range vs {
				i := o
				if round%2 == 1 {
					i = len(vs) - 1 - o
				}
				ghz := clockGHz()
				start := time.Now()
				sc.run(vs[i])
				sec := time.Since(start).Seconds()
				ghz = (ghz + clockGHz()) / 2
				gf := sc.flops(vs[i]) / sec / 1e9
				g[i] = append(g[i], gf)
				fpc[i] = append(fpc[i], gf/32/ghz/float64(sc.threads))
			}
		}
		var line strings.Builder
		fmt.Fprintf(&line, "%-20s", sc.name)
		for i, v := range vs {
			ratios := make([]float64, rounds)
			for j := range ratios {
				ratios[j] = g[i][j] / g[0][j]
			}
			s, f := slices.Clone(g[i]), slices.Clone(fpc[i])
			slices.Sort(s)
			slices.Sort(f)
			slices.Sort(ratios)
			fmt.Fprintf(&line, " | %s %.0f [%.0f-%.0f] %.2f/c x%.3f [%.2f-%.2f]", v.name, s[len(s)/2], s[0], s[len(s)-1],
				f[len(f)/2], ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1])
		}
		fmt.Println(line.String())
	}
}

// TestKernelVariantsSameBits (temporary): every variant gives main's bits.
func TestKernelVariantsSameBits(t *testing.T) {
	vs := speedVariants(t)
	r := rand.New(rand.NewPCG(7, 8))
	for _, m := range []int{1, 7, 13, 14, 15, 28, 33, 257} {
		for _, n := range []int{1, 16, 17, 33, 64, 257} {
			for _, k := range []int{1, 7, 33, 257, 300} {
				for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					a, b := randFloats(r, m*k), randFloats(r, k*n)
					c00 := randFloats(r, m*n)
					lda, ldb := k, n
					if tr[0] {
						lda = m
					}
					if tr[1] {
						ldb = k
					}
					for _, mode := range [][2]bool{{true, true}, {false, true}, {true, false}, {false, false}} {
						for _, ab := range [][2]float32{{1, 0}, {0.5, 1}} {
							var c0 []float32
							for _, v := range vs {
								c := slices.Clone(c00)
								p := newPlan(v.kern, m, n, k, ab[0], matrix{a, lda, tr[0]}, matrix{b, ldb, tr[1]})
								p.packA = mode[0]
								p.packB = mode[1] || tr[1]
								p.serial(m, n, k, ab[1], c, n)
								if c0 == nil {
									c0 = c
									continue
								}
								if !slices.Equal(c, c0) {
									t.Errorf("%s m=%d n=%d k=%d tr=%v mode=%v ab=%v: bits differ", v.name, m, n, k, tr, mode, ab)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestKernelPair (GML_GEMM_SPEED=1, Linux) runs main's avx512 kernel on goroutines
// pinned to CPUs 0 and 1 (their threads' affinity), alone on each and on both at once,
// without the driver: the kernel alone in L1 (k = 128) and the macro-kernel over one
// block (A in L1, B streamed from L2). If the two CPUs share a core (SMT siblings: one L1,
// one L2, two FMA units), each runs at about half its speed alone when both run.
func TestKernelPair(t *testing.T) {
	if os.Getenv("GML_GEMM_SPEED") == "" {
		t.Skip("GML_GEMM_SPEED not set")
	}
	kern := asmKernel(shapeAVX512)
	if kern == nil {
		t.Skip("no avx512 assembly on this CPU")
	}
	rounds, _ := strconv.Atoi(os.Getenv("GML_GEMM_SPEED_ROUNDS"))
	if rounds <= 0 {
		rounds = 3
	}
	type work struct {
		name  string
		flops float64
		run   func()
	}
	r := rand.New(rand.NewPCG(1, 2))
	newWork := func() []work {
		const kb = 128
		a, b := randFloats(r, 12*kb), randFloats(r, 2*nr*kb)
		c := make([]float32, 12*32)
		const reps = 40000
		const mb, kc, nb, ldc = 384, 256, 3072, 4096
		ma, mbuf := randFloats(r, mb*kc), randFloats(r, nb*kc)
		mc := make([]float32, mb*ldc)
		ab := aBlock{data: ma, strip: 12 * kc, rs: 1, cs: 12}
		bb := bBlock{data: mbuf, panel: nr * kc, rs: nr, inPlace: nb}
		var ws workspace
		return []work{
			{"L1 k=128", 2 * 12 * 32 * kb * reps, func() {
				for range reps {
					kern.full(kb, a, 1, 12, b, nr, nr*kb, c, 32, 1, true)
				}
			}},
			{"macro 384x3072x256", 4 * 2 * mb * nb * kc, func() {
				for range 4 {
					macroKernel(kern, ab, bb, &ws.tile, mb, nb, kc, mc, ldc, 1, true, nil, nil)
				}
			}},
		}
	}
	works := [2][]work{newWork(), newWork()}
	// run runs case ci on the given CPUs at once and returns GFLOP/s and FMAs a cycle
	// (at the clock measured alone on that CPU) per CPU.
	run := func(ci int, cpus []int) (gf, fpc [2]float64) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, cpu := range cpus {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var set unix.CPUSet
				set.Set(cpu)
				if err := unix.SchedSetaffinity(0, &set); err != nil {
					t.Error(err)
					return
				}
				ghz := clockGHz()
				w := works[cpu][ci]
				w.run() // warm
				<-start
				t0 := time.Now()
				w.run()
				gf[cpu] = w.flops / time.Since(t0).Seconds() / 1e9
				fpc[cpu] = gf[cpu] / 32 / ghz
			}()
		}
		time.Sleep(20 * time.Millisecond)
		close(start)
		wg.Wait()
		return gf, fpc
	}
	fmt.Printf("pinned pair, %d rounds (cpu0 alone, cpu1 alone, both; reversed on odd rounds): GFLOP/s and FMA/cycle per CPU\n", rounds)
	for ci := range works[0] {
		phases := [][]int{{0}, {1}, {0, 1}}
		for round := range rounds {
			var line strings.Builder
			fmt.Fprintf(&line, "%-20s r%d", works[0][ci].name, round)
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
			fmt.Fprintf(&line, " | alone:%s |%s | both:%s", res[0], res[1], res[2])
			fmt.Println(line.String())
		}
	}
}
