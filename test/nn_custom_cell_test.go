package test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gml-dev/gml/kernel/exec"
)

// cellOutput collects what cells print.
type cellOutput struct {
	mu  sync.Mutex
	out strings.Builder
}

func (c *cellOutput) Stream(_, text string) {
	c.mu.Lock()
	c.out.WriteString(text)
	c.mu.Unlock()
}
func (c *cellOutput) Display(map[string]any, map[string]any, string, bool) {}
func (c *cellOutput) ClearOutput(bool)                                     {}
func (c *cellOutput) Input(string, bool) (string, error) {
	return "", fmt.Errorf("no input in this test")
}

// TestCustomLayerFromCells defines an nn.CustomLayer with trainable weights in notebook
// cells (interpreted by yaegi), trains a model with it and a Lambda, and saves and loads
// the model with the layer supplied again by a cell.
func TestCustomLayerFromCells(t *testing.T) {
	in, err := exec.New()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(t.TempDir(), "affine.gml")
	cells := []struct{ code, want string }{
		{code: `
// Affine learns y = gain*x + shift per feature.
type Affine struct{ Init float64 }

func (a Affine) Build(b *nn.Builder, in []nn.Spec) error {
	d := in[0].Shape[len(in[0].Shape)-1]
	b.Weight("gain", []int{d}, nn.RandomUniform(a.Init, a.Init))
	// An initializer written in the cell.
	b.Weight("shift", []int{d}, func(shape []int) *tensor.Tensor { return tensor.New(tensor.F32, shape...) })
	return nil
}

func (a Affine) Call(f *nn.Forward, in []*tensor.Node) *tensor.Node {
	return tensor.Add(tensor.Mul(in[0], f.Weight("gain")), f.Weight("shift"))
}`},
		{code: `
n := 256
xs := make([]float64, n*2)
ys := make([]float64, n*2)
for i := range xs {
	xs[i] = float64(i%17)/8 - 1
	ys[i] = 3*xs[i] + 1
}
x, _ := tensor.FromFloat64s(tensor.Shape{n, 2}, xs)
y, _ := tensor.FromFloat64s(tensor.Shape{n, 2}, ys)
half := nn.Lambda(func(v *tensor.Node) *tensor.Node { return tensor.MulScalar(v, 0.5) }, nn.Name("half"))
m := nn.Sequential(half, nn.Custom("affine", Affine{Init: 0.5}, nn.Config(Affine{Init: 0.5})))
if err := m.Compile(nn.Adam(0.1), nn.Loss("mse"), nn.Device("cpu")); err != nil {
	panic(err)
}
hist, err := m.Fit(x, y, nn.Epochs(60), nn.BatchSize(64), nn.Verbose(0))
if err != nil {
	panic(err)
}
fmt.Printf("loss %.5f\n", hist.Last("loss"))
fmt.Println(m.Summary())`, want: "affine (affine)"},
		{code: `
w, _ := m.Weights()
fmt.Printf("gain %.1f shift %.1f\n", w["affine/gain"].Float(0), w["affine/shift"].Float(0))`, want: "gain 6.0 shift 1.0"},
		{code: fmt.Sprintf(`
if err := m.Save(%q); err != nil {
	panic(err)
}
_, err = nn.Load(%q)
fmt.Println("without the layer:", err)`, path, path), want: `pass nn.CustomKind("affine", constructor) to Load`},
		{code: fmt.Sprintf(`
import "encoding/json"

m2, err := nn.Load(%q,
	nn.CustomKind("affine", func(cfg []byte) (nn.CustomLayer, error) {
		var a Affine
		return a, json.Unmarshal(cfg, &a)
	}),
	nn.LambdaFunc("half", func(v *tensor.Node) *tensor.Node { return tensor.MulScalar(v, 0.5) }))
if err != nil {
	panic(err)
}
p1, _ := m.Predict(x)
p2, _ := m2.Predict(x)
fmt.Println("same predictions:", string(p1.Bytes()) == string(p2.Bytes()))`, path), want: "same predictions: true"},
		// A bug in a cell's layer is an error of that cell; the kernel goes on.
		{code: `
type Broken struct{}

func (Broken) Build(b *nn.Builder, in []nn.Spec) error { return nil }

func (Broken) Call(f *nn.Forward, in []*tensor.Node) *tensor.Node {
	var picks []*tensor.Node
	return picks[len(in)]
}`},
		{code: `
bad := nn.Sequential(nn.Custom("broken", Broken{}, nn.InputShape(2)))
fmt.Println(bad.Compile(nn.Adam(0.1), nn.Loss("mse")))`, want: "layer broken: Call panicked"},
	}
	for k, c := range cells {
		out := &cellOutput{}
		res := in.Execute(context.Background(), c.code, out)
		if res.Err != nil {
			t.Fatalf("cell %d: %v\n%s", k, res.Err, strings.Join(res.Err.Traceback, "\n"))
		}
		t.Logf("cell %d printed: %s", k, out.out.String())
		if !strings.Contains(out.out.String(), c.want) {
			t.Fatalf("cell %d printed %q, want it to contain %q", k, out.out.String(), c.want)
		}
	}
}
