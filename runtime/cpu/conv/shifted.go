package conv

import (
	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
)

// Unit-stride convolutions (every stride 1: the 3×3 "same" and "valid" layers of most
// CNNs) run on a wide output grid, which turns im2col into plain shifted reads of the
// input. Lay the output out with the padded input's row length wp instead of OutW: wide
// position j = o*wp + q. Kernel tap (r, s) then reads input element j + r*DilationH*wp +
// s*DilationW of the padded channel for every j, so a row of the column matrix is a
// contiguous run of the input, shifted by the tap's offset. The columns with q >= OutW
// are junk (they wrap into the next row) and cost wp/OutW - 1 more multiply-adds; in
// exchange:
//   - Forward packs GEMM's B panels with contiguous 16-float copies (shiftPanel) instead
//     of clipped, strided gathers, then copies the wide result into y (wideForward says
//     when that pays).
//   - With at least gemm.MicroRows() input channels per group (perTap), the gradients run
//     on plain matrices: the weight gradient of tap t is X_t·dyᵀ, X_t the input shifted
//     by the tap's offset (rows of filter.go's layout, each channel's padded images in a
//     row, copied for several taps at once into stacked rows, so that one GEMM per group
//     serves them all) and dyᵀ the output gradient transposed onto the wide grid; the
//     input gradient at the shifted positions of tap t is likewise a matrix, to which
//     Wᵀ_t·dy_wide adds (the junk columns of dy_wide are zero and add nothing): one GEMM
//     per group computes that product for every tap at once, and its rows are added in
//     at their offsets, so there is no col2im.
// A padded convolution first copies each image into a zero-bordered buffer (and the
// input gradient back out of one), a pass over the input, which is a KernelH·KernelW-th
// of what im2col writes.

// window is the wide-grid geometry of a unit-stride convolution.
type window struct {
	hp, wp, plane int   // padded input height, width and plane size
	n             int   // wide positions: (OutH-1)*wp + OutW
	offs          []int // per tap r*KernelW+s: the offset r*DilationH*wp + s*DilationW
	padded        bool
}

// shifted reports whether the convolution runs on the wide grid: unit strides, and not
// one of the cases with a dedicated path (depthwise loops, the 1×1 direct GEMM).
func (g geometry) shifted() bool {
	return g.p.StrideH == 1 && g.p.StrideW == 1 && !g.direct && !g.directDepthwise()
}

// wideForward reports whether Forward runs on the wide grid: when that grid is the
// output plane itself, or when there are enough taps per output (crs) that packing them
// as contiguous copies saves more than copying the wide result into y costs (a pass over
// the output). The general path's packing gathers crs×plane elements per image, the
// narrowing copies kg×plane; on the cnn28 layers the 1-channel first layer (9 taps, 32
// outputs) ran 2× faster on the general path and the 32-channel second one (288 taps, 64
// outputs) 1.5× faster on the wide grid.
func (g geometry) wideForward(wd window) bool { return wd.n == g.plane || 3*g.crs >= g.kg }

func newWindow(p Params) window {
	w := window{hp: p.InH + p.PadTop + p.PadBottom, wp: p.InW + p.PadLeft + p.PadRight}
	w.plane = w.hp * w.wp
	w.n = (p.OutH()-1)*w.wp + p.OutW()
	w.padded = p.PadTop+p.PadBottom+p.PadLeft+p.PadRight > 0
	w.offs = make([]int, p.KernelH*p.KernelW)
	for r := range p.KernelH {
		for s := range p.KernelW {
			w.offs[r*p.KernelW+s] = r*p.DilationH*w.wp + s*p.DilationW
		}
	}
	return w
}

// pad copies the channels of one image x into the interiors of the padded planes of
// dst, one every stride elements, whose borders stay as they are (zero).
func (w window) pad(p Params, dst, x []float32, stride int) {
	for c := range p.InChannels {
		for ih := range p.InH {
			copy(dst[c*stride+(ih+p.PadTop)*w.wp+p.PadLeft:][:p.InW], x[(c*p.InH+ih)*p.InW:][:p.InW])
		}
	}
}

