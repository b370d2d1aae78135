package cpu

import (
	"math"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
	"github.com/gml-dev/gml/runtime/cpu/vec"
	"github.com/gml-dev/gml/tensor"
)

// Pooling kernels. They are memory-bound, so the loops are shaped by memory order:
//   - The unit of work is an output row (plane, oy): its window rows are contiguous runs
//     of the input, and rows are split between threads in contiguous blocks sized by the
//     number of input elements they read (poolGrain), so a small pool stays on one core.
//   - The common 2×2 window of stride 2 without padding (halving) has its own loops,
//     free of per-window bookkeeping: the forward pass reads two input rows and writes
//     one output row; the max gradient writes every input element exactly once (the
//     gradient at the window's first largest element, zero at the three others) instead
//     of clearing the plane and scattering into it. Where package vec runs AVX-512, one
//     assembly call takes a run of rows (a plane, or every plane of the block when the
//     height is even), eight windows at a time with write masks for the row's end: rows
//     of 13 and 5 windows (cnn28's) cost a call and a Go tail each otherwise: the runs
//     made the fused ReLU + pool backward 4-8 times faster on cnn28's layers (one thread,
//     BenchmarkReluPoolGrad). With AVX2 the assembly takes eight (or, in rows of 4 to 7
//     windows, four) windows of one row at a time.
//   - Other windows combine their input rows column by column into a line, then take each
//     window's columns of that line: a k×k window costs about 2k operations, not k².

func init() {
	register(tensor.OpMaxPool, floatTypes, poolKernel)
	register(tensor.OpAvgPool, floatTypes, poolKernel)
	register(tensor.OpMaxPoolGrad, floatTypes, maxPoolGradKernel)
	register(tensor.OpAvgPoolGrad, floatTypes, avgPoolGradKernel)
}

// span is a half-open range [lo, hi) of input rows or columns.
type span struct{ lo, hi int }

// pooler is the geometry of a pooling node: planes (N*C) input planes of h×w pooled to
// oh×ow, with the input window of each output row and column clipped to the input
// (padding never enters a window). 1-D pooling is 2-D pooling of height 1.
type pooler struct {
	planes, h, w, oh, ow int
	rows, cols           []span
	full                 float32 // the divisor with CountIncludePad: the kernel area
	include              bool
	halving              bool // every window is the 2×2 block at (2·oy, 2·ox)
}

