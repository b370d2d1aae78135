package conv

import (
	"fmt"

	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
)

// The weight gradient sums over the batch, so it cannot be split by images the way the
// forward pass is without a reduction. The batch is cut into a number of blocks that
// depends on the sizes alone (filterBlocks), never on the thread count; each block sums
// its images into a partial gradient of its own, and the partials are added in block
// order. The gradient is therefore the same bits whatever GML_THREADS says and however
// the blocks are shared out, and sixteen threads have sixteen blocks to work on. On the
// per-tap path a block's taps may also be cut into items of their own (itemTaps), which
// keeps every worker busy where sixteen blocks would give each worker one.
//
// On the per-tap path (unit strides, at least gemm.MicroRows() input channels per
// group) a padded input is first laid out channel by channel with the padded images one
// after another (filterScratch.xs) and the output gradient transposed onto the wide
// grid image after image (filterScratch.dyT), in parallel over the images; then every
// (block, group) is an item of its own, one GEMM per image of the block for all taps at
// once: dWᵀ (taps·cg×kg, tap-major) += X·dyᵀ, X the image's input shifted by each tap's
// offset, its taps·cg rows copied into a per-worker buffer (a row per tap and channel,
// each a contiguous run of the input). One GEMM of taps·cg rows took 15% less CPU than
// one per tap of cg rows (which read X_t in place) on the 2-core AVX2 machine. The GEMMs
// stay one image deep: an image's operands fit in the second-level cache, and one GEMM
// over a whole block's images (tried, per tap) ran 20% slower on the H200 host's Xeon.

const (
	// maxFilterBlocks bounds the blocks of images: enough for sixteen workers.
	maxFilterBlocks = 16
	// smallFilter is the largest weight gradient (in floats) whose partial sums cost
	// next to nothing to add up: such filters take up to twice maxFilterBlocks blocks,
	// two or more per worker at sixteen threads. cnn28's first layer (288 weights) has
	// 32 blocks of two images instead of 16 of four, each worker's lateness shared out.
	smallFilter = 4096
	// minBlockK is the least number of (wide) positions worth a block of its own.
	minBlockK = 256
	// maxPartialFloats bounds the memory of the partial gradients.
	maxPartialFloats = 4 << 20
)

// filterScratch is BackwardFilter's memory, kept from call to call.
type filterScratch struct {
	xs       []float32      // per-tap: each input channel's padded images in a row
	dyT      []float32      // per-tap: dy transposed onto the wide grid, image after image
	partials []float32      // one weight gradient per block
	pads     []shiftScratch // per worker: a padded image, or the stacked taps (cols)
}

// filterBlocks returns the number of blocks of images the weight gradient is summed in:
// at most maxFilterBlocks (twice that for a small filter) and the batch, few enough that
// each block holds at least minBlockK positions (k per image) and the partial sums stay
// within maxPartialFloats.
func (g geometry) filterBlocks(k int) int {
	b, most := g.p.Batch, maxFilterBlocks
	if g.p.WeightLen() <= smallFilter {
		most *= 2
	}
	return max(1, min(b, most, b*k/minBlockK, maxPartialFloats/max(g.p.WeightLen(), 1)))
}

// BackwardFilter computes the gradient of the loss with respect to the weights, dw, from
// the input x and the output gradient dy. dw is overwritten. The batch is summed in
// blocks whose partial gradients are added in order (see filterBlocks), so the result
// does not depend on the number of threads.
func (c *Conv) BackwardFilter(x, dy, dw []float32) error {
	p, g := c.p, c.g
	if err := checkLens("BackwardFilter", p, operand{"x", len(x), p.InputLen()},
		operand{"dy", len(dy), p.OutputLen()}, operand{"dw", len(dw), p.WeightLen()}); err != nil {
		return err
	}
	if g.plane == 0 || g.crs == 0 || p.Batch == 0 {
		clear(dw)
		return nil
	}
	defer c.begin()()
	perTap := g.shifted() && g.perTap()
	var err error
	if perTap {
		err = c.filterPerTap(x, dy, dw)
	} else {
		err = c.filterImages(x, dy, dw)
	}
	if err != nil {
		return fmt.Errorf("conv.BackwardFilter: %w", err)
	}
	return nil
}

