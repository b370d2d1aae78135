package conv

import "fmt"

// Params describes a 2-D convolution: an input of shape (Batch, InChannels, InH, InW)
// (NCHW), weights of shape (OutChannels, InChannels/Groups, KernelH, KernelW) (OIHW), and
// an output of shape (Batch, OutChannels, OutH(), OutW()). Zero Stride, Dilation and
// Groups fields mean 1; padding is zero-filled and may differ on each side (as "same"
// padding with an even kernel needs). A 1-D convolution is the 2-D one with InH = 1,
// KernelH = 1 and no vertical padding.
type Params struct {
	Batch, InChannels, InH, InW          int
	OutChannels, KernelH, KernelW        int
	StrideH, StrideW                     int
	PadTop, PadBottom, PadLeft, PadRight int
	DilationH, DilationW                 int
	Groups                               int
}

// normalized returns p with the zero-means-one fields set to 1.
func (p Params) normalized() Params {
	for _, f := range []*int{&p.StrideH, &p.StrideW, &p.DilationH, &p.DilationW, &p.Groups} {
		if *f == 0 {
			*f = 1
		}
	}
	return p
}

// OutH is the output height: (InH + PadTop + PadBottom - DilationH*(KernelH-1) - 1)/StrideH + 1.
func (p Params) OutH() int {
	p = p.normalized()
	return outSize(p.InH, p.PadTop+p.PadBottom, p.KernelH, p.DilationH, p.StrideH)
}

// OutW is the output width, as OutH for the horizontal axis.
func (p Params) OutW() int {
	p = p.normalized()
	return outSize(p.InW, p.PadLeft+p.PadRight, p.KernelW, p.DilationW, p.StrideW)
}

func outSize(in, pad, kernel, dilation, stride int) int {
	span := in + pad - dilation*(kernel-1) - 1
	if span < 0 {
		return 0
	}
	return span/stride + 1
}

// InputLen, WeightLen and OutputLen are the element counts of the three tensors.
func (p Params) InputLen() int { return p.Batch * p.InChannels * p.InH * p.InW }

// WeightLen is the element count of the weights (see InputLen).
func (p Params) WeightLen() int {
	return p.OutChannels * p.InChannels / max(p.Groups, 1) * p.KernelH * p.KernelW
}

// OutputLen is the element count of the output (see InputLen).
func (p Params) OutputLen() int { return p.Batch * p.OutChannels * p.OutH() * p.OutW() }

// Validate returns an error naming the first field that makes p unusable: negative sizes
// or padding, strides, dilations or groups below 1 (after the zero defaults), channel
// counts not divisible by Groups, or a kernel larger than the padded input.
func (p Params) Validate() error {
	q := p.normalized()
	if q.Batch < 0 || q.InChannels < 0 || q.InH < 0 || q.InW < 0 || q.OutChannels < 0 {
		return fmt.Errorf("conv: negative size in %+v", p)
	}
	if q.KernelH < 1 || q.KernelW < 1 {
		return fmt.Errorf("conv: kernel %d×%d must be at least 1×1", q.KernelH, q.KernelW)
	}
	if q.StrideH < 1 || q.StrideW < 1 || q.DilationH < 1 || q.DilationW < 1 || q.Groups < 1 {
		return fmt.Errorf("conv: strides (%d, %d), dilations (%d, %d) and groups (%d) must be positive",
			q.StrideH, q.StrideW, q.DilationH, q.DilationW, q.Groups)
	}
	if q.PadTop < 0 || q.PadBottom < 0 || q.PadLeft < 0 || q.PadRight < 0 {
		return fmt.Errorf("conv: negative padding (top %d, bottom %d, left %d, right %d)",
			q.PadTop, q.PadBottom, q.PadLeft, q.PadRight)
	}
	if q.InChannels%q.Groups != 0 || q.OutChannels%q.Groups != 0 {
		return fmt.Errorf("conv: %d input and %d output channels are not both divisible by %d groups",
			q.InChannels, q.OutChannels, q.Groups)
	}
	if q.InH+q.PadTop+q.PadBottom < q.DilationH*(q.KernelH-1)+1 ||
		q.InW+q.PadLeft+q.PadRight < q.DilationW*(q.KernelW-1)+1 {
		return fmt.Errorf("conv: dilated kernel %d×%d (dilation %d, %d) is larger than the padded input %d×%d",
			q.KernelH, q.KernelW, q.DilationH, q.DilationW,
			q.InH+q.PadTop+q.PadBottom, q.InW+q.PadLeft+q.PadRight)
	}
	return nil
}

