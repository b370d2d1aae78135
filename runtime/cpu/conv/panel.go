package conv

import "github.com/gml-dev/gml/runtime/cpu/gemm"

// fieldPanel is the column matrix of one group of one image, the B operand of the
// forward GEMM, packed on demand so that it is never written out (implicit GEMM): row
// (c, r, s) is channel c under kernel tap (r, s), column o*OutW+q is output position
// (o, q), and the entry is the input value that tap reads there, or 0 in the padding.
// With transposed set it is that matrix's transpose (rows are positions, columns taps),
// the B operand of the weight gradient.
type fieldPanel struct {
	p          Params
	x          []float32 // the group's channels of one image
	ow         int
	transposed bool
}

// PackB packs rows [p0, p0+kb) and columns [j0, j0+nb) as gemm.BPacker describes.
func (f fieldPanel) PackB(dst []float32, p0, kb, j0, nb int) {
	if f.transposed {
		f.packTaps(dst, p0, kb, j0, nb)
	} else {
		f.packPositions(dst, p0, kb, j0, nb)
	}
}

// run is a stretch of consecutive columns of a strip (strip columns [t0, t0+n)) that lie
// in one output row: columns [q, q+n) of output row o.
type run struct{ t0, n, o, q int }

// stripRuns cuts the cols columns of a strip, output positions j on (ow to a row), into
// runs of one output row, writes them to runs and returns their count.
func stripRuns(runs *[gemm.PackWidth]run, j, cols, ow int) int {
	count := 0
	for t := 0; t < cols; {
		o, q := (j+t)/ow, (j+t)%ow
		n := min(cols-t, ow-q)
		runs[count] = run{t0: t, n: n, o: o, q: q}
		count++
		t += n
	}
	return count
}

// packPositions packs the column matrix itself (rows are taps, columns positions). Each
// strip is cut into runs of one output row; within a run, a tap reads one input row at
// evenly spaced columns, so a row of the strip is a few clipped strided copies.
func (f fieldPanel) packPositions(dst []float32, p0, kb, j0, nb int) {
	const w = gemm.PackWidth
	p := f.p
	var runs [w]run
	// Per horizontal tap s: the input column of output column 0, and the output columns
	// whose input column is inside the image.
	iw0s, qlos, qhis := make([]int, p.KernelW), make([]int, p.KernelW), make([]int, p.KernelW)
	for s := range iw0s {
		iw0s[s] = s*p.DilationW - p.PadLeft
		qlos[s], qhis[s] = validColumns(iw0s[s], p.StrideW, p.InW, f.ow)
	}
	for s0 := 0; s0 < nb; s0 += w {
		cols := min(w, nb-s0)
		count := stripRuns(&runs, j0+s0, cols, f.ow)
		d := dst[s0*kb:][:kb*w]
		rs := p.KernelH * p.KernelW
		c, r, s := p0/rs, p0%rs/p.KernelW, p0%p.KernelW
		for pp := 0; pp < kb; pp++ {
			dp := (*[w]float32)(d[pp*w:])
			*dp = [w]float32{}
			xc := f.x[c*p.InH*p.InW:][:p.InH*p.InW]
			iw0, qlo, qhi := iw0s[s], qlos[s], qhis[s]
			for _, rn := range runs[:count] {
				ih := rn.o*p.StrideH - p.PadTop + r*p.DilationH
				if uint(ih) >= uint(p.InH) {
					continue
				}
				lo := min(max(qlo-rn.q, 0), rn.n)
				hi := min(max(qhi-rn.q, lo), rn.n)
				gather(dp[rn.t0+lo:rn.t0+hi], xc[ih*p.InW:][:p.InW], iw0+(rn.q+lo)*p.StrideW, p.StrideW)
			}
			if s++; s == p.KernelW {
				s = 0
				if r++; r == p.KernelH {
					r, c = 0, c+1
				}
			}
		}
	}
}

// gather sets dst[i] = src[start + i*stride].
func gather(dst, src []float32, start, stride int) {
	if len(dst) == 0 {
		return
	}
	if stride == 1 {
		src = src[start:][:len(dst)]
		for i := range dst {
			dst[i] = src[i]
		}
		return
	}
	for i := range dst {
		dst[i] = src[start+i*stride]
	}
}

// validColumns returns the output columns [qlo, qhi) (within [0, ow)) whose input column
// iw0 + q*stride lies inside [0, inW); qhi <= qlo when there are none.
func validColumns(iw0, stride, inW, ow int) (qlo, qhi int) {
	if iw0 < 0 {
		qlo = (-iw0 + stride - 1) / stride
	}
	if last := inW - 1 - iw0; last >= 0 {
		qhi = min(ow, last/stride+1)
	}
	return qlo, qhi
}

// packTaps packs the transposed column matrix (rows are positions, columns taps). The
// strip is zeroed, then filled one tap (strip column) at a time: walking the positions in
// runs of one output row, a tap reads one input row at evenly spaced columns.
func (f fieldPanel) packTaps(dst []float32, p0, kb, j0, nb int) {
	const w = gemm.PackWidth
	p := f.p
	rs := p.KernelH * p.KernelW
	for s0 := 0; s0 < nb; s0 += w {
		cols := min(w, nb-s0)
		d := dst[s0*kb:][:kb*w]
		clear(d)
		for t := 0; t < cols; t++ {
			i := j0 + s0 + t
			c, r, s := i/rs, i%rs/p.KernelW, i%p.KernelW
			xc := f.x[c*p.InH*p.InW:][:p.InH*p.InW]
			iw0 := s*p.DilationW - p.PadLeft
			qlo, qhi := validColumns(iw0, p.StrideW, p.InW, f.ow)
			o, q := p0/f.ow, p0%f.ow
			for pp := 0; pp < kb; o, q = o+1, 0 {
				n := min(kb-pp, f.ow-q)
				ih := o*p.StrideH - p.PadTop + r*p.DilationH
				if uint(ih) < uint(p.InH) {
					lo := min(max(qlo-q, 0), n)
					hi := min(max(qhi-q, lo), n)
					src := xc[ih*p.InW:][:p.InW]
					at := iw0 + (q+lo)*p.StrideW
					for k := lo; k < hi; k++ {
						d[(pp+k)*w+t] = src[at]
						at += p.StrideW
					}
				}
				pp += n
			}
		}
	}
}
