package conv

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
)

// naive computes the convolution and both gradients in float64 with direct loops: y from
// x and w, dx and dw from dy.
func naive(p Params, x, w, dy []float32) (y, dx, dw []float64) {
	p = p.normalized()
	oh, ow := p.OutH(), p.OutW()
	cg, kg := p.InChannels/p.Groups, p.OutChannels/p.Groups
	y = make([]float64, p.OutputLen())
	dx = make([]float64, p.InputLen())
	dw = make([]float64, p.WeightLen())
	for n := 0; n < p.Batch; n++ {
		for k := 0; k < p.OutChannels; k++ {
			g := k / kg
			for o := 0; o < oh; o++ {
				for q := 0; q < ow; q++ {
					yi := ((n*p.OutChannels+k)*oh+o)*ow + q
					for c := 0; c < cg; c++ {
						for r := 0; r < p.KernelH; r++ {
							for s := 0; s < p.KernelW; s++ {
								ih := o*p.StrideH - p.PadTop + r*p.DilationH
								iw := q*p.StrideW - p.PadLeft + s*p.DilationW
								if ih < 0 || ih >= p.InH || iw < 0 || iw >= p.InW {
									continue
								}
								xi := ((n*p.InChannels+g*cg+c)*p.InH+ih)*p.InW + iw
								wi := ((k*cg+c)*p.KernelH+r)*p.KernelW + s
								y[yi] += float64(x[xi]) * float64(w[wi])
								dx[xi] += float64(w[wi]) * float64(dy[yi])
								dw[wi] += float64(x[xi]) * float64(dy[yi])
							}
						}
					}
				}
			}
		}
	}
	return y, dx, dw
}

func random(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.Float64()*2 - 1)
	}
	return s
}

func compare(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !(math.Abs(float64(got[i])-want[i]) <= tol*(1+math.Abs(want[i]))) {
			t.Fatalf("%s: element %d = %g, want %g", what, i, got[i], want[i])
		}
	}
}

