package conv

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

// geometry holds the sizes derived from validated, normalized Params.
type geometry struct {
	p            Params
	plane        int // OutH*OutW
	kg           int // output channels per group
	cg           int // input channels per group
	crs          int // taps of one group: InChannels/Groups*KernelH*KernelW
	inLen        int // one input image: InChannels*InH*InW
	outLen       int // one output image: OutChannels*plane
	direct       bool
	lda, ldPlane int // leading dimensions, at least 1 so empty operands stay valid
}

func newGeometry(p Params) geometry {
	g := geometry{p: p, plane: p.OutH() * p.OutW()}
	g.kg = p.OutChannels / p.Groups
	g.cg = p.InChannels / p.Groups
	g.crs = g.cg * p.KernelH * p.KernelW
	g.inLen = p.InChannels * p.InH * p.InW
	g.outLen = p.OutChannels * g.plane
	// A 1×1 kernel with unit stride and no padding reads each input pixel once, in
	// order: the image is its own column matrix.
	g.direct = p.KernelH == 1 && p.KernelW == 1 && p.StrideH == 1 && p.StrideW == 1 &&
		p.PadTop+p.PadBottom+p.PadLeft+p.PadRight == 0
	g.lda, g.ldPlane = max(g.crs, 1), max(g.plane, 1)
	return g
}

// columns returns group grp of image x's column matrix as a GEMM B operand (transposed
// when transposed is set).
func (g geometry) columns(x []float32, grp int, transposed bool) gemm.BPacker {
	xg := x[grp*g.cg*g.p.InH*g.p.InW:]
	if g.direct {
		return gemm.Dense(xg, g.ldPlane, transposed)
	}
	return fieldPanel{p: g.p, x: xg, ow: g.p.OutW(), transposed: transposed}
}

// forImages calls body once for every image n in [0, batch). With at least two images
// and two workers the images are shared out between workers (numbered from 0 in worker)
// and body must keep its GEMMs on its own goroutine (parallelGEMM false); otherwise
// images run in turn and their GEMMs may split. Shared out dynamically, an image goes to
// whichever worker is free, which keeps every core busy when another process slows one;
// with fixed, worker w takes the w-th contiguous block of images in order, so what a
// worker accumulates over its images (BackwardFilter's partial sums) is the same in
// every run with the same number of workers. workersFor(batch) says how many workers
// there will be, for sizing per-worker buffers.
func forImages(batch int, fixed bool, body func(worker, n int, parallelGEMM bool)) {
	workers := workersFor(batch)
	if workers == 1 {
		for n := range batch {
			body(0, n, true)
		}
		return
	}
	if fixed {
		parallel.Run(workers, func(worker int) {
			for n := worker * batch / workers; n < (worker+1)*batch/workers; n++ {
				body(worker, n, false)
			}
		})
		return
	}
	var next atomic.Int64
	parallel.For(workers, 1, func(lo, hi int) {
		for worker := lo; worker < hi; worker++ {
			for n := int(next.Add(1)) - 1; n < batch; n = int(next.Add(1)) - 1 {
				body(worker, n, false)
			}
		}
	})
}

// workersFor is the number of workers forImages uses for batch images.
func workersFor(batch int) int { return max(1, min(parallel.Workers(), batch)) }

// Forward computes the convolution y = x ⋆ w (+ bias) described by p. bias, when not
// nil, holds one value per output channel. y is overwritten. Each group of each image is
// one GEMM: W_g, (OutChannels/Groups)×(InChannels/Groups·KH·KW), times the image's
// column matrix, which the GEMM packs straight from x.
func Forward(p Params, x, w, bias, y []float32) error {
	p = p.normalized()
	if err := checkLens("Forward", p, operand{"x", len(x), p.InputLen()},
		operand{"w", len(w), p.WeightLen()}, operand{"y", len(y), p.OutputLen()}); err != nil {
		return err
	}
	if bias != nil && len(bias) != p.OutChannels {
		return fmt.Errorf("conv.Forward: bias has %d elements, want %d (one per output channel)",
			len(bias), p.OutChannels)
	}
	g := newGeometry(p)
	if len(y) == 0 {
		return nil
	}
	impl := gemm.Default()
	var wd window
	shifted := g.shifted()
	if shifted {
		wd = newWindow(p)
		shifted = g.wideForward(wd)
	}
	scratch := make([]shiftScratch, workersFor(p.Batch))
	var failed firstError
	forImages(p.Batch, false, func(worker, n int, parallelGEMM bool) {
		var err error
		switch {
		case g.directDepthwise():
			depthwiseForward(g, x[n*g.inLen:][:g.inLen], w, y[n*g.outLen:][:g.outLen])
		case shifted:
			err = g.forwardShifted(impl, parallelGEMM, wd, &scratch[worker], n, x, w, y)
		default:
			err = g.forwardGEMM(impl, parallelGEMM, n, x, w, y)
		}
		if err != nil {
			failed.set(fmt.Errorf("conv.Forward: %w", err))
			return
		}
		if bias != nil {
			addBias(y[n*g.outLen:][:g.outLen], bias, g.plane)
		}
	})
	return failed.err
}

