package nn

import (
	"strings"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// TestMixedPrecision trains the same MLP (same initial weights) in f32 and with bf16
// products allowed: both learn the blobs, their first-epoch losses agree to bf16's
// precision (they are equal on the CPU, which computes in f32), and a saved model loads
// with its policy and predicts identically.
func TestMixedPrecision(t *testing.T) {
	x, y := blobs(256, 8, 3, 5)
	train := func(opts ...CompileOption) (*Net, *History) {
		SetSeed(7)
		m := Sequential(Dense(32, Activation("relu"), InputShape(8)), Dense(3, Activation("softmax")))
		compileOrFatal(t, m, append([]CompileOption{Loss("sparse_categorical_crossentropy"), Metrics("accuracy")}, opts...)...)
		h, err := m.Fit(x, y, Epochs(4), BatchSize(32), Verbose(0), Seed(1))
		if err != nil {
			t.Fatal(err)
		}
		return m, h
	}
	_, h32 := train()
	m16, h16 := train(MixedPrecision("mixed_bfloat16"))
	if h16.Last("loss") >= h16.Values["loss"][0] || h16.Last("accuracy") < 0.9 {
		t.Fatalf("bf16 training did not learn the blobs:\n%v", h16)
	}
	t.Logf("first-epoch loss: bf16 %v, f32 %v", h16.Values["loss"][0], h32.Values["loss"][0])
	if d := h16.Values["loss"][0] - h32.Values["loss"][0]; !(d <= 0.02 && d >= -0.02) {
		t.Errorf("first-epoch loss %v with bf16 products, %v in f32", h16.Values["loss"][0], h32.Values["loss"][0])
	}
	loaded := reloaded(t, m16)
	if p := loaded.comp.opts.precision; p != (tensor.MatMulAttr{Precision: tensor.BF16}) {
		t.Errorf("loaded model computes in %v, want bf16", p)
	}
	samePredictions(t, m16, loaded, x)
}

func TestMixedPrecisionPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   tensor.MatMulAttr
		err    string
	}{
		{"mixed_bfloat16", tensor.MatMulAttr{Precision: tensor.BF16}, ""},
		{"bf16", tensor.MatMulAttr{Precision: tensor.BF16}, ""},
		{"tf32", tensor.MatMulAttr{TF32: true}, ""},
		{"float32", tensor.MatMulAttr{}, ""},
		{"mixed_float16", tensor.MatMulAttr{}, "loss scaling"},
		{"fp8", tensor.MatMulAttr{}, "want \"mixed_bfloat16\", \"tf32\" or \"float32\""},
	} {
		m := Sequential(Dense(2, InputShape(3)))
		err := m.Compile(Adam(1e-3), Loss("mse"), MixedPrecision(tc.policy))
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one containing %q", tc.policy, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.policy, err)
		case tc.err == "" && m.comp.opts.precision != tc.want:
			t.Errorf("%s: precision %v, want %v", tc.policy, m.comp.opts.precision, tc.want)
		}
	}
}
