package onnxpb

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedFresh regenerates onnx.pb.go into a temporary directory and compares it
// with the committed file byte for byte.
func TestGeneratedFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds protoc-gen-go")
	}
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Fatal("protoc is missing (install/deps.sh installs protobuf-compiler); it is needed to check onnx.pb.go is fresh")
	}
	dir := t.TempDir()
	cmd := exec.Command("go", "run", "./gen", "-out", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "onnx.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("onnx.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("onnx.pb.go is stale: run `go generate ./onnx/internal/onnxpb` (make generate)")
	}
}
