// Command gen regenerates onnx.pb.go from onnx.proto with protoc and the protoc-gen-go
// version that go.mod pins. Run from package onnxpb (go generate does); -out writes
// elsewhere (the staleness test compares that copy with the committed one).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	out := flag.String("out", ".", "directory to write onnx.pb.go into")
	flag.Parse()
	if err := generate(*out); err != nil {
		fmt.Fprintln(os.Stderr, "onnxpb/gen:", err)
		os.Exit(1)
	}
}

func generate(out string) error {
	if _, err := exec.LookPath("protoc"); err != nil {
		return fmt.Errorf("protoc not found (Debian: apt-get install protobuf-compiler; install/deps.sh does it)")
	}
	tmp, err := os.MkdirTemp("", "onnxpb-gen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	plugin := filepath.Join(tmp, "protoc-gen-go")
	build := exec.Command("go", "build", "-o", plugin, "google.golang.org/protobuf/cmd/protoc-gen-go")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building protoc-gen-go: %w", err)
	}
	protoc := exec.Command("protoc", "--plugin=protoc-gen-go="+plugin, "--go_out="+out,
		"--go_opt=paths=source_relative", "onnx.proto")
	protoc.Stdout, protoc.Stderr = os.Stdout, os.Stderr
	if err := protoc.Run(); err != nil {
		return fmt.Errorf("protoc: %w", err)
	}
	return nil
}