func newPooler(x, y tensor.Shape, at tensor.PoolAttr) pooler {
	in, out, k, s, pb := [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, [2]int{}
	off := 4 - x.Rank()
	for i := range x.Rank() - 2 {
		in[off+i], out[off+i], k[off+i], s[off+i], pb[off+i] = x[2+i], y[2+i], at.Kernel[i], at.Stride[i], at.PadBegin[i]
	}
	clip := func(n, size, k, s, pb int) []span {
		sp := make([]span, n)
		for o := range sp {
			lo := o*s - pb
			sp[o] = span{max(lo, 0), min(lo+k, size)}
		}
		return sp
	}
	p := pooler{
		planes: x[0] * x[1], h: in[0], w: in[1], oh: out[0], ow: out[1],
		rows: clip(out[0], in[0], k[0], s[0], pb[0]), cols: clip(out[1], in[1], k[1], s[1], pb[1]),
		full: float32(k[0] * k[1]), include: at.CountIncludePad, halving: true,
	}
	for _, sp := range [][]span{p.rows, p.cols} {
		for o, r := range sp {
			p.halving = p.halving && r == span{2 * o, 2*o + 2}
		}
	}
	return p
}

// argmax returns the plane index of the first largest input in the window r × c.
func (p *pooler) argmax(plane []float32, r, c span) int {
	best := r.lo*p.w + c.lo
	m := plane[best]
	for y := r.lo; y < r.hi; y++ {
		for x, v := range plane[y*p.w+c.lo : y*p.w+c.hi] {
			if v > m {
				m, best = v, y*p.w+c.lo+x
			}
		}
	}
	return best
}

// divisor is the count an average over the window r × c divides by.
func (p *pooler) divisor(r, c span) float32 {
	if p.include {
		return p.full
	}
	return float32((r.hi - r.lo) * (c.hi - c.lo))
}

// poolGrain is the number of work units (output rows or planes) that together touch
// about 32K elements, the least worth a goroutine of its own: unitCost is what one
// unit touches.
func poolGrain(unitCost int) int { return max(1, 1<<15/max(unitCost, 1)) }

// rowCost is the number of input elements an output row's windows read.
func (p *pooler) rowCost() int {
	if len(p.rows) == 0 {
		return 1
	}
	return (p.rows[0].hi - p.rows[0].lo) * p.w
}

// poolKernel computes max or average pooling.
func poolKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	p := newPooler(n.Input(0).Shape(), n.Shape(), n.Attr().(tensor.PoolAttr))
	X, Y := f32s(in[0]), f32s(out)
	isMax := n.Op() == tensor.OpMaxPool
	rows := p.planes * p.oh
	grain := poolGrain(p.rowCost())
	if isMax && p.halving {
		return func() error {
			parallel.For(rows, grain, func(lo, hi int) { p.max2x2Rows(X, Y, lo, hi, false) })
			return nil
		}, nil
	}
	// poolRows needs a scratch row per block, so the blocks are counted here.
	count := max(1, min(parallel.Workers(), rows/grain))
	scratch := make([][]float32, count)
	for i := range scratch {
		scratch[i] = make([]float32, p.w)
	}
	return func() error {
		parallel.Run(count, func(ch int) {
			p.poolRows(X, Y, scratch[ch], isMax, ch*rows/count, (ch+1)*rows/count)
		})
		return nil
	}, nil
}

// max2x2Rows computes output rows [lo, hi) (numbered across planes) of a halving max
// pool, with relu the ReLU of it: in runs of rows where the CPU has AVX-512
// (max2x2RunVec), else a row at a time in assembly where it has AVX2 (max2x2Vec), else
// here.
func (p *pooler) max2x2Rows(X, Y []float32, lo, hi int, relu bool) {
	w, h, oh, ow := p.w, p.h, p.oh, p.ow
	if p.wideRuns() {
		p.runs(lo, hi, func(at, r, n int) { max2x2RunVec(Y[r*ow:], X[at:], n, ow, w, relu) })
		return
	}
	// The plane and row advance by counting: a division per row costs as much as a row
	// of a small plane.
	pl, oy := lo/oh, lo%oh
	for r := lo; r < hi; r++ {
		at := (pl*h + 2*oy) * w
		max2x2Row(Y[r*ow:][:ow], X[at:][:2*ow], X[at+w:][:2*ow])
		if oy++; oy == oh {
			pl, oy = pl+1, 0
		}
	}
	if relu {
		rows := Y[lo*ow : hi*ow] // rectified while they are in cache
		vec.Relu(rows, rows)
	}
}

// wideRuns says whether the halving pool's rows go through the AVX-512 runs
// (max2x2RunVec, maxGrad2x2RunVec), which take rows of 2·ow or 2·ow+1 inputs.
func (p *pooler) wideRuns() bool { return poolAVX512 && p.ow >= 1 && p.w-2*p.ow <= 1 }

// runs calls f on output rows [lo, hi) of a halving pool cut into runs whose input rows
// follow each other: a plane's, or all of them when every plane has an even height. at
// is the run's first input element, r its first output row, n its number of rows.
func (p *pooler) runs(lo, hi int, f func(at, r, n int)) {
	pl, oy := lo/p.oh, lo%p.oh
	for r := lo; r < hi; {
		n := hi - r
		if p.h != 2*p.oh {
			n = min(n, p.oh-oy)
		}
		f((pl*p.h+2*oy)*p.w, r, n)
		r += n
		pl, oy = pl+(oy+n)/p.oh, (oy+n)%p.oh
	}
}

