package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// cnn is a small convolutional classifier over 8×8 images with two channels, laid out
// channels-last or channels-first; names are fixed so two models share weight names.
func cnn(last bool) *Net {
	var o []LayerOption
	shape := []int{2, 8, 8}
	if last {
		o, shape = []LayerOption{ChannelsLast()}, []int{8, 8, 2}
	}
	with := func(extra ...LayerOption) []LayerOption { return append(append([]LayerOption(nil), o...), extra...) }
	return Sequential(
		Conv2D(4, 3, with(Padding("same"), Activation("relu"), Name("c1"), InputShape(shape...))...),
		MaxPooling2D(2, with(Name("p1"))...),
		secondConv(last),
		AveragePooling2D(2, with(Name("p2"))...),
		GlobalAveragePooling2D(with(Name("g"))...),
		Dense(3, Activation("softmax"), Name("out")))
}

// secondConv is the second convolution of cnn: strided, valid padding.
func secondConv(last bool) Layer {
	o := []LayerOption{Strides(1), Activation("tanh"), Name("c2")}
	if last {
		o = append(o, ChannelsLast())
	}
	return Conv2D(5, 2, o...)
}

// quadrantImages makes n channels-last (8, 8, 2) images whose class (0..2) is which
// quadrant holds a bright square, in channel class%2, on noise.
func quadrantImages(n int, seed uint64) (*tensor.Tensor, *tensor.Tensor) {
	r := rand.New(rand.NewPCG(seed, 1))
	x := tensor.New(tensor.F32, n, 8, 8, 2)
	y := tensor.New(tensor.I64, n)
	d := x.Float32s()
	for i := 0; i < n; i++ {
		cls := r.IntN(3)
		y.SetFloat(i, float64(cls))
		for p := 0; p < 8*8*2; p++ {
			d[i*128+p] = float32(r.Float64() * 0.2)
		}
		r0, c0 := (cls/2)*4, (cls%2)*4
		for h := r0; h < r0+4; h++ {
			for w := c0; w < c0+4; w++ {
				d[i*128+(h*8+w)*2+cls%2] += 1
			}
		}
	}
	return x, y
}

// toChannelsFirstData permutes (n, h, w, c) host data to (n, c, h, w).
func toChannelsFirstData(x *tensor.Tensor) *tensor.Tensor {
	s := x.Shape()
	n, h, w, c := s[0], s[1], s[2], s[3]
	out := tensor.New(tensor.F32, n, c, h, w)
	src, dst := x.Float32s(), out.Float32s()
	for i := 0; i < n; i++ {
		for a := 0; a < h; a++ {
			for b := 0; b < w; b++ {
				for k := 0; k < c; k++ {
					dst[((i*c+k)*h+a)*w+b] = src[((i*h+a)*w+b)*c+k]
				}
			}
		}
	}
	return out
}

// TestChannelsLast checks that a channels-last CNN computes what the channels-first one
// computes with the same weights on transposed data, that Summary shows channels-last
// shapes, and that it trains on the CPU.
func TestChannelsLast(t *testing.T) {
	x, y := quadrantImages(192, 4)
	SetSeed(8)
	last := cnn(true)
	first := cnn(false)
	compileOrFatal(t, last, Loss("sparse_categorical_crossentropy"), Metrics("accuracy"))
	compileOrFatal(t, first, Loss("sparse_categorical_crossentropy"))
	sum := last.Summary().String()
	for _, want := range []string{"(None, 8, 8, 4)", "(None, 4, 4, 4)", "(None, 3, 3, 5)", "(None, 1, 1, 5)", "(None, 5)"} {
		if !strings.Contains(sum, want) {
			t.Fatalf("channels-last summary lacks %q:\n%s", want, sum)
		}
	}
	w, err := last.Weights()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.SetWeights(w); err != nil {
		t.Fatal(err)
	}
	pl, err := last.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := first.Predict(toChannelsFirstData(x))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range pl.Float32s() {
		if d := math.Abs(float64(v - pf.Float32s()[i])); !(d <= 1e-5) {
			t.Fatalf("prediction %d: channels-last %v, channels-first %v", i, v, pf.Float32s()[i])
		}
	}
	h, err := last.Fit(x, y, Epochs(25), BatchSize(32), Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if acc := h.Last("accuracy"); acc < 0.9 {
		t.Fatalf("channels-last CNN reached accuracy %.3f, want >= 0.9 (loss %v)", acc, h.Values["loss"])
	}
}

// TestChannelsFirstHint checks that channels-last data fed to a channels-first
// convolution is an error that names ChannelsLast.
func TestChannelsFirstHint(t *testing.T) {
	m := Sequential(Conv2D(8, 3, InputShape(28, 28, 1)), Flatten(), Dense(10))
	err := m.Compile(Adam(1e-3), Loss("mse"), Device("cpu"))
	if err == nil || !strings.Contains(err.Error(), "nn.ChannelsLast()") {
		t.Fatalf("error %v, want a hint naming nn.ChannelsLast()", err)
	}
}
