package conv

import "github.com/gml-dev/gml/runtime/cpu/gemm"

// directDepthwise reports whether the convolution runs through the direct depthwise loops
// rather than GEMM: when every output channel reads a single input channel
// (InChannels/Groups == 1) and there are fewer output channels per group than the GEMM
// micro-tile has rows, a GEMM would mostly multiply padding.
func (g geometry) directDepthwise() bool { return g.cg == 1 && g.kg < gemm.MicroRows() }

// depthwiseRows calls fn for every output row segment of one image that a kernel tap
// reads from inside the input: output channel k reads input channel c; tap indexes the
// channel's KernelH×KernelW weights; output row o, columns [qlo, qhi) read input row ih
// at columns start, start+StrideW, ....
func depthwiseRows(g geometry, fn func(k, c, tap, o, ih, start, qlo, qhi int)) {
	p := g.p
	oh, ow := p.OutH(), p.OutW()
	for k := 0; k < p.OutChannels; k++ {
		c := k / g.kg
		for r := 0; r < p.KernelH; r++ {
			for s := 0; s < p.KernelW; s++ {
				iw0 := s*p.DilationW - p.PadLeft
				qlo, qhi := validColumns(iw0, p.StrideW, p.InW, ow)
				if qhi <= qlo {
					continue
				}
				for o := 0; o < oh; o++ {
					ih := o*p.StrideH - p.PadTop + r*p.DilationH
					if uint(ih) < uint(p.InH) {
						fn(k, c, r*p.KernelW+s, o, ih, iw0+qlo*p.StrideW, qlo, qhi)
					}
				}
			}
		}
	}
}

// depthwiseForward computes one output image y from one input image x.
func depthwiseForward(g geometry, x, w, y []float32) {
	p, plane, taps := g.p, g.plane, g.p.KernelH*g.p.KernelW
	clear(y)
	depthwiseRows(g, func(k, c, tap, o, ih, start, qlo, qhi int) {
		wv := w[k*taps+tap]
		src := inputRow(x, p, c, ih)
		dst := y[k*plane+o*p.OutW():][qlo:qhi]
		if p.StrideW == 1 {
			src = src[start:][:len(dst)]
			for i := range dst {
				dst[i] += wv * src[i]
			}
			return
		}
		for i := range dst {
			dst[i] += wv * src[start+i*p.StrideW]
		}
	})
}

// depthwiseData adds the input gradient of one image to dx (zeroed by the caller).
func depthwiseData(g geometry, dy, w, dx []float32) {
	p, plane, taps := g.p, g.plane, g.p.KernelH*g.p.KernelW
	depthwiseRows(g, func(k, c, tap, o, ih, start, qlo, qhi int) {
		wv := w[k*taps+tap]
		src := dy[k*plane+o*p.OutW():][qlo:qhi]
		dst := inputRow(dx, p, c, ih)
		for i, v := range src {
			dst[start+i*p.StrideW] += wv * v
		}
	})
}

// depthwiseFilter adds the weight gradient of one image to dw.
func depthwiseFilter(g geometry, x, dy, dw []float32) {
	p, plane, taps := g.p, g.plane, g.p.KernelH*g.p.KernelW
	depthwiseRows(g, func(k, c, tap, o, ih, start, qlo, qhi int) {
		grad := dy[k*plane+o*p.OutW():][qlo:qhi]
		src := inputRow(x, p, c, ih)
		var sum float32
		for i, v := range grad {
			sum += v * src[start+i*p.StrideW]
		}
		dw[k*taps+tap] += sum
	})
}

// inputRow returns row ih of channel c of one input image.
func inputRow(img []float32, p Params, c, ih int) []float32 {
	return img[(c*p.InH+ih)*p.InW:][:p.InW]
}