// max2x2Row sets dst[i] to the largest of the 2×2 window at column 2i of the rows top and
// bot.
func max2x2Row(dst, top, bot []float32) {
	for i := max2x2Vec(dst, top, bot); i < len(dst); i++ {
		// Go's max is branch-free (a branch on the data mispredicts about half the time)
		// and propagates NaN, as PyTorch does.
		dst[i] = max(max(top[2*i], top[2*i+1]), max(bot[2*i], bot[2*i+1]))
	}
}

// poolRows computes output rows [lo, hi) (numbered across planes) of any max or average
// pool, with line as scratch (p.w elements).
func (p *pooler) poolRows(X, Y, line []float32, isMax bool, lo, hi int) {
	w, h, oh, ow := p.w, p.h, p.oh, p.ow
	for rr := lo; rr < hi; rr++ {
		pl, oy := rr/oh, rr%oh
		plane := X[pl*h*w:][:h*w]
		r := p.rows[oy]
		copy(line, plane[r.lo*w:][:w])
		for y := r.lo + 1; y < r.hi; y++ {
			row := plane[y*w:][:w]
			if isMax {
				for x, v := range row {
					line[x] = max(line[x], v)
				}
			} else {
				for x, v := range row {
					line[x] += v
				}
			}
		}
		orow := Y[rr*ow:][:ow]
		for ox, c := range p.cols {
			win := line[c.lo:c.hi]
			m := win[0]
			if isMax {
				for _, v := range win[1:] {
					m = max(m, v)
				}
				orow[ox] = m
				continue
			}
			for _, v := range win[1:] {
				m += v
			}
			orow[ox] = m / p.divisor(r, c)
		}
	}
}

// maxPoolGradKernel adds each output gradient to the input position its window's
// maximum came from (the first largest).
func maxPoolGradKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	p := newPooler(n.Input(0).Shape(), n.Input(1).Shape(), n.Attr().(tensor.PoolAttr))
	X, GY, DX := f32s(in[0]), f32s(in[1]), f32s(out)
	if p.halving {
		// Output row oy owns input rows 2·oy and 2·oy+1; the input row left over under an
		// odd height belongs to the plane's last output row.
		grain := poolGrain(2 * p.w)
		return func() error {
			parallel.For(p.planes*p.oh, grain, func(lo, hi int) { p.maxGrad2x2Rows(X, GY, DX, lo, hi) })
			return nil
		}, nil
	}
	// Overlapping windows may share an input element, so a plane is one unit of work.
	grain := poolGrain(p.h*p.w + p.oh*p.ow*int(p.full))
	return func() error {
		parallel.For(p.planes, grain, func(lo, hi int) {
			for pl := lo; pl < hi; pl++ {
				plane, dx, gy := X[pl*p.h*p.w:][:p.h*p.w], DX[pl*p.h*p.w:][:p.h*p.w], GY[pl*p.oh*p.ow:][:p.oh*p.ow]
				clear(dx)
				for oy, r := range p.rows {
					for ox, c := range p.cols {
						dx[p.argmax(plane, r, c)] += gy[oy*p.ow+ox]
					}
				}
			}
		})
		return nil
	}, nil
}

// maxGrad2x2Rows writes the input gradient under output rows [lo, hi) (numbered across
// planes) of a halving max pool, every element once: each window's gradient at its first
// largest input and zero at the three others (eight windows at a time in assembly where
// the CPU has AVX2: maxGrad2x2Vec), zero in the column and row no window covers under
// odd sizes. Here
// the largest is chosen without branches (which of four values is largest is random, and
// a branch on it mispredicts about half the time).
func (p *pooler) maxGrad2x2Rows(X, GY, DX []float32, lo, hi int) {
	if p.maxGrad2x2Runs(X, GY, DX, lo, hi, false) {
		return
	}
	w, h, oh, ow := p.w, p.h, p.oh, p.ow
	pl, oy := lo/oh, lo%oh // advanced by counting, as in max2x2Rows
	for r := lo; r < hi; r++ {
		at := (pl*h + 2*oy) * w
		dtop, dbot := DX[at:][:w], DX[at+w:][:w]
		maxGrad2x2Row(dtop, dbot, X[at:][:2*ow], X[at+w:][:2*ow], GY[r*ow:][:ow])
		if 2*ow < w {
			clear(dtop[2*ow:])
			clear(dbot[2*ow:])
		}
		if oy++; oy == oh {
			clear(DX[at+2*w : (pl+1)*h*w])
			pl, oy = pl+1, 0
		}
	}
}