// operand is a slice argument's name, its length and the length p requires.
type operand struct {
	name       string
	have, want int
}

// checkLens validates p and the lengths of the named slices against it.
func checkLens(fn string, p Params, slices ...operand) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("conv.%s: %w", fn, err)
	}
	for _, s := range slices {
		if s.have != s.want {
			return fmt.Errorf("conv.%s: %s has %d elements, want %d for %+v", fn, s.name, s.have, s.want, p)
		}
	}
	return nil
}

// Transposed describes a 2-D transposed convolution (the data gradient of a convolution,
// also called deconvolution): an input of shape (Batch, InChannels, InH, InW), weights of
// shape (InChannels, OutChannels/Groups, KernelH, KernelW) as PyTorch's ConvTranspose2d
// stores them, and an output of shape (Batch, OutChannels, OutH(), OutW()). OutputPadH and
// OutputPadW add rows and columns at the bottom and right and must be smaller than the
// stride. Zero Stride, Dilation and Groups fields mean 1.
type Transposed struct {
	Batch, InChannels, InH, InW          int
	OutChannels, KernelH, KernelW        int
	StrideH, StrideW                     int
	PadTop, PadBottom, PadLeft, PadRight int
	OutputPadH, OutputPadW               int
	DilationH, DilationW                 int
	Groups                               int
}

// Conv returns the convolution whose data gradient t is: its input has t's output shape,
// its output has t's input shape, and its weights are t's weights.
func (t Transposed) Conv() Params {
	p := Params{
		Batch: t.Batch, InChannels: t.OutChannels, OutChannels: t.InChannels,
		KernelH: t.KernelH, KernelW: t.KernelW, StrideH: t.StrideH, StrideW: t.StrideW,
		PadTop: t.PadTop, PadBottom: t.PadBottom, PadLeft: t.PadLeft, PadRight: t.PadRight,
		DilationH: t.DilationH, DilationW: t.DilationW, Groups: t.Groups,
	}.normalized()
	p.InH = (t.InH-1)*p.StrideH - t.PadTop - t.PadBottom + p.DilationH*(t.KernelH-1) + t.OutputPadH + 1
	p.InW = (t.InW-1)*p.StrideW - t.PadLeft - t.PadRight + p.DilationW*(t.KernelW-1) + t.OutputPadW + 1
	return p
}

// OutH is the output height: (InH-1)*StrideH - PadTop - PadBottom + DilationH*(KernelH-1)
// + OutputPadH + 1.
func (t Transposed) OutH() int { return t.Conv().InH }

// OutW is the output width, as OutH for the horizontal axis.
func (t Transposed) OutW() int { return t.Conv().InW }

// Validate returns an error when t is unusable: the conditions of Params.Validate on the
// equivalent convolution, output padding not below the stride, or an empty output.
func (t Transposed) Validate() error {
	p := t.Conv()
	if t.OutputPadH < 0 || t.OutputPadW < 0 || t.OutputPadH >= p.StrideH || t.OutputPadW >= p.StrideW {
		return fmt.Errorf("conv: output padding (%d, %d) must be non-negative and below the stride (%d, %d)",
			t.OutputPadH, t.OutputPadW, p.StrideH, p.StrideW)
	}
	if t.InH < 1 || t.InW < 1 || p.InH < 1 || p.InW < 1 {
		return fmt.Errorf("conv: transposed convolution of a %d×%d input gives an empty %d×%d output",
			t.InH, t.InW, p.InH, p.InW)
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if p.OutH() != t.InH || p.OutW() != t.InW {
		return fmt.Errorf("conv: internal: equivalent convolution maps %d×%d to %d×%d, not %d×%d",
			p.InH, p.InW, p.OutH(), p.OutW(), t.InH, t.InW)
	}
	return nil
}
