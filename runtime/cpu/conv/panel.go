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

// PackB packs rows [p0, p0+kb) and columns [j0, j0+nb) as gemm.BPacker describes. Per
// strip of PackWidth columns it resolves the columns once (positions, or taps when
// transposed) into a vertical offset, a horizontal offset and a flat offset into x; then
// each entry of a row costs two range checks and one load.
func (f fieldPanel) PackB(dst []float32, p0, kb, j0, nb int) {
	const w = gemm.PackWidth
	var colH, colW, colOff [w]int
	h, wd := f.p.InH, f.p.InW
	for s0 := 0; s0 < nb; s0 += w {
		cols := min(w, nb-s0)
		for t := 0; t < cols; t++ {
			colH[t], colW[t], colOff[t] = f.resolve(j0+s0+t, !f.transposed)
		}
		d := dst[s0*kb:][:kb*w]
		for pp := 0; pp < kb; pp++ {
			rowH, rowW, rowOff := f.resolve(p0+pp, f.transposed)
			dp := d[pp*w:][:w]
			for t := 0; t < cols; t++ {
				if uint(colH[t]+rowH) < uint(h) && uint(colW[t]+rowW) < uint(wd) {
					dp[t] = f.x[colOff[t]+rowOff]
				} else {
					dp[t] = 0
				}
			}
			clear(dp[cols:])
		}
	}
}

// resolve returns, for output position i (position set) or tap i (position clear), its
// contribution to the input row and column it reads and to the flat index into x. A
// position (o, q) contributes (o*StrideH - PadTop, q*StrideW - PadLeft); a tap (c, r, s)
// contributes (r*DilationH, s*DilationW) and channel c's offset. The sums of a position's
// and a tap's parts are the input coordinates and index.
func (f fieldPanel) resolve(i int, position bool) (dh, dw, off int) {
	if position {
		o, q := i/f.ow, i%f.ow
		dh, dw = o*f.p.StrideH-f.p.PadTop, q*f.p.StrideW-f.p.PadLeft
		return dh, dw, dh*f.p.InW + dw
	}
	rs := f.p.KernelH * f.p.KernelW
	c, r, s := i/rs, i%rs/f.p.KernelW, i%f.p.KernelW
	dh, dw = r*f.p.DilationH, s*f.p.DilationW
	return dh, dw, c*f.p.InH*f.p.InW + dh*f.p.InW + dw
}
