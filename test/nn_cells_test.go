package test

import (
	"context"
	"strings"
	"testing"

	"github.com/gml-dev/gml/kernel/exec"
)

// TestNNInCells runs nn the way a notebook does: an option passed to the wrong call is
// a compile error of the cell that names both option types; options taken by several
// calls pass everywhere they belong; a layer renders as its summary, a history's plots
// as images, a classification report as a table.
func TestNNInCells(t *testing.T) {
	in, err := exec.New()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	run := func(code string) exec.Result {
		t.Helper()
		return in.Execute(context.Background(), code, &cellOutput{})
	}
	res := run(`d := nn.Dense(3, nn.Epochs(2))`)
	if res.Err == nil || res.Err.Name != "CompileError" ||
		!strings.Contains(res.Err.Value, "nn.Epochs is a nn.FitOption, but this argument must be a nn.LayerOption: the option belongs to another call") {
		t.Fatalf("Epochs passed to Dense: %+v", res.Err)
	}
	t.Logf("Epochs passed to Dense: %s", strings.Join(res.Err.Traceback, "\n"))
	cells := []struct{ code, mime, want string }{
		{`nn.Dense(4, nn.Activation("relu"), nn.Name("hidden"))`, "text/html", "Activation relu, Units 4"},
		{`
import "math/rand/v2"

r := rand.New(rand.NewPCG(1, 2))
x := tensor.New(tensor.F32, 64, 2)
y := tensor.New(tensor.I64, 64)
for i := 0; i < 64; i++ {
	c := i % 2
	y.Int64s()[i] = int64(c)
	x.Float32s()[2*i] = float32(2*c-1) + float32(r.NormFloat64())*0.3
	x.Float32s()[2*i+1] = float32(r.NormFloat64())
}
m := nn.Sequential(nn.Dense(2, nn.Activation("softmax"), nn.InputShape(2)))
Check(m.Compile(nn.Adam(0.05), nn.Loss("sparse_categorical_crossentropy"), nn.Metrics("accuracy"), nn.Seed(3), nn.Device("cpu")))
fitOpts := []nn.FitOption{nn.Epochs(3), nn.BatchSize(16), nn.Seed(4), nn.Verbose(0)}
h := Must(m.Fit(x, y, fitOpts...))
h.Plots()`, "text/html", "<img"},
		{`
p := Must(m.Predict(x, nn.BatchSize(16)))
Must(nn.ClassificationReport(y, p, "left", "right"))`, "text/html", "weighted avg"},
	}
	for k, c := range cells {
		res := run(c.code)
		if res.Err != nil {
			t.Fatalf("cell %d: %v\n%s", k, res.Err, strings.Join(res.Err.Traceback, "\n"))
		}
		if s, _ := res.Data[c.mime].(string); !strings.Contains(s, c.want) {
			t.Fatalf("cell %d: %s lacks %q: %.300v", k, c.mime, c.want, res.Data)
		}
	}
}
