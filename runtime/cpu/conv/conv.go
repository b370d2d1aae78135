package conv

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
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

// source returns image n of x as columns reads it: on the wide grid's paths, padded into
// s when the convolution pads; else where it lies. Called once per image, so that its
// groups share one padded copy.
func (g geometry) source(wd window, s *shiftScratch, x []float32, n int) []float32 {
	img := x[n*g.inLen:][:g.inLen]
	if g.shifted() && !g.direct {
		return s.padded(g, wd, img)
	}
	return img
}

// columns returns group grp of an image's column matrix as a GEMM B operand (transposed
// when transposed is set), src being the image as source returns it. A unit-stride
// convolution reads the padded image (shiftField, or the column matrix written out into
// s), any other the image itself.
func (g geometry) columns(wd window, s *shiftScratch, src []float32, grp int, transposed bool) gemm.BPacker {
	switch {
	case g.direct:
		return gemm.Dense(src[grp*g.cg*g.p.InH*g.p.InW:], g.ldPlane, transposed)
	case g.shifted() && transposed:
		// Written out, so that GEMM packs its transpose with vector transposes: a
		// gather into the transposed strips (shiftField's packTaps) costs more.
		return gemm.Dense(s.columns(g, wd, src[grp*g.cg*wd.plane:]), g.ldPlane, true)
	case g.shifted():
		return shiftField{x: src[grp*g.cg*wd.plane:], plane: wd.plane, wp: wd.wp, ow: g.p.OutW(), offs: wd.offs}
	}
	return fieldPanel{p: g.p, x: src[grp*g.cg*g.p.InH*g.p.InW:], ow: g.p.OutW(), transposed: transposed}
}

// forEach calls body once for every item i in [0, count). With at least two items and
// two workers the items are shared out between workers (numbered from 0 in worker) from
// a counter, so an item goes to whichever worker is free, which keeps every core busy
// when another process slows one; body must then keep its GEMMs on its own goroutine
// (parallelGEMM false). Otherwise the items run in turn and their GEMMs may split.
// workersFor(count) says how many workers there will be, for sizing per-worker buffers.
func forEach(count int, body func(worker, i int, parallelGEMM bool)) {
	workers := workersFor(count)
	if workers == 1 {
		for i := range count {
			body(0, i, true)
		}
		return
	}
	var next atomic.Int64
	parallel.Run(workers, func(worker int) {
		for i := int(next.Add(1)) - 1; i < count; i = int(next.Add(1)) - 1 {
			body(worker, i, false)
		}
	})
}

// workersFor is the number of workers forEach uses for count items.
func workersFor(count int) int { return max(1, min(parallel.Workers(), count)) }

// Conv is a convolution of fixed Params together with the scratch memory its kernels
// reuse from call to call (padded images, wide-grid planes, column buffers, the weight
// gradient's partial sums). The memory is allocated at the first call that needs it and
// kept, so a Conv built once per graph node allocates no scratch per training step,
// unless the layer is larger than keepLimit. A Conv runs one call at a time: concurrent
// calls wait for each other.
type Conv struct {
	p  Params
	g  geometry
	wd window // the wide grid, for unit strides (shifted)

	// Per-worker buffers of Forward and BackwardData, apart because the wide-grid kernels
	// rely on what their own buffers keep from call to call (zero borders and junk
	// columns), which the other writes over.
	mu        sync.Mutex
	fwd, data []shiftScratch
	cols      [][]float32 // per worker: BackwardData's column buffers
	wt        []float32   // BackwardData's tap-major weights
	filter    filterScratch
}

// keepLimit bounds, in floats, the layers whose scratch a Conv keeps between calls: the
// scratch of a layer whose input or output is larger (64 MiB) is dropped after each call,
// as before Conv kept any, so a large model does not hold another copy of its biggest
// activations for as long as its program lives.
var keepLimit = 16 << 20 // a variable so tests can drop the scratch of small layers

// begin starts one call on c; the returned end finishes it, first dropping the scratch
// of a layer too large to keep it (keepLimit).
func (c *Conv) begin() (end func()) {
	c.mu.Lock()
	return func() {
		if max(c.p.InputLen(), c.p.OutputLen()) > keepLimit {
			c.fwd, c.data, c.cols, c.wt, c.filter = nil, nil, nil, nil, filterScratch{}
		}
		c.mu.Unlock()
	}
}

// New returns the convolution p describes, or an error naming the field of p that makes
// it unusable.
func New(p Params) (*Conv, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.normalized()
	c := &Conv{p: p, g: newGeometry(p)}
	if c.g.shifted() {
		c.wd = newWindow(p)
	}
	return c, nil
}

// perWorker returns the first n of *bufs, growing it to n.
func perWorker[T any](bufs *[]T, n int) []T {
	if len(*bufs) < n {
		*bufs = append(*bufs, make([]T, n-len(*bufs))...)
	}
	return (*bufs)[:n]
}

// grow returns buf resized to n elements, reallocated (zeroed) only when too short.
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// Forward computes the convolution y = x ⋆ w (+ bias) described by p with a Conv of its
// own; see Conv.Forward.
func Forward(p Params, x, w, bias, y []float32) error {
	c, err := New(p)
	if err != nil {
		return fmt.Errorf("conv.Forward: %w", err)
	}
	return c.Forward(x, w, bias, y)
}

// BackwardData computes the input gradient of the convolution described by p with a
// Conv of its own; see Conv.BackwardData.
func BackwardData(p Params, dy, w, dx []float32) error {
	c, err := New(p)
	if err != nil {
		return fmt.Errorf("conv.BackwardData: %w", err)
	}
	return c.BackwardData(dy, w, dx)
}

