package onnx

import (
	"math"

	"github.com/gml-dev/gml/tensor"
)

// Signal processing: DFT and STFT as products with cosine and sine matrices computed at
// load (exact in float64 before rounding, and one matrix product on any device), the
// window functions and the mel filter bank as host values.

func init() {
	register(17, lowerDFT, "DFT")
	register(17, lowerSTFT, "STFT")
	register(17, lowerWindow, "HannWindow", "HammingWindow", "BlackmanWindow")
	register(17, lowerMelWeightMatrix, "MelWeightMatrix")
}

// lowerDFT: input (..., n, 1 or 2) holding real or complex values, transformed along
// the signal axis (opset 17: the axis attribute; from 20: input 2, default -2) at
// dft_length points (input 1; default n, the signal padded or cut to it).
func lowerDFT(c *ctx) {
	c.requireFloat(0)
	s := c.shape(0)
	if len(s) < 2 || (s[len(s)-1] != 1 && s[len(s)-1] != 2) {
		c.failf("input %v: want (..., signal, 1 or 2)", s)
	}
	var axis int
	if c.opset() < 20 {
		axis = c.attrInt("axis", 1)
	} else {
		axis = -2
		if c.has(2) && c.shape(2).Size() > 0 {
			axis = c.scalarInt(2)
		}
	}
	// The axis counts the trailing real/imaginary axis; negative ones end before it.
	if axis < 0 {
		axis += len(s)
	}
	if axis < 0 || axis >= len(s)-1 {
		c.failf("axis %d is not a signal axis of input %v", axis, s)
	}
	inverse, onesided := c.attrInt("inverse", 0) != 0, c.attrInt("onesided", 0) != 0
	length := s[axis]
	if inverse && onesided {
		length = 2 * (s[axis] - 1) // the half spectrum of a real signal
	}
	if c.has(1) && c.shape(1).Size() > 0 {
		length = c.scalarInt(1)
	}
	if length < 1 {
		c.failf("dft_length %d: want 1 or more", length)
	}
	c.set(0, dft(c, c.x(0), axis, length, inverse, onesided), c.dtype(0))
}

// dft transforms x, (..., signal, 1 or 2), along axis at length points; onesided keeps
// the first length/2+1 frequencies, and the result is (..., frequencies, 2). The inverse
// of a onesided transform reads the first length/2+1 frequencies of a real signal's
// spectrum (the others are their conjugates) and gives that signal, (..., length, 1).
func dft(c *ctx, x *tensor.Node, axis, length int, inverse, onesided bool) *tensor.Node {
	s := x.Shape()
	r := len(s) - 1 // rank without the real/imaginary axis
	parts := tensor.Split(x, r, onesOf(s[r])...)
	// Move the signal axis last.
	perm := make([]int, 0, r)
	for i := range r {
		if i != axis {
			perm = append(perm, i)
		}
	}
	perm = append(perm, axis)
	inv := make([]int, r)
	for i, p := range perm {
		inv[p] = i
	}
	half := length/2 + 1
	in := length
	if inverse && onesided {
		in = half
	}
	// sig is one part of the signal, its axis last and padded or cut to in.
	sig := func(p *tensor.Node) *tensor.Node {
		p = tensor.Permute(tensor.Reshape(p, s[:r]...), perm...)
		n := s[axis]
		switch {
		case n > in:
			p = tensor.SliceAxis(p, r-1, 0, in)
		case n < in:
			before, after := make([]int, r), make([]int, r)
			after[r-1] = in - n
			p = tensor.Pad(p, before, after, tensor.PadConstant, 0)
		}
		return p
	}
	back := func(y *tensor.Node) *tensor.Node { return tensor.Unsqueeze(tensor.Permute(y, inv...), r) }
	if inverse && onesided {
		// y[t] = Σ_k m_k (Re X[k] cos θ - Im X[k] sin θ) / length over the half spectrum,
		// m_k = 2 for the frequencies whose conjugates it leaves out.
		cos, sin := tensor.New(x.DType(), half, length), tensor.New(x.DType(), half, length)
		for f := range half {
			m := 2.0
			if f == 0 || 2*f == length {
				m = 1
			}
			for t := range length {
				a := 2 * math.Pi * float64(f*t%length) / float64(length)
				cos.SetFloat(f*length+t, m*math.Cos(a)/float64(length))
				sin.SetFloat(f*length+t, -m*math.Sin(a)/float64(length))
			}
		}
		y := tensor.MatMul(sig(parts[0]), c.constant(cos))
		if len(parts) == 2 {
			y = tensor.Add(y, tensor.MatMul(sig(parts[1]), c.constant(sin)))
		}
		return back(y)
	}
	k := length
	if onesided {
		k = half
	}
	cos, sin := tensor.New(x.DType(), length, k), tensor.New(x.DType(), length, k)
	for n := range length {
		for f := range k {
			// The angle of n*f/length turns, reduced first so that it stays exact.
			a := 2 * math.Pi * float64(n*f%length) / float64(length)
			cos.SetFloat(n*k+f, math.Cos(a))
			sin.SetFloat(n*k+f, math.Sin(a))
		}
	}
	cm, sm := c.constant(cos), c.constant(sin)
	re := sig(parts[0])
	var yr, yi *tensor.Node
	if len(parts) == 1 {
		yr, yi = tensor.MatMul(re, cm), tensor.MatMul(re, sm)
		if !inverse {
			yi = tensor.Neg(yi)
		}
	} else {
		im := sig(parts[1])
		if inverse { // e^{+iθ}
			yr = tensor.Sub(tensor.MatMul(re, cm), tensor.MatMul(im, sm))
			yi = tensor.Add(tensor.MatMul(re, sm), tensor.MatMul(im, cm))
		} else { // e^{-iθ}
			yr = tensor.Add(tensor.MatMul(re, cm), tensor.MatMul(im, sm))
			yi = tensor.Sub(tensor.MatMul(im, cm), tensor.MatMul(re, sm))
		}
	}
	if inverse {
		scale := c.scalar(x.DType(), 1/float64(length))
		yr, yi = tensor.Mul(yr, scale), tensor.Mul(yi, scale)
	}
	return tensor.Concat(r, back(yr), back(yi))
}

