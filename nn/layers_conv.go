package nn

import (
	"fmt"

	"github.com/gml-dev/gml/tensor"
)

// conv is a 1-D or 2-D convolution over channels-first or channels-last samples.
type conv struct {
	layerBase
	C struct {
		Filters      int
		Kernel       int
		Rank         int // spatial axes: 1 or 2
		Strides      []int
		Padding      string
		Activation   string
		NoBias       bool
		ChannelsLast bool `json:",omitempty"`
	}
	kernel, bias *tensor.Variable
}

// Conv2D convolves (channels, height, width) samples with filters kernels of
// size × size. Options: Padding ("valid" or "same"), Strides, Activation, NoBias,
// ChannelsLast, InputShape, Name. nn is channels-first by default, like the engine and
// PyTorch: a 28×28 grey image is a (1, 28, 28) sample; with ChannelsLast it is a
// (28, 28, 1) sample, as in Keras, and the output is (height, width, filters).
func Conv2D(filters, size int, opts ...LayerOption) Layer { return newConv(2, filters, size, opts) }

// Conv1D convolves (channels, width) samples, or (width, channels) ones with
// ChannelsLast, with filters kernels of the given size. Options as Conv2D.
func Conv1D(filters, size int, opts ...LayerOption) Layer { return newConv(1, filters, size, opts) }

func newConv(rank, filters, size int, opts []LayerOption) Layer {
	l := &conv{}
	s := layerSettings{}
	initBase(l, fmt.Sprintf("conv%dd", rank), &s, []string{"Padding", "Strides", "Activation", "NoBias", "ChannelsLast"}, opts)
	if l.err == nil && (filters <= 0 || size <= 0) {
		l.err = fmt.Errorf("nn: Conv%dD: filters and kernel size must be positive, got %d and %d", rank, filters, size)
	}
	l.C.Filters, l.C.Kernel, l.C.Rank = filters, size, rank
	l.C.Strides, l.C.Padding, l.C.Activation, l.C.NoBias = spatial(s.strides, rank, 1), s.padding, s.activation, s.noBias
	l.C.ChannelsLast = s.channelsLast
	if l.err == nil && len(l.C.Strides) != rank {
		l.err = fmt.Errorf("nn: Conv%dD: %d strides for %d spatial axes", rank, len(s.strides), rank)
	}
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
	if err := wantSpatial(l.name, in[0], l.C.Rank, l.C.ChannelsLast); err != nil {
		return err
	}
	if err := fitsKernel(l.name, in[0], l.C.Kernel, l.C.Padding, l.C.ChannelsLast); err != nil {
		return err
	}
	first, err := l.checkRebuild(in)
	if first && err == nil {
		ch := channels(in[0], l.C.ChannelsLast)
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
	x := toChannelsFirst(in[0], l.C.ChannelsLast)
	y := tensor.Apply(tensor.OpConv, convAttr(x.Shape()[2:], l.C.Kernel, l.C.Strides, pad), x, c.v(l.kernel))
	if l.bias != nil {
		y = tensor.Add(y, c.v(l.bias))
	}
	// The activation comes last, so a softmax is over the channels of channels-last
	// data and a loss finds its logits.
	return c.activate(l.C.Activation, fromChannelsFirst(y, l.C.ChannelsLast))
}

// The channels-last layers move the channels to axis 1 for the engine's channels-first
// kernels and back afterwards; both are Permute ops, which the backends and autodiff
// handle like any other.

// toChannelsFirst permutes (batch, spatial..., channels) to (batch, channels,
// spatial...) when last is set.
func toChannelsFirst(x *tensor.Node, last bool) *tensor.Node {
	r := x.Shape().Rank()
	if !last {
		return x
	}
	perm := []int{0, r - 1}
	for i := 1; i < r-1; i++ {
		perm = append(perm, i)
	}
	return tensor.Permute(x, perm...)
}

// fromChannelsFirst undoes toChannelsFirst.
func fromChannelsFirst(x *tensor.Node, last bool) *tensor.Node {
	r := x.Shape().Rank()
	if !last {
		return x
	}
	perm := []int{0}
	for i := 2; i < r; i++ {
		perm = append(perm, i)
	}
	return tensor.Permute(x, append(perm, 1)...)
}

// channels returns the channel count of a sample.
func channels(s Spec, last bool) int {
	if last {
		return s.Shape[s.Shape.Rank()-1]
	}
	return s.Shape[0]
}

// wantSpatial checks that a sample has rank spatial axes plus a channel axis.
func wantSpatial(name string, s Spec, rank int, last bool) error {
	axes := map[int]string{1: "width", 2: "height, width"}[rank]
	what := "(channels, " + axes + ") samples"
	if last {
		what = "(" + axes + ", channels) samples (ChannelsLast)"
	}
	return wantRank(name, s, what, rank+1)
}

// fitsKernel rejects a sample smaller than the kernel under valid padding, with a hint
// when the data looks channels-last but the layer is channels-first.
func fitsKernel(name string, s Spec, k int, padding string, last bool) error {
	if padding == "same" {
		return nil
	}
	sp := s.Shape[1:]
	if last {
		sp = s.Shape[:s.Shape.Rank()-1]
	}
	for _, d := range sp {
		if d < k {
			hint := ""
			if !last {
				hint = "; nn is channels-first by default: for (height, width, channels) data pass nn.ChannelsLast()"
			}
			return fmt.Errorf("layer %s: sample %v is smaller than the window %d along a spatial axis with valid padding%s", name, s.Shape, k, hint)
		}
	}
	return nil
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
		Mode         string // "max", "avg", "global_avg"
		Size         int
		Strides      []int
		Padding      string
		ChannelsLast bool `json:",omitempty"`
	}
}