// crop copies the interiors of the padded planes of src into one image x.
func (w window) crop(p Params, x, src []float32) {
	for c := range p.InChannels {
		for ih := range p.InH {
			copy(x[(c*p.InH+ih)*p.InW:][:p.InW], src[c*w.plane+(ih+p.PadTop)*w.wp+p.PadLeft:][:p.InW])
		}
	}
}

// widen copies channels rows×OutW planes of y into the wide layout (rows of wp, row
// length OutW used) of dst; the junk columns of dst stay as they are (zero).
func (w window) widen(p Params, dst, y []float32, channels int) {
	oh, ow := p.OutH(), p.OutW()
	for k := range channels {
		for o := range oh {
			copy(dst[k*w.n+o*w.wp:][:ow], y[(k*oh+o)*ow:][:ow])
		}
	}
}

// narrow copies the valid columns of channels wide planes of src into y.
func (w window) narrow(p Params, y, src []float32, channels int) {
	oh, ow := p.OutH(), p.OutW()
	for k := range channels {
		for o := range oh {
			copy(y[(k*oh+o)*ow:][:ow], src[k*w.n+o*w.wp:][:ow])
		}
	}
}

// shiftPanel is the wide column matrix of one group of one (padded) image as a GEMM B
// operand: row c*taps + t, column j is x[c*plane + offs[t] + j].
type shiftPanel struct {
	x     []float32 // the group's padded channels
	plane int
	offs  []int
}

// PackB packs rows [p0, p0+kb) and columns [j0, j0+nb) as gemm.BPacker describes.
func (f shiftPanel) PackB(dst []float32, p0, kb, j0, nb int) {
	const w = gemm.PackWidth
	taps := len(f.offs)
	// Row by row, so that the input streams through the cache in order.
	full := nb / w * w
	c, t := p0/taps, p0%taps
	for pp := range kb {
		src := f.x[c*f.plane+f.offs[t]+j0:][:nb]
		for s := 0; s < full; s += w {
			// Through a local copy, which the compiler moves in registers.
			v := *(*[w]float32)(src[s:])
			*(*[w]float32)(dst[s*kb+pp*w:]) = v
		}
		if full < nb {
			dp := dst[full*kb+pp*w:][:w]
			copy(dp, src[full:])
			clear(dp[nb-full:])
		}
		if t++; t == taps {
			t, c = 0, c+1
		}
	}
}

// shiftField is the column matrix of one group of one padded image on the output grid
// itself, the B operand of the forward GEMM where the wide grid does not pay
// (wideForward): row c*taps + t, column j = o*OutW + q is x[c*plane + offs[t] + o*wp +
// q]. As with fieldPanel no wide result needs narrowing, and as with shiftPanel the
// padding is in the image, so the packing is plain copies without clipping: a strip's
// positions fall in a few output rows, each a contiguous run of every tap's row.
type shiftField struct {
	x             []float32 // the group's padded channels
	plane, wp, ow int
	offs          []int
}

// PackB packs rows [p0, p0+kb) and columns [j0, j0+nb) as gemm.BPacker describes.
func (f shiftField) PackB(dst []float32, p0, kb, j0, nb int) {
	const w = gemm.PackWidth
	taps := len(f.offs)
	var runs [w]run
	for s0 := 0; s0 < nb; s0 += w {
		cols := min(w, nb-s0)
		count := stripRuns(&runs, j0+s0, cols, f.ow)
		at0 := runs[0].o*f.wp + runs[0].q // where a single run reads from
		d := dst[s0*kb:][:kb*w]
		c, t := p0/taps, p0%taps
		for pp := range kb {
			src := f.x[c*f.plane+f.offs[t]:]
			row := d[pp*w:][:w]
			if count == 1 && cols == w {
				// Through a local copy, which the compiler moves in registers.
				v := *(*[w]float32)(src[at0:])
				*(*[w]float32)(row) = v
			} else {
				for _, r := range runs[:count] {
					copy(row[r.t0:r.t0+r.n], src[r.o*f.wp+r.q:])
				}
				clear(row[cols:])
			}
			if t++; t == taps {
				t, c = 0, c+1
			}
		}
	}
}

// shiftScratch is one worker's buffers for the wide-grid kernels, allocated on first use.
type shiftScratch struct {
	x    []float32 // one padded image (Forward, BackwardFilter) or its gradient (BackwardData)
	wide []float32 // one image of y or dy on the wide grid
	cols []float32 // one group's column matrix (BackwardFilter) or its gradient (BackwardData)
}