// forwardGEMM computes image n of y, one GEMM per group.
func (g geometry) forwardGEMM(impl gemm.Impl, parallelGEMM bool, n int, x, w, y []float32) error {
	for grp := 0; grp < g.p.Groups; grp++ {
		if err := impl.SgemmPacked(parallelGEMM, false, g.kg, g.plane, g.crs, 1,
			w[grp*g.kg*g.crs:], g.lda, g.columns(x[n*g.inLen:], grp, false),
			0, y[n*g.outLen+grp*g.kg*g.plane:], g.ldPlane); err != nil {
			return err
		}
	}
	return nil
}

// BackwardData computes the gradient of the loss with respect to the input, dx, from
// the gradient dy with respect to the output of the convolution described by p. dx is
// overwritten. Per group and image: dcol = W_gᵀ·dy_g, then col2im adds dcol into dx.
func BackwardData(p Params, dy, w, dx []float32) error {
	p = p.normalized()
	if err := checkLens("BackwardData", p, operand{"dy", len(dy), p.OutputLen()},
		operand{"w", len(w), p.WeightLen()}, operand{"dx", len(dx), p.InputLen()}); err != nil {
		return err
	}
	g := newGeometry(p)
	if g.plane == 0 || g.kg == 0 || g.cg == 0 {
		clear(dx)
		return nil
	}
	impl := gemm.Default()
	cols := make([][]float32, workersFor(p.Batch))
	perTap := g.shifted() && g.perTap()
	var (
		wd      window
		wt      []float32
		scratch []shiftScratch
	)
	if perTap {
		wd, wt, scratch = newWindow(p), g.tapMajor(w), make([]shiftScratch, len(cols))
	}
	var failed firstError
	forImages(p.Batch, false, func(worker, n int, parallelGEMM bool) {
		img := dx[n*g.inLen:][:g.inLen]
		if g.directDepthwise() {
			clear(img)
			depthwiseData(g, dy[n*g.outLen:][:g.outLen], w, img)
			return
		}
		if perTap {
			if err := g.dataPerTap(impl, parallelGEMM, wd, &scratch[worker], n, dy, wt, dx); err != nil {
				failed.set(fmt.Errorf("conv.BackwardData: %w", err))
			}
			return
		}
		dst, ld := img, g.ldPlane
		if !g.direct {
			if cols[worker] == nil {
				cols[worker] = make([]float32, p.Groups*g.crs*g.plane)
			}
			dst = cols[worker]
		}
		for grp := 0; grp < p.Groups; grp++ {
			err := impl.SgemmPacked(parallelGEMM, true, g.crs, g.plane, g.kg, 1,
				w[grp*g.kg*g.crs:], g.lda,
				gemm.Dense(dy[n*g.outLen+grp*g.kg*g.plane:], g.ldPlane, false),
				0, dst[grp*g.crs*g.plane:], ld)
			if err != nil {
				failed.set(fmt.Errorf("conv.BackwardData: %w", err))
				return
			}
		}
		if !g.direct {
			clear(img)
			col2im(p, dst, img)
		}
	})
	return failed.err
}

