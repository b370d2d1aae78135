package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// conv is a 1-D or 2-D convolution over channels-first samples.
type conv struct {
	layerBase
	C struct {
		Filters    int
		Kernel     int
		Rank       int // spatial axes: 1 or 2
		Strides    []int
		Padding    string
		Activation string
		NoBias     bool
	}
	kernel, bias *tensor.Variable
}

// Conv2D convolves (channels, height, width) samples with filters kernels of
// size × size. Options: Padding ("valid" or "same"), Strides, Activation, NoBias,
// InputShape, Name. nn is channels-first, like the engine and PyTorch: a 28×28 grey
// image is a (1, 28, 28) sample.
func Conv2D(filters, size int, opts ...Option) Layer { return newConv(2, filters, size, opts) }

// Conv1D convolves (channels, width) samples with filters kernels of the given size.
// Options as Conv2D.
func Conv1D(filters, size int, opts ...Option) Layer { return newConv(1, filters, size, opts) }

func newConv(rank, filters, size int, opts []Option) Layer {
	l := &conv{}
	s := defaultSettings()
	initBase(&l.layerBase, fmt.Sprintf("conv%dd", rank), &s, []string{"Padding", "Strides", "Activation", "NoBias", "InputShape"}, opts)
	if l.err == nil && (filters <= 0 || size <= 0) {
		l.err = fmt.Errorf("nn: Conv%dD: filters and kernel size must be positive, got %d and %d", rank, filters, size)
	}
	l.C.Filters, l.C.Kernel, l.C.Rank = filters, size, rank
	l.C.Strides, l.C.Padding, l.C.Activation, l.C.NoBias = spatial(s.strides, rank, 1), s.padding, s.activation, s.noBias
	if l.err == nil && len(l.C.Strides) != rank {
		l.err = fmt.Errorf("nn: Conv%dD: %d strides for %d spatial axes", rank, len(s.strides), rank)
	}
	setInputShape(&l.layerBase, s)
	return l
}

// spatial expands one value to every spatial axis; nil gives def.
func spatial(v []int, rank, def int) []int {
	switch len(v) {
	case 0:
		v = []int{def}
		fallthrough
	case 1:
		out := make([]int, rank)
		for i := range out {
			out[i] = v[0]
		}
		return out
	}
	return v
}

func (l *conv) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *conv) config() any             { return &l.C }

func (l *conv) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if err := wantFloat(l.name, in[0]); err != nil {
		return err
	}
	what := "(channels, width) samples"
	if l.C.Rank == 2 {
		what = "(channels, height, width) samples"
	}
	if err := wantRank(l.name, in[0], what, l.C.Rank+1); err != nil {
		return err
	}
	first, err := l.checkRebuild(in)
	if first && err == nil {
		ch := in[0].Shape[0]
		shape := []int{l.C.Filters, ch}
		area := 1
		for i := 0; i < l.C.Rank; i++ {
			shape = append(shape, l.C.Kernel)
			area *= l.C.Kernel
		}
		l.kernel = l.param("kernel", glorot(ch*area, l.C.Filters*area, shape...))
		if !l.C.NoBias {
			bshape := []int{l.C.Filters}
			for i := 0; i < l.C.Rank; i++ {
				bshape = append(bshape, 1)
			}
			l.bias = l.param("bias", tensor.New(tensor.F32, bshape...))
		}
	}
	return err
}

func (l *conv) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	pad, err := tensor.ParsePadding(l.C.Padding)
	if err != nil {
		panic(&tensor.Error{Op: "conv", Err: err})
	}
	y := tensor.Apply(tensor.OpConv, convAttr(in[0].Shape()[2:], l.C.Kernel, l.C.Strides, pad), in[0], c.v(l.kernel))
	if l.bias != nil {
		y = tensor.Add(y, c.v(l.bias))
	}
	return c.activate(l.C.Activation, y)
}

// convAttr resolves "same" or "valid" padding for input spatial size in.
func convAttr(in []int, k int, strides []int, pad tensor.ConvPadding) tensor.ConvAttr {
	rank := len(in)
	ks, dil := spatial([]int{k}, rank, k), spatial(nil, rank, 1)
	a := tensor.ConvAttr{Stride: strides, Dilation: dil, PadBegin: make([]int, rank), PadEnd: make([]int, rank), Groups: 1}
	if pad.Mode == tensor.PaddingSame {
		a.PadBegin, a.PadEnd = tensor.SamePadding(in, ks, strides, dil, false)
	}
	return a
}

// pool is max or average pooling over 2-D samples, or global average pooling.
type pool struct {
	layerBase
	C struct {
		Mode    string // "max", "avg", "global_avg"
		Size    int
		Strides []int
		Padding string
	}
}

// MaxPooling2D takes the maximum over size × size windows of (channels, height, width)
// samples, moved by the window size unless Strides says otherwise. Options: Strides,
// Padding, Name.
func MaxPooling2D(size int, opts ...Option) Layer { return newPool("max", size, opts) }

// AveragePooling2D averages size × size windows; options as MaxPooling2D.
func AveragePooling2D(size int, opts ...Option) Layer { return newPool("avg", size, opts) }

// GlobalAveragePooling2D averages each channel over height and width: (C, H, W) -> (C).
func GlobalAveragePooling2D(opts ...Option) Layer { return newPool("global_avg", 1, opts) }

func newPool(mode string, size int, opts []Option) Layer {
	l := &pool{}
	s := defaultSettings()
	kinds := map[string]string{"max": "max_pooling2d", "avg": "average_pooling2d", "global_avg": "global_average_pooling2d"}
	allowed := []string{"Strides", "Padding"}
	if mode == "global_avg" {
		allowed = nil
	}
	initBase(&l.layerBase, kinds[mode], &s, allowed, opts)
	if l.err == nil && size <= 0 {
		l.err = fmt.Errorf("nn: pooling size must be positive, got %d", size)
	}
	l.C.Mode, l.C.Size, l.C.Strides, l.C.Padding = mode, size, spatial(s.strides, 2, size), s.padding
	return l
}

func (l *pool) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *pool) config() any             { return &l.C }
func (l *pool) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if err := wantRank(l.name, in[0], "(channels, height, width) samples", 3); err != nil {
		return err
	}
	_, err := l.checkRebuild(in)
	return err
}

func (l *pool) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	if l.C.Mode == "global_avg" {
		return tensor.GlobalAvgPool(in[0])
	}
	pad, err := tensor.ParsePadding(l.C.Padding)
	if err != nil {
		panic(&tensor.Error{Op: "pool", Err: err})
	}
	ca := convAttr(in[0].Shape()[2:], l.C.Size, l.C.Strides, pad)
	a := tensor.PoolAttr{Kernel: []int{l.C.Size, l.C.Size}, Stride: l.C.Strides, PadBegin: ca.PadBegin, PadEnd: ca.PadEnd}
	if l.C.Mode == "max" {
		return tensor.MaxPool(in[0], a)
	}
	return tensor.AvgPool(in[0], a)
}
