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

// TestConvTranspose3D checks the 3-D transposed convolution (a composition of 2-D ones)
// against a direct scatter, with strides, dilations, pads, output padding and groups.
func TestConvTranspose3D(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, cin, cout, g = 1, 4, 6, 2
	in := []int{3, 4, 2}
	k := []int{2, 3, 2}
	st, dil := []int{2, 1, 2}, []int{1, 2, 1}
	pb, pe, op := []int{1, 0, 0}, []int{0, 1, 1}, []int{1, 0, 1}
	xs := []int{n, cin, in[0], in[1], in[2]}
	ws := []int{cin, cout / g, k[0], k[1], k[2]}
	rnd := func(s []int) []float32 {
		v := make([]float32, tensor.Shape(s).Size())
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	xv, wv := rnd(xs), rnd(ws)
	out := make([]int, 3)
	for i := range 3 {
		out[i] = st[i]*(in[i]-1) + op[i] + (k[i]-1)*dil[i] + 1 - pb[i] - pe[i]
	}
	want := make([]float64, n*cout*out[0]*out[1]*out[2])
	cg, og := cin/g, cout/g
	for c := range cin {
		grp := c / cg
		for o := range og {
			for i0 := range in[0] {
				for i1 := range in[1] {
					for i2 := range in[2] {
						xval := float64(xv[((c*in[0]+i0)*in[1]+i1)*in[2]+i2])
						for k0 := range k[0] {
							for k1 := range k[1] {
								for k2 := range k[2] {
									o0, o1, o2 := i0*st[0]+k0*dil[0]-pb[0], i1*st[1]+k1*dil[1]-pb[1], i2*st[2]+k2*dil[2]-pb[2]
									if o0 < 0 || o1 < 0 || o2 < 0 || o0 >= out[0] || o1 >= out[1] || o2 >= out[2] {
										continue
									}
									wval := float64(wv[(((c*og+o)*k[0]+k0)*k[1]+k1)*k[2]+k2])
									want[(((grp*og+o)*out[0]+o0)*out[1]+o1)*out[2]+o2] += xval * wval
								}
							}
						}
					}
				}
			}
		}
	}
	m := newModel(17).input("x", Float, n, cin, in[0], in[1], in[2]).input("w", Float, ws[0], ws[1], ws[2], ws[3], ws[4]).
		output("y", Float).node("ConvTranspose", []string{"x", "w"}, []string{"y"},
		attrInts("strides", st...), attrInts("dilations", dil...), attrInts("pads", pb[0], pb[1], pb[2], pe[0], pe[1], pe[2]),
		attrInts("output_padding", op...), attrInt("group", g)).load(t)
	res, err := m.Run(map[string]any{"x": arr(t, Float, xs, xv), "w": arr(t, Float, ws, wv)})
	if err != nil {
		t.Fatal(err)
	}
	y := res["y"]
	if !y.Shape().Equal(tensor.Shape{n, cout, out[0], out[1], out[2]}) {
		t.Fatalf("shape %v, want %v", y.Shape(), out)
	}
	for i, w := range want {
		if got := y.At(i); math.Abs(got-w) > 1e-4*(1+math.Abs(w)) {
			t.Fatalf("element %d: %v, want %v", i, got, w)
		}
	}
}

// TestConv3D checks the 3-D convolution (2-D ones summed over the kernel's depth)
// against a direct sum, with strides, dilations, pads and groups.
func TestConv3D(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, cin, cout, g = 2, 4, 6, 2
	in := []int{5, 6, 5}
	k := []int{3, 2, 3}
	st, dil := []int{2, 1, 1}, []int{1, 2, 1}
	pb, pe := []int{1, 0, 1}, []int{0, 1, 1}
	xs := []int{n, cin, in[0], in[1], in[2]}
	ws := []int{cout, cin / g, k[0], k[1], k[2]}
	rnd := func(s []int) []float32 {
		v := make([]float32, tensor.Shape(s).Size())
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	xv, wv := rnd(xs), rnd(ws)
	out := make([]int, 3)
	for i := range 3 {
		out[i] = (in[i]+pb[i]+pe[i]-(k[i]-1)*dil[i]-1)/st[i] + 1
	}
	cg, og := cin/g, cout/g
	want := make([]float64, n*cout*out[0]*out[1]*out[2])
	for b := range n {
		for o := range cout {
			grp := o / og
			for o0 := range out[0] {
				for o1 := range out[1] {
					for o2 := range out[2] {
						sum := 0.0
						for c := range cg {
							for k0 := range k[0] {
								for k1 := range k[1] {
									for k2 := range k[2] {
										i0, i1, i2 := o0*st[0]+k0*dil[0]-pb[0], o1*st[1]+k1*dil[1]-pb[1], o2*st[2]+k2*dil[2]-pb[2]
										if i0 < 0 || i1 < 0 || i2 < 0 || i0 >= in[0] || i1 >= in[1] || i2 >= in[2] {
											continue
										}
										xval := float64(xv[(((b*cin+grp*cg+c)*in[0]+i0)*in[1]+i1)*in[2]+i2])
										sum += xval * float64(wv[(((o*cg+c)*k[0]+k0)*k[1]+k1)*k[2]+k2])
									}
								}
							}
						}
						want[(((b*cout+o)*out[0]+o0)*out[1]+o1)*out[2]+o2] = sum
					}
				}
			}
		}
	}
	m := newModel(17).input("x", Float, xs[0], xs[1], xs[2], xs[3], xs[4]).input("w", Float, ws[0], ws[1], ws[2], ws[3], ws[4]).
		output("y", Float).node("Conv", []string{"x", "w"}, []string{"y"},
		attrInts("strides", st...), attrInts("dilations", dil...), attrInts("pads", pb[0], pb[1], pb[2], pe[0], pe[1], pe[2]),
		attrInt("group", g)).load(t)
	res, err := m.Run(map[string]any{"x": arr(t, Float, xs, xv), "w": arr(t, Float, ws, wv)})
	if err != nil {
		t.Fatal(err)
	}
	y := res["y"]
	if !y.Shape().Equal(tensor.Shape{n, cout, out[0], out[1], out[2]}) {
		t.Fatalf("shape %v, want %v", y.Shape(), out)
	}
	for i, w := range want {
		if got := y.At(i); math.Abs(got-w) > 1e-4*(1+math.Abs(w)) {
			t.Fatalf("element %d: %v, want %v", i, got, w)
		}
	}
}
