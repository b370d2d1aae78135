package tensor

import (
	"slices"
	"strings"
	"testing"
)

// build runs f, which builds one node, and returns the node or the *Error it panicked with.
func build(f func() *Node) (n *Node, err error) {
	err = Catch(func() { n = f() })
	return n, err
}

// checkBuild compares a built node's shape with want, or its error with wantErr.
func checkBuild(t *testing.T, name string, f func() *Node, want Shape, wantErr string) *Node {
	t.Helper()
	n, err := build(f)
	switch {
	case wantErr != "" && err == nil:
		t.Errorf("%s: built %v, want error containing %q", name, n, wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Errorf("%s: error %q, want it to contain %q", name, err, wantErr)
	case wantErr == "" && err != nil:
		t.Errorf("%s: %v", name, err)
	case wantErr == "" && !n.Shape().Equal(want):
		t.Errorf("%s: shape %v, want %v", name, n.Shape(), want)
	default:
		return n
	}
	return nil
}

func TestConvShapes(t *testing.T) {
	cases := []struct {
		name       string
		x, w       Shape
		opt        ConvOptions
		want       Shape
		pads       [2][]int // expected resolved begin and end pads, when set
		wantErr    string
		conv1D     bool
		transposed bool
	}{
		{name: "valid", x: Shape{2, 3, 7, 9}, w: Shape{4, 3, 3, 3}, want: Shape{2, 4, 5, 7}},
		{name: "stride+pad", x: Shape{2, 3, 7, 9}, w: Shape{4, 3, 3, 3},
			opt: ConvOptions{Stride: []int{2}, Padding: PadSymmetric(1)}, want: Shape{2, 4, 4, 5}},
		{name: "dilation", x: Shape{1, 3, 7, 9}, w: Shape{2, 3, 3, 3}, opt: ConvOptions{Dilation: []int{2, 1}},
			want: Shape{1, 2, 3, 7}},
		{name: "same even kernel stride 2", x: Shape{1, 1, 7, 8}, w: Shape{1, 1, 4, 4},
			opt:  ConvOptions{Stride: []int{2}, Padding: ConvPadding{Mode: PaddingSame}},
			want: Shape{1, 1, 4, 4}, pads: [2][]int{{1, 1}, {2, 1}}},
		{name: "same lower", x: Shape{1, 1, 7, 8}, w: Shape{1, 1, 4, 4},
			opt:  ConvOptions{Stride: []int{2}, Padding: ConvPadding{Mode: PaddingSameLower}},
			want: Shape{1, 1, 4, 4}, pads: [2][]int{{2, 1}, {1, 1}}},
		{name: "same dilated", x: Shape{1, 1, 6, 6}, w: Shape{1, 1, 3, 3},
			opt:  ConvOptions{Dilation: []int{2}, Padding: ConvPadding{Mode: PaddingSame}},
			want: Shape{1, 1, 6, 6}, pads: [2][]int{{2, 2}, {2, 2}}},
		{name: "groups", x: Shape{1, 4, 5, 5}, w: Shape{6, 2, 3, 3}, opt: ConvOptions{Groups: 2}, want: Shape{1, 6, 3, 3}},
		{name: "depthwise", x: Shape{1, 3, 5, 5}, w: Shape{6, 1, 3, 3}, opt: ConvOptions{Groups: 3}, want: Shape{1, 6, 3, 3}},
		{name: "1-D same stride 3", x: Shape{2, 3, 10}, w: Shape{5, 3, 4}, conv1D: true,
			opt:  ConvOptions{Stride: []int{3}, Dilation: []int{1}, Padding: ConvPadding{Mode: PaddingSame}},
			want: Shape{2, 5, 4}, pads: [2][]int{{1}, {2}}},
		{name: "wrong channels", x: Shape{1, 3, 5, 5}, w: Shape{4, 2, 3, 3}, wantErr: "input channels per group"},
		{name: "kernel too large", x: Shape{1, 1, 2, 2}, w: Shape{1, 1, 3, 3}, wantErr: "larger than the padded input"},
		{name: "groups do not divide", x: Shape{1, 3, 5, 5}, w: Shape{4, 1, 3, 3}, opt: ConvOptions{Groups: 2},
			wantErr: "must divide"},
		{name: "rank", x: Shape{1, 3, 5, 5}, w: Shape{4, 3, 3}, wantErr: "same rank"},
		{name: "stride per axis", x: Shape{1, 3, 5, 5}, w: Shape{4, 3, 3, 3}, opt: ConvOptions{Stride: []int{1, 2, 3}},
			wantErr: "one value per spatial axis"},
		{name: "zero stride", x: Shape{1, 3, 5, 5}, w: Shape{4, 3, 3, 3}, opt: ConvOptions{Stride: []int{0}},
			wantErr: "at least 1"},
		{name: "transposed", transposed: true, x: Shape{1, 4, 3, 3}, w: Shape{4, 2, 3, 3},
			opt:  ConvOptions{Stride: []int{2}, Padding: PadSymmetric(1), OutputPadding: []int{1}},
			want: Shape{1, 2, 6, 6}},
		{name: "transposed groups", transposed: true, x: Shape{1, 4, 3, 3}, w: Shape{4, 1, 3, 3},
			opt: ConvOptions{Groups: 2}, want: Shape{1, 2, 5, 5}},
		{name: "transposed same", transposed: true, x: Shape{1, 4, 5, 5}, w: Shape{4, 3, 3, 3},
			opt: ConvOptions{Stride: []int{2}, Padding: ConvPadding{Mode: PaddingSame}}, want: Shape{1, 3, 10, 10}},
		{name: "transposed same 1x1", transposed: true, x: Shape{1, 4, 5, 5}, w: Shape{4, 3, 1, 1},
			opt: ConvOptions{Stride: []int{2}, Padding: ConvPadding{Mode: PaddingSame}}, want: Shape{1, 3, 10, 10}},
		{name: "transposed output padding too big", transposed: true, x: Shape{1, 4, 3, 3}, w: Shape{4, 2, 3, 3},
			opt: ConvOptions{Stride: []int{2}, OutputPadding: []int{2}}, wantErr: "smaller than the stride"},
		{name: "transposed channels", transposed: true, x: Shape{1, 3, 3, 3}, w: Shape{4, 2, 3, 3},
			wantErr: "has 3 channels but weights"},
	}
	for _, c := range cases {
		g := NewGraph()
		x, w := g.Input("x", F32, c.x...), g.Input("w", F32, c.w...)
		n := checkBuild(t, c.name, func() *Node {
			switch {
			case c.conv1D:
				return Conv1D(x, w, c.opt.Stride[0], c.opt.Padding, c.opt.Dilation[0], c.opt.Groups)
			case c.transposed:
				return ConvTranspose2D(x, w, c.opt)
			}
			return Conv2D(x, w, c.opt)
		}, c.want, c.wantErr)
		if n == nil || c.pads[0] == nil {
			continue
		}
		at := n.Attr().(ConvAttr)
		if !slices.Equal(at.PadBegin, c.pads[0]) || !slices.Equal(at.PadEnd, c.pads[1]) {
			t.Errorf("%s: pads %v, %v, want %v, %v", c.name, at.PadBegin, at.PadEnd, c.pads[0], c.pads[1])
		}
	}
}

// TestConvTransposeInvertsShape checks that a forward convolution of a transposed
// convolution's output, with the same attribute, has the transposed convolution's input
// shape, and that ConvFilterGrad accepts the pair.
func TestConvTransposeInvertsShape(t *testing.T) {
	for _, c := range []struct {
		x, w Shape
		at   ConvAttr
	}{
		{Shape{2, 4, 3, 5}, Shape{4, 3, 3, 2}, ConvAttr{Stride: []int{2, 3}, PadBegin: []int{1, 0}, PadEnd: []int{0, 1}, OutputPadding: []int{1, 2}}},
		{Shape{1, 6, 4}, Shape{6, 2, 5}, ConvAttr{Stride: []int{3}, Dilation: []int{2}, Groups: 3}},
	} {
		g := NewGraph()
		x, w := g.Input("x", F32, c.x...), g.Input("w", F32, c.w...)
		y, err := build(func() *Node { return ConvTranspose(x, w, c.at) })
		if err != nil {
			t.Fatal(err)
		}
		fwd := c.at
		fwd.OutputPadding = nil
		back, err := build(func() *Node { return Conv(y, w, fwd) })
		if err != nil {
			t.Fatal(err)
		}
		if !back.Shape().Equal(c.x) {
			t.Errorf("conv of conv_transpose %v -> %v gives %v", c.x, y.Shape(), back.Shape())
		}
		fwd.FilterShape = c.w
		checkBuild(t, "filter grad", func() *Node { return ConvFilterGrad(y, x, fwd) }, c.w, "")
	}
}

func TestConvFilterGradAndIm2ColShapes(t *testing.T) {
	g := NewGraph()
	x := g.Input("x", F32, 2, 3, 7, 9)
	at := ConvAttr{Stride: []int{2, 2}, PadBegin: []int{1, 1}, PadEnd: []int{1, 1}, FilterShape: Shape{4, 3, 3, 3}}
	checkBuild(t, "filter grad", func() *Node { return ConvFilterGrad(x, g.Input("gy", F32, 2, 4, 4, 5), at) },
		Shape{4, 3, 3, 3}, "")
	checkBuild(t, "filter grad mismatch", func() *Node { return ConvFilterGrad(x, g.Input("gy", F32, 2, 4, 5, 5), at) },
		nil, "does not match")
	checkBuild(t, "filter grad without shape", func() *Node { return ConvFilterGrad(x, x, ConvAttr{}) },
		nil, "FilterShape")
	checkBuild(t, "im2col", func() *Node { return Im2Col(x, ConvAttr{FilterShape: Shape{3, 3}}) }, Shape{2, 27, 5, 7}, "")
	checkBuild(t, "im2col groups", func() *Node { return Im2Col(x, ConvAttr{FilterShape: Shape{3, 3}, Groups: 3}) },
		nil, "groups must be 1")
}

func TestPoolShapes(t *testing.T) {
	cases := []struct {
		name    string
		x       Shape
		at      PoolAttr
		want    Shape
		wantErr string
	}{
		{"2x2", Shape{2, 3, 7, 9}, PoolAttr{Kernel: []int{2, 2}}, Shape{2, 3, 3, 4}, ""},
		{"3x3 stride 2 pad 1", Shape{2, 3, 7, 9}, PoolAttr{Kernel: []int{3, 3}, Stride: []int{2}, PadBegin: []int{1}, PadEnd: []int{1}},
			Shape{2, 3, 4, 5}, ""},
		{"1-D", Shape{2, 3, 10}, PoolAttr{Kernel: []int{3}, Stride: []int{1}}, Shape{2, 3, 8}, ""},
		{"pad not below kernel", Shape{1, 1, 5, 5}, PoolAttr{Kernel: []int{2, 2}, PadBegin: []int{2}}, nil, "smaller than the kernel"},
		{"kernel rank", Shape{1, 1, 5, 5}, PoolAttr{Kernel: []int{2}}, nil, "one size per spatial axis"},
		{"too large", Shape{1, 1, 2, 5}, PoolAttr{Kernel: []int{3, 3}}, nil, "larger than the padded input"},
		{"rank", Shape{5, 5}, PoolAttr{Kernel: []int{2}}, nil, "needs input"},
	}
	for _, c := range cases {
		g := NewGraph()
		x := g.Input("x", F32, c.x...)
		y := checkBuild(t, c.name, func() *Node { return MaxPool(x, c.at) }, c.want, c.wantErr)
		checkBuild(t, c.name+" avg", func() *Node { return AvgPool(x, c.at) }, c.want, c.wantErr)
		if y == nil {
			continue
		}
		checkBuild(t, c.name+" max grad", func() *Node { return MaxPoolGrad(x, y, c.at) }, c.x, "")
		checkBuild(t, c.name+" avg grad", func() *Node { return AvgPoolGrad(y, c.x, c.at) }, c.x, "")
		checkBuild(t, c.name+" max grad mismatch", func() *Node { return MaxPoolGrad(x, x, c.at) }, nil, "does not match")
	}
	g := NewGraph()
	x := g.Input("x", F32, 2, 3, 4, 5)
	checkBuild(t, "max pool 2d", func() *Node { return MaxPool2D(x, 2, 1) }, Shape{2, 3, 3, 4}, "")
	checkBuild(t, "avg pool 2d", func() *Node { return AvgPool2D(x, 3, 2) }, Shape{2, 3, 1, 2}, "")
	checkBuild(t, "global", func() *Node { return GlobalAvgPool(x) }, Shape{2, 3}, "")
	checkBuild(t, "global max", func() *Node { return GlobalMaxPool(x) }, Shape{2, 3}, "")
	checkBuild(t, "global rank", func() *Node { return GlobalMaxPool(g.Input("v", F32, 2, 3)) }, nil, "needs (N, C, spatial...)")
	checkBuild(t, "int", func() *Node { return MaxPool2D(g.Input("i", I32, 1, 1, 4, 4), 2, 2) }, nil, "float")
}

func TestParsePadding(t *testing.T) {
	for name, want := range map[string]PaddingMode{"valid": PaddingExplicit, "same": PaddingSame,
		"SAME_UPPER": PaddingSame, "SAME_LOWER": PaddingSameLower, "NOTSET": PaddingExplicit} {
		p, err := ParsePadding(name)
		if err != nil || p.Mode != want {
			t.Errorf("ParsePadding(%q) = %v, %v; want mode %v", name, p, err, want)
		}
	}
	if _, err := ParsePadding("full"); err == nil || !strings.Contains(err.Error(), "full") {
		t.Errorf("ParsePadding(full): error %v, want one naming the value", err)
	}
}

func TestCeilModePadding(t *testing.T) {
	for _, c := range []struct {
		in, k, s, pb, pe, want int
	}{
		{14, 3, 2, 0, 0, 1}, // floor gives 6 windows, ceil 7
		{13, 3, 2, 0, 0, 0}, // exact: no change
		{5, 2, 2, 1, 1, 1},  // the extra window would start in the end padding: dropped
		{7, 2, 3, 0, 0, 1},  // ceil adds a window over the last input element
		{10, 3, 3, 1, 0, 1}, // with begin padding
	} {
		got := CeilModePadding([]int{c.in}, []int{c.k}, []int{c.s}, nil, []int{c.pb}, []int{c.pe})
		if got[0] != c.want {
			t.Errorf("CeilModePadding(in %d, k %d, s %d, pads %d %d) = %v, want %d", c.in, c.k, c.s, c.pb, c.pe, got, c.want)
		}
	}
}