// BackwardFilter computes the gradient of the loss with respect to the weights, dw, from
// the input x and the output gradient dy of the convolution described by p. dw is
// overwritten. Per group it sums dy_g·colᵀ over the images; each worker sums its block
// of images into its own buffer, and the buffers are added in worker order at the end,
// so the result depends on the number of workers but not on their timing.
func BackwardFilter(p Params, x, dy, dw []float32) error {
	p = p.normalized()
	if err := checkLens("BackwardFilter", p, operand{"x", len(x), p.InputLen()},
		operand{"dy", len(dy), p.OutputLen()}, operand{"dw", len(dw), p.WeightLen()}); err != nil {
		return err
	}
	g := newGeometry(p)
	clear(dw)
	if g.plane == 0 || g.crs == 0 {
		return nil
	}
	impl := gemm.Default()
	perTap := g.shifted() && g.perTap()
	var wd window
	if perTap {
		wd = newWindow(p)
	}
	// Per-worker partial sums; the per-tap kernels sum in tap-major order, the others in
	// dw's, the first worker straight into dw.
	sums := make([][]float32, workersFor(p.Batch))
	if !perTap {
		sums[0] = dw
	}
	scratch := make([]shiftScratch, len(sums))
	var failed firstError
	// Fixed blocks of images per worker, summed in worker order: the same sum in every
	// run, so training is bit-reproducible.
	forImages(p.Batch, true, func(worker, n int, parallelGEMM bool) {
		if sums[worker] == nil {
			sums[worker] = make([]float32, len(dw))
		}
		var err error
		switch {
		case g.directDepthwise():
			depthwiseFilter(g, x[n*g.inLen:][:g.inLen], dy[n*g.outLen:][:g.outLen], sums[worker])
		case perTap:
			err = g.filterPerTap(impl, parallelGEMM, wd, &scratch[worker], n, x, dy, sums[worker])
		default:
			err = g.filterGEMM(impl, parallelGEMM, n, x, dy, sums[worker])
		}
		if err != nil {
			failed.set(fmt.Errorf("conv.BackwardFilter: %w", err))
		}
	})
	if !perTap {
		addPartials(dw, sums[1:])
		return failed.err
	}
	if sums[0] != nil {
		addPartials(sums[0], sums[1:])
		g.fromTapMajor(dw, sums[0])
	}
	return failed.err
}

// addPartials adds the partial sums parts, in order, into dst, splitting the elements
// between workers: each element is summed in the same order as serially, so the result
// does not depend on the split, and with many threads the sum is not left to one.
func addPartials(dst []float32, parts [][]float32) {
	parallel.For(len(dst), 1<<14, func(lo, hi int) {
		d := dst[lo:hi]
		for _, s := range parts {
			if s == nil {
				continue
			}
			for i, v := range s[lo:hi] {
				d[i] += v
			}
		}
	})
}

// filterGEMM adds the weight gradient of image n to dw, one GEMM per group.
func (g geometry) filterGEMM(impl gemm.Impl, parallelGEMM bool, n int, x, dy, dw []float32) error {
	for grp := 0; grp < g.p.Groups; grp++ {
		if err := impl.SgemmPacked(parallelGEMM, false, g.kg, g.crs, g.plane, 1,
			dy[n*g.outLen+grp*g.kg*g.plane:], g.ldPlane, g.columns(x[n*g.inLen:], grp, true),
			1, dw[grp*g.kg*g.crs:], g.lda); err != nil {
			return err
		}
	}
	return nil
}

// BiasGrad computes the gradient of the loss with respect to the bias, db (one value per
// output channel, overwritten): the sum of dy over images and positions.
func BiasGrad(p Params, dy, db []float32) error {
	p = p.normalized()
	if err := checkLens("BiasGrad", p, operand{"dy", len(dy), p.OutputLen()},
		operand{"db", len(db), p.OutChannels}); err != nil {
		return err
	}
	plane := p.OutH() * p.OutW()
	parallel.For(p.OutChannels, 8, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			var sum float64
			for n := 0; n < p.Batch; n++ {
				for _, v := range dy[(n*p.OutChannels+k)*plane:][:plane] {
					sum += float64(v)
				}
			}
			db[k] = float32(sum)
		}
	})
	return nil
}

// TransposedForward computes the transposed convolution y = x ⋆ᵀ w (+ bias) described by
// t; bias, when not nil, holds one value per output channel. y is overwritten. It is
// BackwardData of t.Conv(); by the same identity, the gradients of a transposed
// convolution are Forward(t.Conv(), dy, w, nil, dx) for the input and
// BackwardFilter(t.Conv(), dy, x, dw) for the weights.
func TransposedForward(t Transposed, x, w, bias, y []float32) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("conv.TransposedForward: %w", err)
	}
	p := t.Conv()
	if bias != nil && len(bias) != p.InChannels {
		return fmt.Errorf("conv.TransposedForward: bias has %d elements, want %d (one per output channel)",
			len(bias), p.InChannels)
	}
	if err := BackwardData(p, x, w, y); err != nil {
		return fmt.Errorf("transposed: %w", err)
	}
	if bias != nil {
		plane := p.InH * p.InW
		parallel.For(p.Batch, 1, func(lo, hi int) {
			for n := lo; n < hi; n++ {
				addBias(y[n*p.InChannels*plane:][:p.InChannels*plane], bias, plane)
			}
		})
	}
	return nil
}

// firstError keeps the first error that concurrent workers report.
type firstError struct {
	once sync.Once
	err  error
}

func (f *firstError) set(err error) { f.once.Do(func() { f.err = err }) }

// addBias adds bias[c] to every element of channel c of one image y (len(bias)×plane).
func addBias(y, bias []float32, plane int) {
	for c, b := range bias {
		row := y[c*plane:][:plane]
		for j := range row {
			row[j] += b
		}
	}
}
