package nn

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// gatedDense is a test CustomLayer: tanh(x·kernel + bias) times sigmoid(gate).
type gatedDense struct{ Units int }

func (g gatedDense) Build(b *Builder, in []Spec) error {
	if in[0].Shape.Rank() != 1 {
		return fmt.Errorf("gated_dense takes vectors, got %v", in[0])
	}
	b.Weight("kernel", []int{in[0].Shape[0], g.Units}, GlorotUniform())
	b.Weight("bias", []int{g.Units}, Zeros())
	b.Weight("gate", []int{g.Units}, RandomNormal(0.5))
	return nil
}

func (g gatedDense) Call(f *Forward, in []*tensor.Node) *tensor.Node {
	h := tensor.Tanh(tensor.Add(tensor.MatMul(in[0], f.Weight("kernel")), f.Weight("bias")))
	return tensor.Mul(h, tensor.Sigmoid(f.Weight("gate")))
}

// bilinear is a two-input test CustomLayer: x1ᵀ W x2 per sample, shape (1).
type bilinear struct{}

func (bilinear) Build(b *Builder, in []Spec) error {
	if len(in) != 2 {
		return fmt.Errorf("bilinear takes 2 inputs, got %d", len(in))
	}
	b.Weight("w", []int{in[0].Shape[0], in[1].Shape[0]}, RandomUniform(-1, 1))
	return nil
}

func (bilinear) Call(f *Forward, in []*tensor.Node) *tensor.Node {
	return tensor.Sum(tensor.Mul(tensor.MatMul(in[0], f.Weight("w")), in[1]), []int{1}, true)
}

// centering is a test CustomLayer with state: it subtracts a running mean of its input,
// updated in training graphs only.
type centering struct{}

func (centering) Build(b *Builder, in []Spec) error {
	b.State("mean", in[0].Shape, Zeros())
	return nil
}

func (centering) Call(f *Forward, in []*tensor.Node) *tensor.Node {
	mean := f.Weight("mean")
	if f.Training() {
		batch := tensor.Mean(in[0], []int{0}, false)
		f.Update("mean", tensor.Add(tensor.MulScalar(mean, 0.5), tensor.MulScalar(batch, 0.5)))
	}
	return tensor.Sub(in[0], mean)
}

// TestCustomLayerTrains uses custom layers and a Lambda in a Sequential model through
// Summary, Fit, Evaluate, Predict, the Trainer and its Model snapshot.
func TestCustomLayerTrains(t *testing.T) {
	SetSeed(3)
	x, y := blobs(256, 5, 3, 7)
	m := Sequential(
		Custom("centering", centering{}, InputShape(5)),
		Custom("gated_dense", gatedDense{Units: 16}, Name("gd")),
		Lambda(func(x *tensor.Node) *tensor.Node { return tensor.MulScalar(x, 2) }),
		Dense(3, Activation("softmax")))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"), Metrics("accuracy"))
	sum := m.Summary().String()
	for _, want := range []string{"gd (gated_dense)", "(None, 16)", "lambda", "centering"} {
		if !strings.Contains(sum, want) {
			t.Fatalf("summary lacks %q:\n%s", want, sum)
		}
	}
	if got, want := m.CountParams(), 5*16+16+16+16*3+3; got != want {
		t.Fatalf("%d trainable parameters, want %d", got, want)
	}
	h, err := m.Fit(x, y, Epochs(15), Verbose(0))
	if err != nil {
		t.Fatal(err)
	}
	if acc := h.Last("accuracy"); acc < 0.9 {
		t.Fatalf("accuracy %.3f after training, want >= 0.9 (loss %v)", acc, h.Values["loss"])
	}
	w, err := m.Weights()
	if err != nil {
		t.Fatal(err)
	}
	if mean := w["centering/mean"].Float32s(); mean[0] == 0 && mean[1] == 0 {
		t.Fatalf("the state variable was not updated by training: %v", mean)
	}
	if _, err := m.Evaluate(x, y); err != nil {
		t.Fatal(err)
	}
	tr, err := m.NewTrainer()
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Free()
	if _, err := tr.Step(x, y); err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tr.Model()
	if err != nil {
		t.Fatal(err)
	}
	got, err := snap.Predict(x)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Bytes()) != string(want.Bytes()) {
		t.Fatal("the Trainer's model snapshot predicts differently from the model")
	}
}