// partials returns blocks partial gradients, the first being first (nil: scratch too).
func (c *Conv) partials(blocks int, first []float32) [][]float32 {
	n := c.p.WeightLen()
	rest := 0
	if first != nil {
		rest = n
	}
	c.filter.partials = grow(c.filter.partials, blocks*n-rest)
	parts := make([][]float32, blocks)
	for b := range parts {
		if b == 0 && first != nil {
			parts[b] = first
			continue
		}
		parts[b] = c.filter.partials[b*n-rest:][:n]
	}
	return parts
}

// blockImages returns the images [n0, n1) of block b of blocks.
func (g geometry) blockImages(b, blocks int) (n0, n1 int) {
	return b * g.p.Batch / blocks, (b + 1) * g.p.Batch / blocks
}

// filterImages is BackwardFilter image by image (depthwise loops, or the implicit GEMM
// on the column matrix): each block adds its images' gradients into its partial, the
// first block straight into dw.
func (c *Conv) filterImages(x, dy, dw []float32) error {
	g := c.g
	impl := gemm.Default()
	blocks := g.filterBlocks(g.plane)
	parts := c.partials(blocks, dw)
	pads := perWorker(&c.filter.pads, workersFor(blocks))
	var failed firstError
	forEach(blocks, func(worker, b int, parallelGEMM bool) {
		sum := parts[b]
		clear(sum)
		n0, n1 := g.blockImages(b, blocks)
		for n := n0; n < n1; n++ {
			if g.directDepthwise() {
				depthwiseFilter(g, x[n*g.inLen:][:g.inLen], dy[n*g.outLen:][:g.outLen], sum)
				continue
			}
			if err := g.filterGEMM(impl, parallelGEMM, c.wd, &pads[worker], n, x, dy, sum); err != nil {
				failed.set(err)
				return
			}
		}
	})
	addPartials(dw, parts[1:])
	return failed.err
}

// filterGEMM adds the weight gradient of image n to dw, one GEMM per group, with s the
// worker's scratch.
func (g geometry) filterGEMM(impl gemm.Impl, parallelGEMM bool, wd window, s *shiftScratch,
	n int, x, dy, dw []float32) error {
	src := g.source(wd, s, x, n)
	for grp := 0; grp < g.p.Groups; grp++ {
		if err := impl.SgemmPacked(parallelGEMM, false, g.kg, g.crs, g.plane, 1,
			dy[n*g.outLen+grp*g.kg*g.plane:], g.ldPlane, g.columns(wd, s, src, grp, true),
			1, dw[grp*g.kg*g.crs:], g.lda); err != nil {
			return err
		}
	}
	return nil
}