// columns writes the column matrix of one group of a padded image xg into s.cols and
// returns it (crs×plane, row c*taps + t holding tap t of channel c at every output
// position): rows of the output are contiguous runs of the padded input, so it is
// OutH copies per row.
func (s *shiftScratch) columns(g geometry, wd window, xg []float32) []float32 {
	oh, ow := g.p.OutH(), g.p.OutW()
	s.cols = grow(s.cols, g.crs*g.plane)
	taps := len(wd.offs)
	for i := range g.crs {
		src := xg[i/taps*wd.plane+wd.offs[i%taps]:]
		row := s.cols[i*g.plane:][:g.plane]
		for o := range oh {
			copy(row[o*ow:][:ow], src[o*wd.wp:])
		}
	}
	return s.cols
}

// padded returns image img, copied into s.x with zero borders when the convolution pads.
func (s *shiftScratch) padded(g geometry, wd window, img []float32) []float32 {
	if !wd.padded {
		return img
	}
	s.x = grow(s.x, g.p.InChannels*wd.plane)
	wd.pad(g.p, s.x, img, wd.plane)
	return s.x
}

// wideBuf returns a buffer for OutChannels wide planes (junk columns zero), or nil when
// the wide grid is the output plane itself.
func (s *shiftScratch) wideBuf(g geometry, wd window) []float32 {
	if wd.n == g.plane {
		return nil
	}
	s.wide = grow(s.wide, g.p.OutChannels*wd.n)
	return s.wide
}

// forwardShifted computes image n of y, one GEMM per group.
func (g geometry) forwardShifted(impl gemm.Impl, parallelGEMM bool, wd window, s *shiftScratch,
	n int, x, w, y []float32) error {
	p := g.p
	src := s.padded(g, wd, x[n*g.inLen:][:g.inLen])
	out := y[n*g.outLen:][:g.outLen]
	wide := s.wideBuf(g, wd)
	dst := out
	if wide != nil {
		dst = wide
	}
	for grp := range p.Groups {
		panel := shiftPanel{x: src[grp*g.cg*wd.plane:], plane: wd.plane, offs: wd.offs}
		if err := impl.SgemmPacked(parallelGEMM, false, g.kg, wd.n, g.crs, 1, w[grp*g.kg*g.crs:], g.lda,
			panel, 0, dst[grp*g.kg*wd.n:], wd.n); err != nil {
			return err
		}
	}
	if wide != nil {
		wd.narrow(p, out, wide, p.OutChannels)
	}
	return nil
}

// maxStacked bounds, in floats, the rows of stacked taps the gradients' GEMMs read or
// write (dataPerTap, filterPerTap): 1 MiB, all nine taps of cnn28's second layer. A
// variable so that tests can stack fewer taps.
var maxStacked = 1 << 18

// stackedTaps is the number of taps whose rows one GEMM of the gradients stacks.
func (g geometry) stackedTaps(wd window) int {
	return max(1, min(len(wd.offs), maxStacked/max(g.cg*wd.n, 1)))
}

// perTap reports whether the data and weight gradients of a shifted convolution run on
// plain matrices whose rows are (per tap) the input channels of a group: only with
// enough channels to fill the micro-kernel's rows.
func (g geometry) perTap() bool { return g.cg >= gemm.MicroRows() }