// TestCustomSaveLoad saves a functional model with a custom layer (with a Config) and a
// Lambda, and loads it back: without the constructors Load names what is missing; with
// them the model predicts identically.
func TestCustomSaveLoad(t *testing.T) {
	SetSeed(5)
	x, y := blobs(64, 4, 2, 9)
	double := func(x *tensor.Node) *tensor.Node { return tensor.MulScalar(x, 2) }
	a, b := Input([]int{4}, Name("a")), Input([]int{4}, Name("b"))
	h := Custom("gated_dense", gatedDense{Units: 6}, Config(gatedDense{Units: 6}), Name("gd")).Apply(a)
	bl := Custom("bilinear_form", bilinear{}).Apply(h, Lambda(double, Name("twice")).Apply(b))
	out := Dense(2, Activation("softmax")).Apply(Concatenate().Apply(h, bl))
	m, err := Model([]*Node{a, b}, []*Node{out})
	if err != nil {
		t.Fatal(err)
	}
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"))
	if _, err := m.Fit([]*tensor.Tensor{x, x}, y, Epochs(2), Verbose(0)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "custom.gml")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	rebuildGated := func(cfg []byte) (CustomLayer, error) {
		var g gatedDense
		err := json.Unmarshal(cfg, &g)
		return g, err
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), `CustomKind("gated_dense"`) {
		t.Fatalf("Load without the custom kind: error %v, want one naming nn.CustomKind(\"gated_dense\", ...)", err)
	}
	rebuildBilinear := CustomKind("bilinear_form", func([]byte) (CustomLayer, error) { return bilinear{}, nil })
	if _, err := Load(path, CustomKind("gated_dense", rebuildGated), rebuildBilinear); err == nil || !strings.Contains(err.Error(), `LambdaFunc("twice"`) {
		t.Fatalf("Load without the lambda: error %v, want one naming nn.LambdaFunc(\"twice\", f)", err)
	}
	wrongUnits := func([]byte) (CustomLayer, error) { return gatedDense{Units: 5}, nil }
	if _, err := Load(path, CustomKind("gated_dense", wrongUnits), rebuildBilinear, LambdaFunc("twice", double)); err == nil {
		t.Fatal("Load accepted a custom layer whose weights do not match the file")
	}
	m2, err := Load(path, CustomKind("gated_dense", rebuildGated), rebuildBilinear, LambdaFunc("twice", double))
	if err != nil {
		t.Fatal(err)
	}
	samePredictions(t, m, m2, []*tensor.Tensor{x, x})
	if _, err := m2.Fit([]*tensor.Tensor{x, x}, y, Epochs(1), Verbose(0)); err != nil {
		t.Fatalf("training the loaded model: %v", err)
	}
}

// userLayer is a CustomLayer made of two functions, for the error table.
type userLayer struct {
	build func(b *Builder, in []Spec) error
	call  func(f *Forward, in []*tensor.Node) *tensor.Node
}

func (u userLayer) Build(b *Builder, in []Spec) error { return u.build(b, in) }
func (u userLayer) Call(f *Forward, in []*tensor.Node) *tensor.Node {
	return u.call(f, in)
}

// TestCustomLayerErrors checks that mistakes in custom layers become errors that say
// what went wrong, never a crash.
func TestCustomLayerErrors(t *testing.T) {
	okBuild := func(b *Builder, in []Spec) error {
		b.Weight("w", in[0].Shape, Ones())
		return nil
	}
	okCall := func(f *Forward, in []*tensor.Node) *tensor.Node { return tensor.Mul(in[0], f.Weight("w")) }
	cases := []struct {
		name  string
		layer Layer
		want  string
	}{
		{"builtin_kind", Custom("dense", userLayer{okBuild, okCall}), "built-in layer kind"},
		{"empty_kind", Custom("", userLayer{okBuild, okCall}), "kind is empty"},
		{"nil_impl", Custom("thing", nil), "CustomLayer is nil"},
		{"nil_lambda", Lambda(nil), "function is nil"},
		{"bad_option", Custom("thing", userLayer{okBuild, okCall}, Heads(2)), "does not take option Heads"},
		{"build_error", Custom("thing", userLayer{func(*Builder, []Spec) error { return errors.New("no thanks") }, okCall}), "no thanks"},
		{"build_panic", Custom("thing", userLayer{func(*Builder, []Spec) error { panic("boom") }, okCall}), "Build panicked: boom"},
		{"duplicate_weight", Custom("thing", userLayer{func(b *Builder, in []Spec) error {
			b.Weight("w", []int{2}, Zeros())
			b.Weight("w", []int{2}, Zeros())
			return nil
		}, okCall}), `weight "w" declared twice`},
		{"bad_initializer", Custom("thing", userLayer{func(b *Builder, in []Spec) error {
			b.Weight("w", []int{3}, func([]int) *tensor.Tensor { return tensor.New(tensor.F32, 2) })
			return nil
		}, okCall}), "initializer returned f32[2]"},
		{"unknown_weight", Custom("thing", userLayer{okBuild, func(f *Forward, in []*tensor.Node) *tensor.Node {
			return tensor.Mul(in[0], f.Weight("v"))
		}}), `no weight "v" (Build declared: w)`},
		{"nil_output", Custom("thing", userLayer{okBuild, func(*Forward, []*tensor.Node) *tensor.Node { return nil }}), "nil node"},
		{"batch_dropped", Custom("thing", userLayer{okBuild, func(f *Forward, in []*tensor.Node) *tensor.Node {
			return tensor.Sum(in[0], []int{0}, false)
		}}), "batch axis must stay first"},
		{"call_panic", Custom("thing", userLayer{okBuild, func(f *Forward, in []*tensor.Node) *tensor.Node {
			var s []int
			_ = s[3]
			return in[0]
		}}), "Call panicked: runtime error: index out of range"},
		{"update_trainable", Custom("thing", userLayer{okBuild, func(f *Forward, in []*tensor.Node) *tensor.Node {
			f.Update("w", f.Weight("w"))
			return in[0]
		}}), "declare it with Builder.State"},
		{"shape_mismatch", Custom("thing", userLayer{func(b *Builder, in []Spec) error {
			b.Weight("w", []int{7}, Ones())
			return nil
		}, okCall}), "thing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := Sequential(Dense(4, InputShape(4)), tc.layer, Dense(1))
			err := m.Compile(Adam(1e-3), Loss("mse"), Device("cpu"))
			if err == nil {
				x := tensor.New(tensor.F32, 8, 4)
				_, err = m.Fit(x, tensor.New(tensor.F32, 8, 1), Verbose(0))
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