// filterPerTap is BackwardFilter on the wide grid, per block and group: for every tap
// t, dWᵀ_t (cg×kg) = X_t·dyᵀ summed over the block's images in order, in tap-major order
// (see tapMajor), then added up in block order and rearranged into dw.
func (c *Conv) filterPerTap(x, dy, dw []float32) error {
	p, g, wd := c.p, c.g, c.wd
	f := &c.filter
	// Without padding each image is read where it lies; with it, each channel's padded
	// images are laid out in a row. dyT holds each image's wide rows (wd.n of them).
	xs, ld, image := x, wd.plane, g.inLen // the input, its leading dimension and image stride
	if wd.padded {
		row := p.Batch * wd.plane
		f.xs = grow(f.xs, p.InChannels*row)
		xs, ld, image = f.xs, row, wd.plane
	}
	wideLen := wd.n * p.OutChannels
	f.dyT = grow(f.dyT, p.Batch*wideLen)
	// The layouts, image by image. Borders and junk rows are never written, so they stay
	// zero from the allocation on.
	parallel.For(p.Batch, 1, func(lo, hi int) {
		for n := lo; n < hi; n++ {
			if wd.padded {
				wd.pad(p, f.xs[n*wd.plane:], x[n*g.inLen:][:g.inLen], ld)
			}
			wd.transposeWide(p, f.dyT[n*wideLen:][:wideLen], dy[n*g.outLen:][:g.outLen])
		}
	})
	impl := gemm.Default()
	taps := len(wd.offs)
	blocks := g.filterBlocks(wd.plane)
	parts := c.partials(blocks, nil)
	per := itemTaps(g.stackedTaps(wd), taps, blocks*p.Groups)
	spans := (taps + per - 1) / per // runs of per taps, the last maybe shorter
	items := blocks * p.Groups * spans
	pads := perWorker(&f.pads, workersFor(items))
	var failed firstError
	forEach(items, func(worker, i int, parallelGEMM bool) {
		b, grp, t0 := i/(p.Groups*spans), i/spans%p.Groups, i%spans*per
		t1 := min(t0+per, taps)
		n0, n1 := g.blockImages(b, blocks)
		cols := grow(pads[worker].cols, per*g.cg*wd.n)
		pads[worker].cols = cols
		var beta float32 // the first image overwrites the partial, the others add
		for n := n0; n < n1; n++ {
			bm := gemm.Dense(f.dyT[n*wideLen+grp*g.kg:], p.OutChannels, false)
			for t := t0; t < t1; t++ {
				for c := range g.cg {
					copy(cols[((t-t0)*g.cg+c)*wd.n:][:wd.n], xs[n*image+(grp*g.cg+c)*ld+wd.offs[t]:])
				}
			}
			if err := impl.SgemmPacked(parallelGEMM, false, (t1-t0)*g.cg, g.kg, wd.n, 1, cols, wd.n,
				bm, beta, parts[b][(grp*taps+t0)*g.cg*g.kg:], g.kg); err != nil {
				failed.set(err)
				return
			}
			beta = 1
		}
	})
	if failed.err != nil {
		return failed.err
	}
	addPartials(parts[0], parts[1:])
	g.fromTapMajor(dw, parts[0])
	return nil
}

// itemsPerWorker is the least number of items per worker itemTaps aims at; a variable
// so that benchmarks can compare with 0 (the taps never cut for the workers' sake).
var itemsPerWorker = 3

// itemTaps returns how many taps one item of the per-tap weight gradient stacks: per (as
// many as fit, stackedTaps), or fewer when units items (blocks times groups) would give
// the workers fewer than three items each. With one item per worker, as cnn28's second
// layer has at sixteen threads (sixteen blocks), the step waits for the last worker to
// start and for the slowest; cutting the taps into even runs gives every worker three
// to take from the counter. A tap's rows are rows of their own in the GEMM, whose sums
// run over the wide positions alone, so the cut changes no bits.
func itemTaps(per, taps, units int) int {
	want := itemsPerWorker * parallel.Workers()
	if units*((taps+per-1)/per) >= want {
		return per
	}
	spans := min(taps, (want+units-1)/units)
	return (taps + spans - 1) / spans
}

// addPartials adds the partial sums parts, in order, into dst, splitting the elements
// between workers: each element is summed in the same order as serially, so the result
// does not depend on the split, and with many threads the sum is not left to one.
// vec.Arith adds eight or sixteen lanes at a time, with Go's results bit for bit.
func addPartials(dst []float32, parts [][]float32) {
	parallel.For(len(dst), 1<<13, func(lo, hi int) {
		d := dst[lo:hi]
		for _, s := range parts {
			vec.Arith(vec.Add, d, d, 1, s[lo:hi], 1)
		}
	})
}