func convCases() []Params {
	return []Params{
		{Batch: 2, InChannels: 3, InH: 8, InW: 8, OutChannels: 4, KernelH: 3, KernelW: 3,
			PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		{Batch: 1, InChannels: 2, InH: 9, InW: 7, OutChannels: 5, KernelH: 3, KernelW: 2,
			StrideH: 2, StrideW: 3, PadTop: 0, PadBottom: 2, PadLeft: 1, PadRight: 0},
		{Batch: 2, InChannels: 3, InH: 11, InW: 10, OutChannels: 2, KernelH: 3, KernelW: 3,
			DilationH: 2, DilationW: 3, PadTop: 2, PadBottom: 2, PadLeft: 3, PadRight: 1},
		{Batch: 2, InChannels: 4, InH: 6, InW: 5, OutChannels: 6, KernelH: 3, KernelW: 3,
			Groups: 2, PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		// Depthwise with a channel multiplier of 2.
		{Batch: 3, InChannels: 5, InH: 7, InW: 7, OutChannels: 10, KernelH: 3, KernelW: 3,
			Groups: 5, StrideH: 2, StrideW: 2, PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		// Depthwise, unit stride, dilated, one image; and one input channel with enough
		// output channels for the GEMM path.
		{Batch: 1, InChannels: 3, InH: 9, InW: 8, OutChannels: 3, KernelH: 3, KernelW: 3, Groups: 3,
			DilationH: 2, PadTop: 2, PadBottom: 1, PadLeft: 1, PadRight: 1},
		{Batch: 2, InChannels: 1, InH: 10, InW: 10, OutChannels: 8, KernelH: 5, KernelW: 5,
			PadTop: 2, PadBottom: 2, PadLeft: 2, PadRight: 2},
		// 1×1 direct, and 1×1 with a stride (not direct).
		{Batch: 2, InChannels: 7, InH: 5, InW: 3, OutChannels: 3, KernelH: 1, KernelW: 1},
		{Batch: 2, InChannels: 7, InH: 5, InW: 3, OutChannels: 3, KernelH: 1, KernelW: 1, StrideH: 2, StrideW: 2},
		// 1-D: height 1.
		{Batch: 2, InChannels: 3, InH: 1, InW: 17, OutChannels: 4, KernelH: 1, KernelW: 5,
			StrideW: 2, DilationW: 2, PadLeft: 3, PadRight: 2},
		// Odd sizes large enough for the parallel GEMM path.
		{Batch: 3, InChannels: 17, InH: 13, InW: 15, OutChannels: 33, KernelH: 3, KernelW: 5,
			PadTop: 1, PadBottom: 1, PadLeft: 2, PadRight: 2},
		// Several chunks of images.
		{Batch: 9, InChannels: 16, InH: 64, InW: 64, OutChannels: 2, KernelH: 3, KernelW: 3,
			PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		// Unit strides run on the wide grid (shifted.go), per tap when a group has at
		// least gemm.MicroRows() input channels: ragged channel counts and sizes on both
		// sides of that bound, with and without padding, dilated, grouped.
		{Batch: 3, InChannels: 33, InH: 13, InW: 13, OutChannels: 7, KernelH: 3, KernelW: 3},
		{Batch: 2, InChannels: 7, InH: 7, InW: 9, OutChannels: 33, KernelH: 3, KernelW: 3,
			PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		{Batch: 2, InChannels: 1, InH: 3, InW: 257, OutChannels: 7, KernelH: 3, KernelW: 3,
			PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		{Batch: 1, InChannels: 257, InH: 5, InW: 4, OutChannels: 7, KernelH: 3, KernelW: 3,
			PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		{Batch: 2, InChannels: 26, InH: 9, InW: 11, OutChannels: 14, KernelH: 3, KernelW: 2,
			Groups: 2, DilationH: 2, PadTop: 2, PadBottom: 0, PadLeft: 1, PadRight: 3},
		{Batch: 3, InChannels: 12, InH: 8, InW: 6, OutChannels: 5, KernelH: 5, KernelW: 5,
			PadTop: 2, PadBottom: 2, PadLeft: 2, PadRight: 2},
		{Batch: 2, InChannels: 6, InH: 5, InW: 3, OutChannels: 3, KernelH: 1, KernelW: 3},
		{Batch: 2, InChannels: 1, InH: 9, InW: 8, OutChannels: 33, KernelH: 3, KernelW: 3},
		{Batch: 2, InChannels: 7, InH: 5, InW: 5, OutChannels: 3, KernelH: 1, KernelW: 1,
			PadTop: 1, PadBottom: 0, PadLeft: 0, PadRight: 1},
		{Batch: 1, InChannels: 1, InH: 1, InW: 1, OutChannels: 1, KernelH: 1, KernelW: 1,
			PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		// Blocks of three and four images in the weight gradient's per-tap path.
		{Batch: 33, InChannels: 13, InH: 7, InW: 7, OutChannels: 7, KernelH: 3, KernelW: 3,
			PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		// Empty batch and zero input channels.
		{Batch: 0, InChannels: 2, InH: 4, InW: 4, OutChannels: 2, KernelH: 3, KernelW: 3},
		{Batch: 2, InChannels: 0, InH: 4, InW: 4, OutChannels: 2, KernelH: 3, KernelW: 3},
	}
}

func TestConvMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range convCases() {
		name := fmt.Sprintf("%+v", p)
		x, w := random(r, p.InputLen()), random(r, p.WeightLen())
		dy := random(r, p.OutputLen())
		bias := random(r, p.OutChannels)
		wantY, wantDX, wantDW := naive(p, x, w, dy)
		for i := range wantY {
			wantY[i] += float64(bias[i/max(p.OutH()*p.OutW(), 1)%p.OutChannels])
		}
		y := random(r, p.OutputLen()) // garbage that must be overwritten
		if err := Forward(p, x, w, bias, y); err != nil {
			t.Fatalf("%s: Forward: %v", name, err)
		}
		compare(t, name+" y", y, wantY, 1e-4)
		dx := random(r, p.InputLen())
		if err := BackwardData(p, dy, w, dx); err != nil {
			t.Fatalf("%s: BackwardData: %v", name, err)
		}
		compare(t, name+" dx", dx, wantDX, 1e-4)
		dw := random(r, p.WeightLen())
		if err := BackwardFilter(p, x, dy, dw); err != nil {
			t.Fatalf("%s: BackwardFilter: %v", name, err)
		}
		compare(t, name+" dw", dw, wantDW, 1e-4)
		db := make([]float32, p.OutChannels)
		if err := BiasGrad(p, dy, db); err != nil {
			t.Fatalf("%s: BiasGrad: %v", name, err)
		}
		wantDB := make([]float64, p.OutChannels)
		for i, v := range dy {
			wantDB[i/(p.OutH()*p.OutW())%p.OutChannels] += float64(v)
		}
		compare(t, name+" db", db, wantDB, 1e-4)
	}
}

// naiveTransposed scatters every input value through the kernel, as a transposed
// convolution is defined.
func naiveTransposed(t Transposed, x, w []float32) []float64 {
	p := t.Conv()
	oh, ow := p.InH, p.InW
	cin, coutG := t.InChannels, t.OutChannels/p.Groups
	cinG := cin / p.Groups
	y := make([]float64, t.Batch*t.OutChannels*oh*ow)
	for n := 0; n < t.Batch; n++ {
		for ci := 0; ci < cin; ci++ {
			g := ci / cinG
			for h := 0; h < t.InH; h++ {
				for v := 0; v < t.InW; v++ {
					xv := float64(x[((n*cin+ci)*t.InH+h)*t.InW+v])
					for co := 0; co < coutG; co++ {
						for r := 0; r < t.KernelH; r++ {
							for s := 0; s < t.KernelW; s++ {
								yh := h*p.StrideH - t.PadTop + r*p.DilationH
								yw := v*p.StrideW - t.PadLeft + s*p.DilationW
								if yh < 0 || yh >= oh || yw < 0 || yw >= ow {
									continue
								}
								wv := float64(w[((ci*coutG+co)*t.KernelH+r)*t.KernelW+s])
								y[((n*t.OutChannels+g*coutG+co)*oh+yh)*ow+yw] += xv * wv
							}
						}
					}
				}
			}
		}
	}
	return y
}

func TestTransposedMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		t            Transposed
		wantH, wantW int // the output size by the formula of PyTorch's ConvTranspose2d
	}{
		{Transposed{Batch: 2, InChannels: 3, InH: 4, InW: 5, OutChannels: 2, KernelH: 3, KernelW: 3,
			StrideH: 2, StrideW: 2, PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1,
			OutputPadH: 1, OutputPadW: 1}, 8, 10},
		{Transposed{Batch: 1, InChannels: 4, InH: 3, InW: 3, OutChannels: 6, KernelH: 2, KernelW: 3,
			StrideH: 3, StrideW: 1, DilationH: 2, DilationW: 2, Groups: 2}, 9, 7},
		{Transposed{Batch: 2, InChannels: 2, InH: 1, InW: 9, OutChannels: 3, KernelH: 1, KernelW: 4,
			StrideW: 2, PadLeft: 1, PadRight: 2}, 1, 17},
	} {
		name := fmt.Sprintf("%+v", tc.t)
		if err := tc.t.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tc.t.OutH() != tc.wantH || tc.t.OutW() != tc.wantW {
			t.Fatalf("%s: output %d×%d, want %d×%d", name, tc.t.OutH(), tc.t.OutW(), tc.wantH, tc.wantW)
		}
		p := tc.t.Conv()
		x := random(r, tc.t.Batch*tc.t.InChannels*tc.t.InH*tc.t.InW)
		w := random(r, p.WeightLen())
		bias := random(r, tc.t.OutChannels)
		want := naiveTransposed(tc.t, x, w)
		plane := tc.wantH * tc.wantW
		for i := range want {
			want[i] += float64(bias[i/plane%tc.t.OutChannels])
		}
		y := random(r, len(want))
		if err := TransposedForward(tc.t, x, w, bias, y); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		compare(t, name, y, want, 1e-4)
	}
}

func TestConvErrors(t *testing.T) {
	good := Params{Batch: 1, InChannels: 4, InH: 5, InW: 5, OutChannels: 2, KernelH: 3, KernelW: 3}
	for _, tc := range []struct {
		name   string
		mutate func(*Params)
		x, w   int // length adjustments
		want   string
	}{
		{"groups", func(p *Params) { p.Groups = 3 }, 0, 0, "divisible by 3 groups"},
		{"kernel", func(p *Params) { p.KernelH = 7 }, 0, 0, "larger than the padded input"},
		{"stride", func(p *Params) { p.StrideW = -1 }, 0, 0, "must be positive"},
		{"padding", func(p *Params) { p.PadLeft = -1 }, 0, 0, "negative padding"},
		{"short x", func(*Params) {}, -1, 0, "x has 99 elements, want 100"},
		{"long w", func(*Params) {}, 0, 1, "w has 73 elements, want 72"},
	} {
		p := good
		tc.mutate(&p)
		x := make([]float32, max(p.InputLen()+tc.x, 0))
		w := make([]float32, max(p.WeightLen()+tc.w, 0))
		y := make([]float32, max(p.OutputLen(), 0))
		err := Forward(p, x, w, nil, y)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	bad := Transposed{Batch: 1, InChannels: 1, InH: 3, InW: 3, OutChannels: 1, KernelH: 3, KernelW: 3,
		StrideH: 2, StrideW: 2, OutputPadH: 2}
	if err := TransposedForward(bad, make([]float32, 9), make([]float32, 9), nil, nil); err == nil ||
		!strings.Contains(err.Error(), "output padding") {
		t.Errorf("output padding 2 with stride 2: error %v, want an output padding error", err)
	}
}

// TestBackwardFilterReproducible checks that the weight gradient is bit-identical from
// run to run (fixed blocks of images, partial sums added in block order), on
// the per-tap path and the general one, with more images than workers.
func TestBackwardFilterReproducible(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, p := range []Params{
		{Batch: 9, InChannels: 33, InH: 9, InW: 9, OutChannels: 7, KernelH: 3, KernelW: 3},
		{Batch: 9, InChannels: 3, InH: 9, InW: 9, OutChannels: 7, KernelH: 3, KernelW: 3, StrideH: 2, StrideW: 2},
	} {
		x, dy := random(r, p.InputLen()), random(r, p.OutputLen())
		first := make([]float32, p.WeightLen())
		if err := BackwardFilter(p, x, dy, first); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			again := make([]float32, p.WeightLen())
			if err := BackwardFilter(p, x, dy, again); err != nil {
				t.Fatal(err)
			}
			for i := range first {
				if math.Float32bits(first[i]) != math.Float32bits(again[i]) {
					t.Fatalf("%+v: element %d is %g, then %g", p, i, first[i], again[i])
				}
			}
		}
	}
}

// TestStackedTaps reruns TestConvMatchesNaive with the gradients' GEMMs stacking one
// tap at a time instead of all, as they do on large layers (maxStacked).
func TestStackedTaps(t *testing.T) {
	defer func(m int) { maxStacked = m }(maxStacked)
	maxStacked = 1
	TestConvMatchesNaive(t)
}

// TestConvReuse runs one Conv several times on new data, its three passes interleaved,
// on the wide-grid paths (which keep zero borders and junk columns in their scratch
// from call to call), the general path and the 1×1 direct one; once with the scratch
// kept and once with it dropped after every call, as for layers above keepLimit.
func TestConvReuse(t *testing.T) {
	defer func(l int) { keepLimit = l }(keepLimit)
	for _, limit := range []int{keepLimit, 0} {
		keepLimit = limit
		t.Run(fmt.Sprintf("keepLimit=%d", limit), testConvReuse)
	}
}

func testConvReuse(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, p := range []Params{
		{Batch: 5, InChannels: 13, InH: 6, InW: 7, OutChannels: 9, KernelH: 3, KernelW: 3,
			PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 2},
		{Batch: 3, InChannels: 2, InH: 9, InW: 8, OutChannels: 5, KernelH: 3, KernelW: 3},
		{Batch: 3, InChannels: 3, InH: 9, InW: 8, OutChannels: 5, KernelH: 3, KernelW: 2, StrideH: 2, PadLeft: 1},
		{Batch: 2, InChannels: 7, InH: 5, InW: 3, OutChannels: 3, KernelH: 1, KernelW: 1},
	} {
		c, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		for round := range 3 {
			name := fmt.Sprintf("%+v round %d", p, round)
			x, w, dy := random(r, p.InputLen()), random(r, p.WeightLen()), random(r, p.OutputLen())
			wantY, wantDX, wantDW := naive(p, x, w, dy)
			y, dx, dw := random(r, len(wantY)), random(r, len(wantDX)), random(r, len(wantDW))
			if err := c.Forward(x, w, nil, y); err != nil {
				t.Fatal(err)
			}
			if err := c.BackwardData(dy, w, dx); err != nil {
				t.Fatal(err)
			}
			if err := c.BackwardFilter(x, dy, dw); err != nil {
				t.Fatal(err)
			}
			compare(t, name+" y", y, wantY, 1e-4)
			compare(t, name+" dx", dx, wantDX, 1e-4)
			compare(t, name+" dw", dw, wantDW, 1e-4)
			if kept := c.fwd != nil || c.data != nil || c.cols != nil || c.wt != nil; kept != (keepLimit > 0) {
				t.Errorf("%s: scratch kept after the calls %v, want %v (keepLimit %d)", name, kept, keepLimit > 0, keepLimit)
			}
		}
	}
}

// TestBackwardFilterThreads checks that the weight gradient has the same bits whatever
// the number of threads: the batch is summed in blocks that depend on the sizes alone.
// The thread count follows GOMAXPROCS unless GML_THREADS fixes it.
func TestBackwardFilterThreads(t *testing.T) {
	if os.Getenv("GML_THREADS") != "" {
		t.Skip("GML_THREADS fixes the thread count")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(11, 12))
	for _, p := range []Params{
		{Batch: 33, InChannels: 13, InH: 9, InW: 9, OutChannels: 7, KernelH: 3, KernelW: 3},
		{Batch: 20, InChannels: 1, InH: 12, InW: 12, OutChannels: 16, KernelH: 3, KernelW: 3},
		{Batch: 40, InChannels: 1, InH: 16, InW: 17, OutChannels: 5, KernelH: 3, KernelW: 3}, // 32 blocks
		{Batch: 9, InChannels: 3, InH: 9, InW: 9, OutChannels: 7, KernelH: 3, KernelW: 3, StrideH: 2, StrideW: 2},
		// The per-tap path with few blocks: more threads cut the taps into more items
		// (itemTaps), padded and not.
		{Batch: 21, InChannels: 32, InH: 9, InW: 10, OutChannels: 20, KernelH: 3, KernelW: 3,
			PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		{Batch: 7, InChannels: 33, InH: 5, InW: 7, OutChannels: 9, KernelH: 3, KernelW: 2},
	} {
		x, dy := random(r, p.InputLen()), random(r, p.OutputLen())
		_, _, want := naive(p, x, make([]float32, p.WeightLen()), dy)
		var first []float32
		for _, threads := range []int{1, 2, 3, 8, 16} {
			runtime.GOMAXPROCS(threads)
			dw := make([]float32, p.WeightLen())
			if err := BackwardFilter(p, x, dy, dw); err != nil {
				t.Fatal(err)
			}
			if first == nil {
				compare(t, fmt.Sprintf("%+v dw", p), dw, want, 1e-4)
				first = dw
				continue
			}
			for i := range first {
				if math.Float32bits(first[i]) != math.Float32bits(dw[i]) {
					t.Fatalf("%+v: element %d is %g with 1 thread, %g with %d", p, i, first[i], dw[i], threads)
				}
			}
		}
	}
}

// TestConvConcurrent calls one Conv from several goroutines at once, each with its own
// data: the calls share the Conv's scratch, so they must take turns.
func TestConvConcurrent(t *testing.T) {
	p := Params{Batch: 4, InChannels: 13, InH: 6, InW: 7, OutChannels: 9, KernelH: 3, KernelW: 3,
		PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1}
	c, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(13, 14))
	type job struct{ x, w, dy, y, dx, dw []float32 }
	jobs := make([]job, 4)
	for i := range jobs {
		jobs[i] = job{x: random(r, p.InputLen()), w: random(r, p.WeightLen()), dy: random(r, p.OutputLen()),
			y: make([]float32, p.OutputLen()), dx: make([]float32, p.InputLen()), dw: make([]float32, p.WeightLen())}
	}
	errs := make(chan error, len(jobs))
	for i := range jobs {
		go func(j job) {
			for range 5 {
				if err := errors.Join(c.Forward(j.x, j.w, nil, j.y), c.BackwardData(j.dy, j.w, j.dx),
					c.BackwardFilter(j.x, j.dy, j.dw)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(jobs[i])
	}
	for range jobs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, j := range jobs {
		y, dx, dw := naive(p, j.x, j.w, j.dy)
		compare(t, fmt.Sprintf("job %d y", i), j.y, y, 1e-4)
		compare(t, fmt.Sprintf("job %d dx", i), j.dx, dx, 1e-4)
		compare(t, fmt.Sprintf("job %d dw", i), j.dw, dw, 1e-4)
	}
}
