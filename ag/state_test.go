package ag_test

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gml-dev/gml/ag"
)

type convNet struct {
	Conv *ag.Conv2DLayer
	BN   *ag.BatchNorm
	Head *ag.Linear
}

func (n *convNet) Forward(x *ag.Tensor) *ag.Tensor {
	h := ag.GlobalAvgPool(ag.Relu(n.BN.Forward(n.Conv.Forward(x))))
	return n.Head.Forward(h)
}

func TestSaveLoadRoundTrip(t *testing.T) {
	cpuTape(t)
	path := filepath.Join(t.TempDir(), "net.safetensors")
	a := &convNet{ag.NewConv2D(1, 4, 3, ag.SamePadding()), ag.NewBatchNorm(4), ag.NewLinear(4, 2)}
	x := ag.Randn(2, 1, 5, 5)
	opt := ag.SGD(ag.Parameters(a), 0.1)
	loss := ag.Mean(a.Forward(x), false)
	loss.Backward()
	opt.Step()
	if err := ag.SaveModel(path, a); err != nil {
		t.Fatal(err)
	}
	// The file is safetensors: a header length, JSON naming every tensor, the data.
	raw, _ := os.ReadFile(path)
	n := binary.LittleEndian.Uint64(raw)
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		t.Fatalf("header: %v", err)
	}
	for _, name := range []string{"conv.weight", "conv.bias", "bn.weight", "bn.running_mean", "head.weight"} {
		if _, ok := header[name]; !ok {
			t.Errorf("the file has no %q: %s", name, raw[8:8+n])
		}
	}
	b := &convNet{ag.NewConv2D(1, 4, 3, ag.SamePadding()), ag.NewBatchNorm(4), ag.NewLinear(4, 2)}
	if err := ag.LoadModel(path, b); err != nil {
		t.Fatal(err)
	}
	ag.SetTraining(a, false)
	ag.SetTraining(b, false)
	if d := maxDiff(a.Forward(x).Float64s(), b.Forward(x).Float64s()); d != 0 {
		t.Errorf("the loaded model predicts differently (by %v)", d)
	}
	c := &convNet{ag.NewConv2D(1, 3, 3), ag.NewBatchNorm(3), ag.NewLinear(3, 2)}
	err := ag.LoadModel(path, c)
	if err == nil || !strings.Contains(err.Error(), "conv.weight is f32[3 1 3 3] in the model, f32[4 1 3 3] in the file") || !strings.Contains(err.Error(), "model: ") {
		t.Errorf("loading into another shape: %v", err)
	}
	if err := ag.LoadModel(filepath.Join(t.TempDir(), "none"), c); err == nil {
		t.Error("loading a missing file worked")
	}
}