// maxGrad2x2Runs is maxGrad2x2Rows through maxGrad2x2RunVec, with relu the gradient of
// the ReLU before the pool too; it reports false, having done nothing, where that
// assembly does not run.
func (p *pooler) maxGrad2x2Runs(X, GY, DX []float32, lo, hi int, relu bool) bool {
	if !p.wideRuns() {
		return false
	}
	w, ow, left := p.w, p.ow, (p.h-2*p.oh)*p.w
	p.runs(lo, hi, func(at, r, n int) {
		maxGrad2x2RunVec(DX[at:], X[at:], GY[r*ow:], n, ow, w, relu)
		if left > 0 && (r+n)%p.oh == 0 {
			clear(DX[at+2*n*w:][:left]) // the row left over under an odd height
		}
	})
	return true
}

// maxGrad2x2Row writes the gradient under one output row: the first 2·len(g) elements
// of dtop and dbot get g[i] at the first largest input of window i of the rows top and
// bot and zero at its three others. Each window is read before it is written, so dtop
// and dbot may be top's and bot's memory.
func maxGrad2x2Row(dtop, dbot, top, bot, g []float32) {
	for i := maxGrad2x2Vec(dtop, dbot, top, bot, g); i < len(g); i++ {
		// The window's four inputs, numbered 0 and 1 in top, 2 and 3 in bot.
		sel, m := pick(0, top[2*i], 1, top[2*i+1])
		sel, m = pick(sel, m, 2, bot[2*i])
		sel, _ = pick(sel, m, 3, bot[2*i+1])
		var d [4]float32
		d[sel] = g[i]
		dtop[2*i], dtop[2*i+1], dbot[2*i], dbot[2*i+1] = d[0], d[1], d[2], d[3]
	}
}

// pick returns (j, v) when v > m, else (i, m), selecting with a mask: the compiler turns
// the comparison into a flag-setting instruction rather than a branch.
func pick(i int, m float32, j int, v float32) (int, float32) {
	var t int
	if v > m {
		t = 1
	}
	mask := -t
	mb, vb := math.Float32bits(m), math.Float32bits(v)
	return i ^ (i^j)&mask, math.Float32frombits(mb ^ (mb^vb)&uint32(mask))
}

// avgPoolGradKernel spreads each output gradient evenly over its window.
func avgPoolGradKernel(n *tensor.Node, out []byte, in [][]byte) (func() error, error) {
	p := newPooler(n.Shape(), n.Input(0).Shape(), n.Attr().(tensor.PoolAttr))
	GY, DX := f32s(in[0]), f32s(out)
	grain := poolGrain(p.h*p.w + p.oh*p.ow*int(p.full))
	return func() error {
		parallel.For(p.planes, grain, func(lo, hi int) {
			for pl := lo; pl < hi; pl++ {
				dx, gy := DX[pl*p.h*p.w:][:p.h*p.w], GY[pl*p.oh*p.ow:][:p.oh*p.ow]
				clear(dx)
				for oy, r := range p.rows {
					for ox, c := range p.cols {
						v := gy[oy*p.ow+ox] / p.divisor(r, c)
						for y := r.lo; y < r.hi; y++ {
							row := dx[y*p.w+c.lo : y*p.w+c.hi]
							for i := range row {
								row[i] += v
							}
						}
					}
				}
			}
		})
		return nil
	}, nil
}
