package onnx

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// einsumRef evaluates an explicit einsum equation (no ellipsis) by summing over every
// assignment of its labels.
func einsumRef(eq string, ins []*Array) ([]float64, []int) {
	lhs, out, _ := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	size := map[rune]int{}
	var labels []rune
	for k, t := range terms {
		for i, l := range t {
			size[l] = ins[k].Shape()[i]
			if !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
	}
	var outShape []int
	for _, l := range out {
		outShape = append(outShape, size[l])
	}
	res := make([]float64, tensor.Shape(outShape).Size())
	assign := map[rune]int{}
	var walk func(d int)
	walk = func(d int) {
		if d == len(labels) {
			p := 1.0
			for k, t := range terms {
				idx := 0
				for i, l := range t {
					idx = idx*ins[k].Shape()[i] + assign[l]
				}
				p *= ins[k].At(idx)
			}
			o := 0
			for i, l := range out {
				o = o*outShape[i] + assign[l]
			}
			res[o] += p
			return
		}
		for v := range size[labels[d]] {
			assign[labels[d]] = v
			walk(d + 1)
		}
	}
	walk(0)
	return res, outShape
}

// TestEinsum checks equations beyond the node tests against a direct summation.
func TestEinsum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		eq     string
		shapes [][]int
	}{
		{"ij,jk->ik", [][]int{{2, 3}, {3, 4}}},
		{"bhqd,bhkd->bhqk", [][]int{{2, 2, 3, 4}, {2, 2, 5, 4}}},
		{"i,j->ij", [][]int{{3}, {4}}},
		{"ii->i", [][]int{{3, 3}}},
		{"ij->", [][]int{{2, 3}}},
		{"ijk,ikl,lm->jm", [][]int{{2, 3, 4}, {2, 4, 2}, {2, 3}}},
		{"bij,bj->bi", [][]int{{2, 3, 4}, {2, 4}}},
		{"ij,ij->i", [][]int{{3, 4}, {3, 4}}},
	}
	for _, c := range cases {
		t.Run(c.eq, func(t *testing.T) {
			b := newModel(12)
			var names []string
			var ins []*Array
			feeds := map[string]any{}
			for k, s := range c.shapes {
				name := string(rune('a' + k))
				dims := make([]any, len(s))
				for i, d := range s {
					dims[i] = d
				}
				b.input(name, Float, dims...)
				data := make([]float32, tensor.Shape(s).Size())
				for i := range data {
					data[i] = float32(r.NormFloat64())
				}
				a := arr(t, Float, s, data)
				ins, names = append(ins, a), append(names, name)
				feeds[name] = a
			}
			m := b.output("y", Float).node("Einsum", names, []string{"y"}, attrString("equation", c.eq)).load(t)
			out, err := m.Run(feeds)
			if err != nil {
				t.Fatal(err)
			}
			want, shape := einsumRef(c.eq, ins)
			got := out["y"]
			if !got.Shape().Equal(shape) {
				t.Fatalf("shape %v, want %v", got.Shape(), shape)
			}
			for i, w := range want {
				if g := got.At(i); math.Abs(g-w) > 1e-4*(1+math.Abs(w)) {
					t.Fatalf("element %d: %v, want %v", i, g, w)
				}
			}
		})
	}
}

// TestImageTensor checks the layout, scaling, normalisation and resizing of pictures.
func TestImageTensor(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 4, 2))
	for y := range 2 {
		for x := range 4 {
			img.Set(x, y, color.RGBA{uint8(50 * x), uint8(100 * y), 255, 255})
		}
	}
	x, err := ImageTensor(ImageOptions{}, img)
	if err != nil {
		t.Fatal(err)
	}
	if !x.Shape().Equal(tensor.Shape{1, 3, 2, 4}) {
		t.Fatalf("shape %v", x.Shape())
	}
	v := x.Float32s()
	near := func(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-6 }
	if !near(v[3], 150.0/255) || !near(v[8+4], 100.0/255) || !near(v[16], 1) {
		t.Errorf("values %v", v)
	}
	last, _ := ImageTensor(ImageOptions{ChannelsLast: true, BGR: true, Mean: []float32{0.5, 0.5, 0.5}, Std: []float32{0.5, 0.5, 0.5}}, img, img)
	if !last.Shape().Equal(tensor.Shape{2, 2, 4, 3}) {
		t.Fatalf("channels-last shape %v", last.Shape())
	}
	if got := last.Float32s()[0]; !near(got, 1) { // blue first: (1 - 0.5) / 0.5
		t.Errorf("BGR normalised first value %v", got)
	}
	gray, _ := ImageTensor(ImageOptions{Gray: true}, img)
	if !gray.Shape().Equal(tensor.Shape{1, 1, 2, 4}) {
		t.Errorf("gray shape %v", gray.Shape())
	}
	big := image.NewRGBA(image.Rect(0, 0, 300, 200))
	for i := range big.Pix {
		big.Pix[i] = 128
	}
	net, err := ImageTensor(ImageNet, big)
	if err != nil {
		t.Fatal(err)
	}
	if !net.Shape().Equal(tensor.Shape{1, 3, 224, 224}) {
		t.Fatalf("ImageNet shape %v", net.Shape())
	}
	// A uniform picture stays uniform through resizing: every value is (128/255-mean)/std.
	want := (128.0/255 - 0.485) / 0.229
	if got := net.Float32s()[1000]; math.Abs(float64(got)-want) > 1e-3 {
		t.Errorf("resized value %v, want %v", got, want)
	}
	if _, err := ImageTensor(ImageOptions{}, img, big); err == nil {
		t.Error("pictures of different sizes batched")
	}
	if _, err := ImageTensor(ImageOptions{Mean: []float32{1}}, img); err == nil {
		t.Error("one mean for three channels accepted")
	}
}

// TestSummary checks what the summary tells of a built and an unbuilt model.
func TestSummary(t *testing.T) {
	w := arr(t, Float, []int{3, 3}, make([]float32, 9))
	m := newModel(17).input("x", Float, 2, 3).output("y", Float).init("w", w).
		node("MatMul", []string{"x", "w"}, []string{"h"}).node("Relu", []string{"h"}, []string{"y"}).load(t)
	s := m.Summary().String()
	for _, want := range []string{"gml-test", "ai.onnx 17", "MatMul ×1", "Relu ×1", "x: float32[2 3]", "9 (36 B)", "engine ops in 1 graph", "all on cpu"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if html := m.MIMEBundle()["text/html"].(string); !strings.Contains(html, "<table>") {
		t.Errorf("no HTML table: %s", html)
	}
	sym := newModel(17).input("x", Float, "n", 3).output("y", Float).node("Relu", []string{"x"}, []string{"y"}).load(t)
	if s := sym.Summary().String(); !strings.Contains(s, "not built yet") || !strings.Contains(s, "x: float32[n 3]") {
		t.Errorf("unbuilt summary:\n%s", s)
	}
}
