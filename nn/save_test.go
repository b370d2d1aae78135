package nn

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// freshInput is the input both processes predict on.
func freshInput() *tensor.Tensor {
	x := tensor.New(tensor.F32, 8, 5)
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(i%11)/11 - 0.4
	}
	return x
}

// TestLoadInFreshProcess saves a trained model, loads it in a new process (this test
// binary re-run with NN_FRESH_MODEL set) and compares the predictions byte for byte.
func TestLoadInFreshProcess(t *testing.T) {
	if path := os.Getenv("NN_FRESH_MODEL"); path != "" {
		m, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Predict(freshInput())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".pred", p.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	SetSeed(12)
	x, y := blobs(64, 5, 3, 13)
	m := Sequential(Dense(8, Activation("gelu"), InputShape(5)), LayerNorm(), Dense(3, Activation("softmax")))
	compileOrFatal(t, m, Loss("sparse_categorical_crossentropy"))
	if _, err := m.Fit(x, y, Epochs(2), Verbose(0)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.gml")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLoadInFreshProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NN_FRESH_MODEL="+path, "GML_DEVICE=cpu")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	got, err := os.ReadFile(path + ".pred")
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(freshInput())
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want.Bytes()) {
		t.Fatal("predictions of the model loaded in a fresh process differ")
	}
}
