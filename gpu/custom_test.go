package gpu

import (
	"testing"

	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// TestCustomOpFallsBackToCPU: a custom node between GPU ops runs on the CPU through the
// scheduler, counted as a fallback, with the CPU backend's result; its gradient (here a
// second custom op) falls back too.
func TestCustomOpFallsBackToCPU(t *testing.T) {
	openBackend(t).Close()
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 6, 9)
	h := tensor.Tanh(x)
	med := tensor.Custom("row_median", []*tensor.Node{h}, tensor.Shape{6, 1})
	loss := tensor.Sum(tensor.Square(tensor.Mul(med, tensor.Sum(h, []int{1}, true))), nil, false)
	gx := tensor.Grad(loss, []*tensor.Node{x})[0]
	data := make([]float32, 54)
	for i := range data {
		data[i] = float32((i*37)%54)/27 - 1
	}
	xt, _ := tensor.FromFloat32s(tensor.Shape{6, 9}, data)
	feeds := map[*tensor.Node]*tensor.Tensor{x: xt}
	want, err := cputest.Run([]*tensor.Node{loss, gx}, feeds)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Device("gpu"))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	exe, err := rt.Compile([]*tensor.Node{loss, gx})
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Free()
	fb := exe.Fallbacks()
	customs := 0
	for _, n := range fb {
		if n.Op() != tensor.OpCustom {
			t.Errorf("unexpected fallback %v", n)
		}
		customs++
	}
	if customs != 2 || rt.Stats().Fallbacks != 2 {
		t.Errorf("fallbacks %v (counted %d), want the custom op and its gradient", fb, rt.Stats().Fallbacks)
	}
	got, err := exe.Run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if e := relErr(got[i].Float32s(), want[i].Float32s()); e > 1e-5 {
			t.Errorf("output %d: relative error %.3g against the CPU", i, e)
		}
	}
}