// transposeWide writes the OutChannels planes of one image's y into dst transposed onto
// the wide grid: dst[(o*wp + q)*OutChannels + k] = y[k][o][q]. Junk rows stay as they
// are (zero).
func (w window) transposeWide(p Params, dst, y []float32) {
	oh, ow, ch := p.OutH(), p.OutW(), p.OutChannels
	plane := oh * ow
	full, k0 := ch/8*8, 0
	if transpose8Vec && ow >= 8 {
		// 8 channels by 8 positions at a time in assembly, an output row at a time: the
		// element-by-element loops below took a fifth of cnn28's second weight gradient.
		for ; k0 < full; k0 += 8 {
			for o := range oh {
				transpose8(dst[o*w.wp*ch+k0:], ch, y[k0*plane+o*ow:], plane, ow)
			}
		}
	}
	// Blocks of 8 channels: the reads walk 8 rows of y in step and each write fills 8
	// consecutive floats; full blocks through fixed-size arrays, free of bounds checks.
	for ; k0 < full; k0 += 8 {
		var rows [8][]float32
		for k := range rows {
			rows[k] = y[(k0+k)*plane:][:plane]
		}
		for o := range oh {
			for q := range ow {
				i := o*ow + q
				d := (*[8]float32)(dst[(o*w.wp+q)*ch+k0:])
				d[0], d[1], d[2], d[3] = rows[0][i], rows[1][i], rows[2][i], rows[3][i]
				d[4], d[5], d[6], d[7] = rows[4][i], rows[5][i], rows[6][i], rows[7][i]
			}
		}
	}
	for k := full; k < ch; k++ {
		for o := range oh {
			for q := range ow {
				dst[(o*w.wp+q)*ch+k] = y[k*plane+o*ow+q]
			}
		}
	}
}

// fromTapMajor writes the tap-major weights wt (see tapMajor) into w in its own order,
// split between workers by output channel.
func (g geometry) fromTapMajor(w, wt []float32) {
	taps := g.p.KernelH * g.p.KernelW
	parallel.For(g.p.OutChannels, max(1, 1<<13/max(g.cg*taps, 1)), func(lo, hi int) {
		for kk := lo; kk < hi; kk++ { // kk = grp*kg + k
			grp, k := kk/g.kg, kk%g.kg
			for c := range g.cg {
				dst := w[(kk*g.cg+c)*taps:][:taps]
				for t := range dst {
					dst[t] = wt[((grp*taps+t)*g.cg+c)*g.kg+k]
				}
			}
		}
	})
}

// tapMajor writes the weights w rearranged for dataPerTap into wt: for group grp and tap
// t, the cg×kg matrix Wᵀ_tap at (grp*taps + t)*cg*kg, entry (c, k) = w[grp*kg + k][c][t].
func (g geometry) tapMajor(wt, w []float32) {
	taps := g.p.KernelH * g.p.KernelW
	for grp := range g.p.Groups {
		for k := range g.kg {
			for c := range g.cg {
				src := w[((grp*g.kg+k)*g.cg+c)*taps:][:taps]
				for t, v := range src {
					wt[((grp*taps+t)*g.cg+c)*g.kg+k] = v
				}
			}
		}
	}
}

// dataPerTap computes image n of dx (overwritten) from the tap-major weights wt: per
// group one GEMM, whose rows (tap, channel) are each added into the channel's padded
// gradient at the tap's offset (s.cols holds them).
func (g geometry) dataPerTap(impl gemm.Impl, parallelGEMM bool, wd window, s *shiftScratch,
	n int, dy, wt, dx []float32) error {
	p := g.p
	taps := len(wd.offs)
	grad := dy[n*g.outLen:][:g.outLen]
	if wide := s.wideBuf(g, wd); wide != nil {
		wd.widen(p, wide, grad, p.OutChannels)
		grad = wide
	}
	img := dx[n*g.inLen:][:g.inLen]
	dst := img
	if wd.padded {
		s.x = grow(s.x, p.InChannels*wd.plane)
		dst = s.x
	}
	clear(dst)
	per := g.stackedTaps(wd)
	s.cols = grow(s.cols, per*g.cg*wd.n)
	for grp := range p.Groups {
		b := gemm.Dense(grad[grp*g.kg*wd.n:], wd.n, false)
		for t0 := 0; t0 < taps; t0 += per {
			t1 := min(t0+per, taps)
			if err := impl.SgemmPacked(parallelGEMM, false, (t1-t0)*g.cg, wd.n, g.kg, 1,
				wt[(grp*taps+t0)*g.cg*g.kg:], g.kg, b, 0, s.cols, wd.n); err != nil {
				return err
			}
			for t := t0; t < t1; t++ {
				for c := range g.cg {
					d := dst[(grp*g.cg+c)*wd.plane+wd.offs[t]:][:wd.n]
					vec.Arith(vec.Add, d, d, 1, s.cols[((t-t0)*g.cg+c)*wd.n:][:wd.n], 1)
				}
			}
		}
	}
	if wd.padded {
		wd.crop(p, img, dst)
	}
	return nil
}
