package conv

// col2im adds every entry of col, a (InChannels*KernelH*KernelW)×(OutH*OutW) column
// matrix of one image, into x (InChannels×InH×InW) at the input position it belongs to:
// row (c, r, s), column (o, q) goes to channel c at (o*StrideH - PadTop + r*DilationH,
// q*StrideW - PadLeft + s*DilationW); entries that fall in the padding are dropped. It is
// the adjoint of building the column matrix (im2col).
func col2im(p Params, col, x []float32) {
	oh, ow := p.OutH(), p.OutW()
	plane := oh * ow
	for c := 0; c < p.InChannels; c++ {
		xc := x[c*p.InH*p.InW:][:p.InH*p.InW]
		for r := 0; r < p.KernelH; r++ {
			for s := 0; s < p.KernelW; s++ {
				row := col[((c*p.KernelH+r)*p.KernelW+s)*plane:][:plane]
				iw0 := s*p.DilationW - p.PadLeft
				qlo, qhi := validColumns(iw0, p.StrideW, p.InW, ow)
				if qhi <= qlo {
					continue
				}
				for o := 0; o < oh; o++ {
					ih := o*p.StrideH - p.PadTop + r*p.DilationH
					if ih < 0 || ih >= p.InH {
						continue
					}
					src := row[o*ow+qlo : o*ow+qhi]
					dst := xc[ih*p.InW:][:p.InW]
					start := iw0 + qlo*p.StrideW
					if p.StrideW == 1 {
						d := dst[start:][:len(src)]
						for q, v := range src {
							d[q] += v
						}
						continue
					}
					for q, v := range src {
						dst[start+q*p.StrideW] += v
					}
				}
			}
		}
	}
}
