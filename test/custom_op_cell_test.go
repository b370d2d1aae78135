package test

import (
	"context"
	"strings"
	"testing"

	"github.com/gml-dev/gml/kernel/exec"
)

// TestCustomOpFromCells registers a custom op whose kernel and gradient are written in
// notebook cells (interpreted by yaegi and called from the CPU backend's goroutines),
// runs it, differentiates through it, redefines it, and checks that a kernel's failure
// is an error of its cell while the kernel goes on.
func TestCustomOpFromCells(t *testing.T) {
	in, err := exec.New()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cells := []struct{ code, want string }{
		{code: `
// cube: y = x³ row by row; its gradient 3x²·gy, built from graph ops.
cube := func(c *rt.CustomCall) error {
	for i := c.Lo * c.Row; i < c.Hi*c.Row; i++ {
		v := c.In[0][i]
		c.Out[i] = v * v * v
	}
	return nil
}
Check(rt.RegisterCustomOp("cube", cube, rt.WithGrad(func(n, gy *tensor.Node) []*tensor.Node {
	x := n.Input(0)
	return []*tensor.Node{tensor.Mul(gy, tensor.MulScalar(tensor.Square(x), 3))}
}), rt.WithGrain(4)))
fmt.Println("registered:", tensor.CustomOps())`, want: "cube"},
		{code: `
g := tensor.NewGraph()
x := g.Input("x", tensor.F32, 64, 3)
y := tensor.Custom("cube", []*tensor.Node{x}, x.Shape())
gx := tensor.Grad(tensor.Sum(y, nil, false), []*tensor.Node{x})[0]
r := Must(rt.New(rt.Device("cpu")))
exe := Must(r.Compile([]*tensor.Node{y, gx}))
xs := make([]float64, 64*3)
for i := range xs {
	xs[i] = float64(i%5) - 2
}
xt := Must(tensor.FromFloat64s(tensor.Shape{64, 3}, xs))
out := Must(exe.Run(map[*tensor.Node]*tensor.Tensor{x: xt}))
fmt.Println("cube", out[0].Float(0), out[0].Float(4), "grad", out[1].Float(0), out[1].Float(4))`, want: "cube -8 8 grad 12 12"},
		{code: `
Check(rt.RegisterCustomOp("cube", func(c *rt.CustomCall) error {
	for i := c.Lo * c.Row; i < c.Hi*c.Row; i++ {
		c.Out[i] = -c.In[0][i]
	}
	return nil
}))
exe2 := Must(r.Compile([]*tensor.Node{tensor.Custom("cube", []*tensor.Node{x}, x.Shape())}))
out2 := Must(exe2.Run(map[*tensor.Node]*tensor.Tensor{x: xt}))
fmt.Println("redefined", out2[0].Float(0))`, want: "redefined 2"},
		{code: `
Check(rt.RegisterCustomOp("picky", func(c *rt.CustomCall) error { return fmt.Errorf("row %d is not welcome", c.Lo) }, rt.Serial()))
exe3 := Must(r.Compile([]*tensor.Node{tensor.Custom("picky", []*tensor.Node{x}, x.Shape())}))
_, err := exe3.Run(map[*tensor.Node]*tensor.Tensor{x: xt})
fmt.Println(err)`, want: "row 0 is not welcome"},
		{code: `fmt.Println("still here")`, want: "still here"},
	}
	for k, c := range cells {
		out := &cellOutput{}
		res := in.Execute(context.Background(), c.code, out)
		if res.Err != nil {
			t.Fatalf("cell %d: %v\n%s", k, res.Err, strings.Join(res.Err.Traceback, "\n"))
		}
		if !strings.Contains(out.out.String(), c.want) {
			t.Fatalf("cell %d printed %q, want it to contain %q", k, out.out.String(), c.want)
		}
	}
}
