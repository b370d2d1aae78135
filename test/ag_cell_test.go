package test

import (
	"context"
	"strings"
	"testing"

	"github.com/gml-dev/gml/kernel/exec"
)

// TestAutogradModelFromCells defines a model in notebook cells as a struct of ag layers
// with a Forward method (interpreted by yaegi), trains it with a hand-written loop, a
// captured step and an optimizer, and checks that bad input becomes a cell error that
// leaves the kernel usable.
func TestAutogradModelFromCells(t *testing.T) {
	in, err := exec.New()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cells := []struct{ code, want, wantErr string }{
		{code: `
tape, err := ag.NewTape(ag.Device("cpu"))
if err != nil {
	panic(err)
}
ag.SetTape(tape)
ag.SetSeed(1)

// MLP is defined in the cell: its layers live in fields, one of them unexported.
type MLP struct {
	Hidden *ag.Linear
	out    *ag.Linear
	Drop   *ag.DropoutLayer
}

func (m *MLP) Forward(x *ag.Tensor) *ag.Tensor {
	return m.out.Forward(m.Drop.Forward(ag.Tanh(m.Hidden.Forward(x))))
}

model := &MLP{Hidden: ag.NewLinear(2, 16), out: ag.NewLinear(16, 1), Drop: ag.NewDropout(0.1)}
for _, p := range ag.NamedParameters(model) {
	fmt.Println(p.Name, p.Tensor.Shape())
}`, want: "out.weight [16 1]"},
		{code: `
n := 64
xs := make([]float64, 2*n)
ys := make([]float64, n)
for i := 0; i < n; i++ {
	a, b := float64(i%8)/4-1, float64(i/8)/4-1
	xs[2*i], xs[2*i+1] = a, b
	ys[i] = a*a - b
}
x := ag.FromFloat64s([]int{n, 2}, xs)
y := ag.FromFloat64s([]int{n, 1}, ys)
opt := ag.Adam(ag.Parameters(model), 0.02)
first := 0.0
for step := 0; step < 150; step++ {
	opt.ZeroGrad()
	loss := ag.MSE(model.Forward(x), y)
	loss.Backward()
	opt.Step()
	if step == 0 {
		first = loss.Item()
	}
}
ag.SetTraining(model, false)
final := ag.MSE(model.Forward(x), y).Item()
fmt.Printf("trained: %v\n", final < first/10)`, want: "trained: true"},
		{code: `
ag.SetTraining(model, true)
step := ag.CaptureStep(func(in ...*ag.Tensor) *ag.Tensor { return ag.MSE(model.Forward(in[0]), in[1]) }, opt, ag.ClipNorm(1))
l0 := step.Step(x, y)
for i := 0; i < 20; i++ {
	step.Step(x, y)
}
n0 := opt.Steps()
l1 := step.Step(x, y)
fmt.Println("captured steps:", opt.Steps()-n0, l0 > 0 && l1 > 0)`, want: "captured steps: 1 true"},
		{code: `ag.MatMul(x, x)`, wantErr: "matmul"},
		{code: `ag.Sum(model.Forward(x), false).Grad()`, wantErr: "RetainGrad"},
		{code: `step.Step(ag.Ones(3, 5), ag.Ones(3, 1))`, wantErr: "matmul"},
		{code: `
c := ag.Capture(func(in ...*ag.Tensor) *ag.Tensor {
	h := model.Forward(in[0])
	fmt.Println(h.Float32s()[0])
	return h
})
c.Call(x)`, wantErr: "inside a Capture"},
		{code: `
loss := ag.MSE(model.Forward(x), y)
loss.Backward()
g := model.Hidden.Weight.Grad()
fmt.Println("grad shape", g.Shape(), "usable:", loss.Item() >= 0)`, want: "grad shape [2 16] usable: true"},
	}
	for k, c := range cells {
		out := &cellOutput{}
		res := in.Execute(context.Background(), c.code, out)
		if c.wantErr != "" {
			if res.Err == nil || !strings.Contains(res.Err.Error(), c.wantErr) {
				t.Fatalf("cell %d: error %v, want one mentioning %q", k, res.Err, c.wantErr)
			}
			continue
		}
		if res.Err != nil {
			t.Fatalf("cell %d: %v\n%s", k, res.Err, strings.Join(res.Err.Traceback, "\n"))
		}
		t.Logf("cell %d printed: %s", k, out.out.String())
		if !strings.Contains(out.out.String(), c.want) {
			t.Fatalf("cell %d printed %q, want it to contain %q", k, out.out.String(), c.want)
		}
	}
}