// BackwardFilter computes the weight gradient of the convolution described by p with a
// Conv of its own; see Conv.BackwardFilter.
func BackwardFilter(p Params, x, dy, dw []float32) error {
	c, err := New(p)
	if err != nil {
		return fmt.Errorf("conv.BackwardFilter: %w", err)
	}
	return c.BackwardFilter(x, dy, dw)
}

// Forward computes the convolution y = x ⋆ w (+ bias). bias, when not nil, holds one
// value per output channel. y is overwritten. Each group of each image is one GEMM: W_g,
// (OutChannels/Groups)×(InChannels/Groups·KH·KW), times the image's column matrix, which
// the GEMM packs straight from x.
func (c *Conv) Forward(x, w, bias, y []float32) error { return c.ForwardThen(x, w, bias, y, nil) }

// ForwardThen is Forward that calls then(n), when not nil, as soon as image n of y is
// complete, on the goroutine that computed it, while the image is still in cache: a
// caller fuses the next layer's work on each image this way (the CPU backend pools
// each image of a convolution's output there). Calls for different images may run at
// the same time.
func (c *Conv) ForwardThen(x, w, bias, y []float32, then func(n int)) error {
	p, g := c.p, c.g
	if err := checkLens("Forward", p, operand{"x", len(x), p.InputLen()},
		operand{"w", len(w), p.WeightLen()}, operand{"y", len(y), p.OutputLen()}); err != nil {
		return err
	}
	if bias != nil && len(bias) != p.OutChannels {
		return fmt.Errorf("conv.Forward: bias has %d elements, want %d (one per output channel)",
			len(bias), p.OutChannels)
	}
	if len(y) == 0 {
		return nil
	}
	defer c.begin()()
	impl := gemm.Default()
	shifted := g.shifted() && g.wideForward(c.wd)
	scratch := perWorker(&c.fwd, workersFor(p.Batch))
	var failed firstError
	forEach(p.Batch, func(worker, n int, parallelGEMM bool) {
		var err error
		switch {
		case g.directDepthwise():
			depthwiseForward(g, x[n*g.inLen:][:g.inLen], w, y[n*g.outLen:][:g.outLen])
		case shifted:
			err = g.forwardShifted(impl, parallelGEMM, c.wd, &scratch[worker], n, x, w, y)
		default:
			err = g.forwardGEMM(impl, parallelGEMM, c.wd, &scratch[worker], n, x, w, y)
		}
		if err != nil {
			failed.set(fmt.Errorf("conv.Forward: %w", err))
			return
		}
		if bias != nil {
			addBias(y[n*g.outLen:][:g.outLen], bias, g.plane)
		}
		if then != nil {
			then(n)
		}
	})
	return failed.err
}

// forwardGEMM computes image n of y, one GEMM per group, with s the worker's scratch.
func (g geometry) forwardGEMM(impl gemm.Impl, parallelGEMM bool, wd window, s *shiftScratch,
	n int, x, w, y []float32) error {
	src := g.source(wd, s, x, n)
	for grp := 0; grp < g.p.Groups; grp++ {
		if err := impl.SgemmPacked(parallelGEMM, false, g.kg, g.plane, g.crs, 1,
			w[grp*g.kg*g.crs:], g.lda, g.columns(wd, s, src, grp, false),
			0, y[n*g.outLen+grp*g.kg*g.plane:], g.ldPlane); err != nil {
			return err
		}
	}
	return nil
}

// BackwardData computes the gradient of the loss with respect to the input, dx, from
// the gradient dy with respect to the output. dx is overwritten. Per group and image:
// dcol = W_gᵀ·dy_g, then col2im adds dcol into dx.
func (c *Conv) BackwardData(dy, w, dx []float32) error {
	p, g := c.p, c.g
	if err := checkLens("BackwardData", p, operand{"dy", len(dy), p.OutputLen()},
		operand{"w", len(w), p.WeightLen()}, operand{"dx", len(dx), p.InputLen()}); err != nil {
		return err
	}
	if g.plane == 0 || g.kg == 0 || g.cg == 0 {
		clear(dx)
		return nil
	}
	defer c.begin()()
	impl := gemm.Default()
	workers := workersFor(p.Batch)
	perTap := g.shifted() && g.perTap()
	scratch, cols := perWorker(&c.data, workers), perWorker(&c.cols, workers)
	if perTap {
		c.wt = grow(c.wt, len(w))
		g.tapMajor(c.wt, w)
	}
	var failed firstError
	forEach(p.Batch, func(worker, n int, parallelGEMM bool) {
		img := dx[n*g.inLen:][:g.inLen]
		if g.directDepthwise() {
			clear(img)
			depthwiseData(g, dy[n*g.outLen:][:g.outLen], w, img)
			return
		}
		if perTap {
			if err := g.dataPerTap(impl, parallelGEMM, c.wd, &scratch[worker], n, dy, c.wt, dx); err != nil {
				failed.set(fmt.Errorf("conv.BackwardData: %w", err))
			}
			return
		}
		dst, ld := img, g.ldPlane
		if !g.direct {
			cols[worker] = grow(cols[worker], p.Groups*g.crs*g.plane)
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

// addBias adds bias[c] to every element of channel c of one image y (len(bias)×plane),
// with package vec's vector loop (Go's bits).
func addBias(y, bias []float32, plane int) {
	for c := range bias {
		row := y[c*plane:][:plane]
		vec.Arith(vec.Add, row, row, 1, bias[c:], 0)
	}
}