// lowerSTFT: signal (batch, length, 1 or 2) cut into frames of frame_length (the
// window's length when a window is given) every frame_step, each windowed and
// transformed; onesided (the default) keeps frame_length/2+1 frequencies of a real
// signal. The result is (batch, frames, frequencies, 2).
func lowerSTFT(c *ctx) {
	c.requireFloat(0)
	s := c.shape(0)
	if len(s) != 3 || (s[2] != 1 && s[2] != 2) {
		c.failf("signal %v: want (batch, length, 1 or 2)", s)
	}
	step := c.scalarInt(1)
	frame := 0
	if c.has(2) {
		frame = c.shape(2).Size()
	}
	if c.has(3) && c.shape(3).Size() > 0 {
		if fl := c.scalarInt(3); frame == 0 {
			frame = fl
		} else if fl != frame {
			c.failf("frame_length %d differs from the window's length %d", fl, frame)
		}
	}
	if frame < 1 || frame > s[1] || step < 1 {
		c.failf("frame length %d and step %d for a signal of %d", frame, step, s[1])
	}
	onesided := c.attrInt("onesided", 1) != 0
	if onesided && s[2] == 2 {
		c.failf("onesided output of a complex signal")
	}
	frames := (s[1]-frame)/step + 1
	// Gather the frames: index (frames, frame) into the length axis.
	idx := tensor.New(tensor.I64, frames, frame)
	for f := range frames {
		for k := range frame {
			idx.Int64s()[f*frame+k] = int64(f*step + k)
		}
	}
	x := tensor.Gather(c.x(0), c.constant(idx), 1) // (batch, frames, frame, 1 or 2)
	if c.has(2) {
		x = tensor.Mul(x, tensor.Reshape(c.x(2), 1, 1, frame, 1))
	}
	c.set(0, dft(c, x, 2, frame, false, onesided), c.dtype(0))
}

// lowerWindow computes a Hann, Hamming or Blackman window of the given size,
// periodic (the default) or symmetric, in output_datatype.
func lowerWindow(c *ctx) {
	n := c.scalarInt(0)
	if n < 0 {
		c.failf("size %d is negative", n)
	}
	dt := DataType(c.attrInt("output_datatype", int(Float)))
	if !dt.Supported() || dt == Bool {
		c.unsupported("output_datatype %v", dt)
	}
	periodic := c.attrInt("periodic", 1) != 0
	span := float64(n)
	if !periodic {
		span = float64(n - 1)
	}
	w := tensor.New(tensor.F32, n)
	for i := range n {
		a := 2 * math.Pi * float64(i) / span
		var v float64
		switch c.n.op {
		case "HannWindow":
			v = 0.5 - 0.5*math.Cos(a)
		case "HammingWindow":
			v = 25.0/46 - 21.0/46*math.Cos(a)
		default:
			v = 0.42 - 0.5*math.Cos(a) + 0.08*math.Cos(2*a)
		}
		w.SetFloat(i, v)
	}
	c.set(0, c.cast(c.constant(w), Float, dt, true), dt)
}

// lowerMelWeightMatrix builds the (dft_length/2+1, num_mel_bins) matrix of triangular
// mel filters as the ONNX reference does, bin edges rounded down to whole frequency
// bins.
func lowerMelWeightMatrix(c *ctx) {
	mels, length := c.scalarInt(0), c.scalarInt(1)
	rate := c.scalarInt(2)
	lo, hi := c.floats(3)[0], c.floats(4)[0]
	if mels < 1 || length < 1 || rate < 1 || lo < 0 || hi <= lo {
		c.failf("num_mel_bins %d, dft_length %d, sample_rate %d, edges %g to %g Hz", mels, length, rate, lo, hi)
	}
	dt := DataType(c.attrInt("output_datatype", int(Float)))
	if !dt.Supported() || dt == Bool {
		c.unsupported("output_datatype %v", dt)
	}
	bins := length/2 + 1
	mel := func(hz float64) float64 { return 2595 * math.Log10(1+hz/700) }
	lm, hm := mel(lo), mel(hi)
	step := (hm - lm) / float64(mels+2)
	edge := make([]int, mels+2)
	for i := range edge {
		hz := 700 * (math.Pow(10, (float64(i)*step+lm)/2595) - 1)
		edge[i] = int(math.Floor(float64(length+1) * hz / float64(rate)))
	}
	w := tensor.New(tensor.F32, bins, mels)
	set := func(j, i int, v float64) {
		if j >= 0 && j < bins {
			w.SetFloat(j*mels+i, v)
		}
	}
	for i := range mels {
		l, m, h := edge[i], edge[i+1], edge[i+2]
		if m == l {
			set(m, i, 1)
		} else {
			for j := l; j <= m; j++ {
				set(j, i, float64(j-l)/float64(m-l))
			}
		}
		for j := m; j < h; j++ {
			set(j, i, float64(h-j)/float64(h-m))
		}
	}
	c.set(0, c.cast(c.constant(w), Float, dt, true), dt)
}