// MaxPooling2D takes the maximum over size × size windows of (channels, height, width)
// samples, or (height, width, channels) ones with ChannelsLast, moved by the window
// size unless Strides says otherwise. Options: Strides, Padding, ChannelsLast, Name.
func MaxPooling2D(size int, opts ...LayerOption) Layer { return newPool("max", size, opts) }

// AveragePooling2D averages size × size windows; options as MaxPooling2D.
func AveragePooling2D(size int, opts ...LayerOption) Layer { return newPool("avg", size, opts) }

// GlobalAveragePooling2D averages each channel over height and width: (C, H, W) -> (C),
// or (H, W, C) -> (C) with ChannelsLast. Options: ChannelsLast, Name.
func GlobalAveragePooling2D(opts ...LayerOption) Layer { return newPool("global_avg", 1, opts) }

func newPool(mode string, size int, opts []LayerOption) Layer {
	l := &pool{}
	s := layerSettings{}
	kinds := map[string]string{"max": "max_pooling2d", "avg": "average_pooling2d", "global_avg": "global_average_pooling2d"}
	allowed := []string{"Strides", "Padding", "ChannelsLast"}
	if mode == "global_avg" {
		allowed = []string{"ChannelsLast"}
	}
	initBase(l, kinds[mode], &s, allowed, opts)
	if l.err == nil && size <= 0 {
		l.err = fmt.Errorf("nn: pooling size must be positive, got %d", size)
	}
	l.C.Mode, l.C.Size, l.C.Strides, l.C.Padding = mode, size, spatial(s.strides, 2, size), s.padding
	l.C.ChannelsLast = s.channelsLast
	return l
}

func (l *pool) Apply(in ...*Node) *Node { return applyLayer(l, in) }
func (l *pool) config() any             { return &l.C }
func (l *pool) setup(in []Spec) error {
	if err := wantInputs(l.name, in, 1, 1); err != nil {
		return err
	}
	if err := wantSpatial(l.name, in[0], 2, l.C.ChannelsLast); err != nil {
		return err
	}
	if l.C.Mode != "global_avg" {
		if err := fitsKernel(l.name, in[0], l.C.Size, l.C.Padding, l.C.ChannelsLast); err != nil {
			return err
		}
	}
	_, err := l.checkRebuild(in)
	return err
}

func (l *pool) forward(c *fwd, in []*tensor.Node) *tensor.Node {
	x := toChannelsFirst(in[0], l.C.ChannelsLast)
	if l.C.Mode == "global_avg" {
		return tensor.GlobalAvgPool(x)
	}
	pad, err := tensor.ParsePadding(l.C.Padding)
	if err != nil {
		panic(&tensor.Error{Op: "pool", Err: err})
	}
	ca := convAttr(x.Shape()[2:], l.C.Size, l.C.Strides, pad)
	a := tensor.PoolAttr{Kernel: []int{l.C.Size, l.C.Size}, Stride: l.C.Strides, PadBegin: ca.PadBegin, PadEnd: ca.PadEnd}
	if l.C.Mode == "max" {
		return fromChannelsFirst(tensor.MaxPool(x, a), l.C.ChannelsLast)
	}
	return fromChannelsFirst(tensor.AvgPool(x, a), l.C.ChannelsLast)
}
