package nn

import (
	"math"
	"strings"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestConfusionAndReport checks the matrix and the report against a hand count, from
// score rows (as Predict returns) and from ids, and scikit-learn's conventions for a
// class never predicted.
func TestConfusionAndReport(t *testing.T) {
	labels, _ := tensor.FromInts(tensor.Shape{6}, []int{0, 0, 1, 1, 2, 2})
	// Predicted classes 0, 1, 1, 1, 0, 0: class 2 is never predicted.
	scores, _ := tensor.FromFloat32s(tensor.Shape{6, 3}, []float32{
		0.8, 0.1, 0.1, 0.2, 0.7, 0.1, 0.1, 0.8, 0.1,
		0.3, 0.6, 0.1, 0.5, 0.2, 0.3, 0.6, 0.1, 0.3})
	c, err := ConfusionMatrix(labels, scores, "cat", "dog", "bird")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{1, 1, 0}, {0, 2, 0}, {2, 0, 0}}
	for i := range want {
		for j := range want[i] {
			if c.Counts[i][j] != want[i][j] {
				t.Fatalf("counts %v, want %v", c.Counts, want)
			}
		}
	}
	r := c.Report()
	close := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	// cat: precision 1/3, recall 1/2; dog: 2/3, 1; bird: 0, 0.
	for i, w := range []ClassScores{{"cat", 1.0 / 3, 0.5, 0.4, 2}, {"dog", 2.0 / 3, 1, 0.8, 2}, {"bird", 0, 0, 0, 2}} {
		g := r.Classes[i]
		if g.Class != w.Class || !close(g.Precision, w.Precision) || !close(g.Recall, w.Recall) || !close(g.F1, w.F1) || g.Support != w.Support {
			t.Fatalf("class %d: %+v, want %+v", i, g, w)
		}
	}
	if !close(r.Accuracy, 0.5) || !close(r.Macro.F1, 0.4) || !close(r.Weighted.Recall, 0.5) {
		t.Fatalf("accuracy %v, macro F1 %v, weighted recall %v", r.Accuracy, r.Macro.F1, r.Weighted.Recall)
	}
	for _, b := range []map[string]any{c.MIMEBundle(), r.MIMEBundle()} {
		if h, _ := b["text/html"].(string); !strings.Contains(h, "<table>") || !strings.Contains(h, "bird") {
			t.Fatalf("bundle %v", b)
		}
	}
	if !strings.Contains(r.String(), "weighted avg") || !strings.Contains(c.String(), "accuracy 0.5000") {
		t.Fatalf("text:\n%s\n%s", c, r)
	}

	// Ids in, ids out; a sigmoid head's probabilities are thresholded at 0.5.
	ids := scores.ArgMax(-1)
	c2, err := ConfusionMatrix(labels, ids)
	if err != nil || c2.Classes[2] != "2" || c2.Counts[2][0] != 2 {
		t.Fatalf("from ids: %v %v", c2, err)
	}
	yb, _ := tensor.FromFloat32s(tensor.Shape{4, 1}, []float32{0, 1, 1, 0})
	pb, _ := tensor.FromFloat32s(tensor.Shape{4, 1}, []float32{0.2, 0.9, 0.4, 0.6})
	rb, err := ClassificationReport(yb, pb)
	if err != nil || rb.Accuracy != 0.5 || len(rb.Classes) != 2 {
		t.Fatalf("binary: %v %v", rb, err)
	}
	for _, bad := range [][2]*tensor.Tensor{{labels, yb}, {tensor.New(tensor.F32, 2, 2, 2), ids}} {
		if _, err := ConfusionMatrix(bad[0], bad[1]); err == nil {
			t.Fatalf("shapes %v and %v accepted", bad[0].Shape(), bad[1].Shape())
		}
	}
	if _, err := ConfusionMatrix(labels, ids, "only", "two"); err == nil || !strings.Contains(err.Error(), "2 class names") {
		t.Fatalf("too few names: %v", err)
	}
}

// TestPredictThenReport is the notebook flow: Predict returns (samples, classes)
// scores; ArgMax gives classes; the report scores them.
func TestPredictThenReport(t *testing.T) {
	SetSeed(9)
	x, y := blobs(120, 4, 3, 10)
	m := Sequential(Dense(3, Activation("softmax"), InputShape(4)))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"), Metrics("accuracy"))
	if _, err := m.Fit(x, y, Epochs(20), Verbose(0)); err != nil {
		t.Fatal(err)
	}
	p, err := m.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Shape().Equal(tensor.Shape{120, 3}) || p.ArgMax(-1).Len() != 120 {
		t.Fatalf("prediction shape %v", p.Shape())
	}
	r, err := ClassificationReport(y, p)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := m.Evaluate(x, y)
	if err != nil || math.Abs(r.Accuracy-logs["accuracy"]) > 1e-6 {
		t.Fatalf("report accuracy %v, Evaluate %v (%v)", r.Accuracy, logs["accuracy"], err)
	}
}

// TestLayerAndPlotsRender checks that a layer renders as its summary row (never its Go
// struct) and a history's Plots as images, with the learning rate plotted when it
// changed.
func TestLayerAndPlotsRender(t *testing.T) {
	d := Dense(4, Activation("relu"), Name("hidden"))
	if s := d.(interface{ String() string }).String(); !strings.Contains(s, "hidden (dense)") || !strings.Contains(s, "not built yet") {
		t.Fatalf("unbuilt layer:\n%s", s)
	}
	m := Sequential(Flatten(InputShape(2, 3)), d)
	if err := m.Compile(Adam(1e-3), Loss("mse"), Device("cpu")); err != nil {
		t.Fatal(err)
	}
	b := d.(interface{ MIMEBundle() map[string]any }).MIMEBundle()
	h, _ := b["text/html"].(string)
	for _, want := range []string{"hidden (dense)", "Activation relu, Units 4", "f32[6]", "kernel [6 4], bias [4]", "28"} {
		if !strings.Contains(h, want) {
			t.Fatalf("layer bundle lacks %q:\n%s", want, h)
		}
	}
	hist := newHistory()
	hist.add(0, Logs{"loss": 1, "accuracy": 0.5, "lr": 0.1})
	hist.add(1, Logs{"loss": 0.5, "accuracy": 0.7, "lr": 0.01})
	ps := hist.Plots()
	if len(ps) != 3 || ps[2].Title != "Learning rate" {
		t.Fatalf("plots %v", ps)
	}
	if pb := ps.MIMEBundle(); strings.Count(pb["text/html"].(string), "<img") != 3 {
		t.Fatalf("plots bundle %.100v", pb)
	}
}
