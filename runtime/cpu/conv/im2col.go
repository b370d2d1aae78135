package conv

// im2col copies the receptive fields of one image x (InChannels×InH×InW) into col, a
// (InChannels*KernelH*KernelW)×(OutH*OutW) matrix: row (c, r, s) holds, for every output
// position, the input value under kernel tap (r, s) of channel c, or 0 in the padding.
// With scatter set it is the adjoint, col2im: it adds every entry of col back into x at
// the position it was read from (x must be zeroed first for a plain col2im).
func im2col(p Params, x, col []float32, scatter bool) {
	oh, ow := p.OutH(), p.OutW()
	plane := oh * ow
	for c := 0; c < p.InChannels; c++ {
		xc := x[c*p.InH*p.InW:][:p.InH*p.InW]
		for r := 0; r < p.KernelH; r++ {
			for s := 0; s < p.KernelW; s++ {
				row := col[((c*p.KernelH+r)*p.KernelW+s)*plane:][:plane]
				iw0 := s*p.DilationW - p.PadLeft
				// Output columns q with 0 <= iw0 + q*StrideW < InW.
				qlo := 0
				if iw0 < 0 {
					qlo = (-iw0 + p.StrideW - 1) / p.StrideW
				}
				qhi := 0
				if last := p.InW - 1 - iw0; last >= 0 {
					qhi = min(ow, last/p.StrideW+1)
				}
				qhi = max(qhi, qlo)
				for o := 0; o < oh; o++ {
					seg := row[o*ow:][:ow]
					ih := o*p.StrideH - p.PadTop + r*p.DilationH
					if ih < 0 || ih >= p.InH {
						if !scatter {
							clear(seg)
						}
						continue
					}
					xr := xc[ih*p.InW:][:p.InW]
					if scatter {
						scatterRow(seg[qlo:qhi], xr, iw0+qlo*p.StrideW, p.StrideW)
						continue
					}
					clear(seg[:qlo])
					clear(seg[qhi:])
					gatherRow(seg[qlo:qhi], xr, iw0+qlo*p.StrideW, p.StrideW)
				}
			}
		}
	}
}

// gatherRow sets dst[q] = src[start + q*stride].
func gatherRow(dst, src []float32, start, stride int) {
	if stride == 1 {
		copy(dst, src[start:])
		return
	}
	for q := range dst {
		dst[q] = src[start+q*stride]
	}
}

// scatterRow adds src[q] to dst[start + q*stride].
func scatterRow(src, dst []float32, start, stride int) {
	if stride == 1 {
		d := dst[start:][:len(src)]
		for q, v := range src {
			d[q] += v
		}
		return
	}
	for q, v := range src {
		dst[start+q*stride] += v
	}
}
