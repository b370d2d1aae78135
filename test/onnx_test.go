package test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestONNXTestCommand runs `gml onnx-test` on the shared models (every case passes, exit
// 0) and on a directory holding a passing case, a case with a wrong reference output
// (FAIL with the worst element, exit 1) and a model with an unknown operator (SKIP
// with the reason).
func TestONNXTestCommand(t *testing.T) {
	models := filepath.Join("..", "..", "shared", "onnx", "models")
	if _, err := os.Stat(models); err != nil {
		t.Skipf("no shared models: %v", err)
	}
	out, err := exec.Command(gmlBin, "onnx-test", "--device", "cpu", models).CombinedOutput()
	if err != nil {
		t.Fatalf("gml onnx-test %s: %v\n%s", models, err, out)
	}
	if !regexp.MustCompile(`(?m)^7 passed, 0 failed, 0 skipped$`).Match(out) {
		t.Errorf("summary line missing:\n%s", out)
	}

	dir := t.TempDir()
	copyCase := func(name string) string {
		dst := filepath.Join(dir, name)
		src := filepath.Join(models, "mlp")
		if err := os.MkdirAll(filepath.Join(dst, "test_data_set_0"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"model.onnx", "test_data_set_0/input_0.pb", "test_data_set_0/output_0.pb"} {
			data, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dst
	}
	copyCase("good")
	// The reference output's raw float bytes, perturbed.
	bad := copyCase("bad")
	ref := filepath.Join(bad, "test_data_set_0", "output_0.pb")
	data, _ := os.ReadFile(ref)
	data[len(data)-2] ^= 0x40
	os.WriteFile(ref, data, 0o644)
	// An operator no one implements: the op_type field (tag 0x22, length 4) "Relu"
	// renamed in place.
	odd := copyCase("odd")
	model := filepath.Join(odd, "model.onnx")
	data, _ = os.ReadFile(model)
	os.WriteFile(model, []byte(strings.Replace(string(data), "\x22\x04Relu", "\x22\x04Rulu", 1)), 0o644)

	out, err = exec.Command(gmlBin, "onnx-test", dir).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1\n%s", err, out)
	}
	for _, want := range []string{
		"PASS good", "FAIL bad: test_data_set_0: output", "SKIP odd:", "Rulu", "not supported",
		"1 passed, 1 failed, 1 skipped",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
