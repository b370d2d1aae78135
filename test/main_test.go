// Package test holds gml's end-to-end tests: the kernel over the real Jupyter protocol,
// driven by Debian's jupyter_kernel_test and by a Go client, with the gml binary built
// from this checkout.
package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gmlBin is the gml binary built for this test run, or GML_TEST_BIN's: a binary built
// elsewhere, for a machine without Go (the GPU host runs a compiled test binary).
var gmlBin string

func TestMain(m *testing.M) {
	if bin := os.Getenv("GML_TEST_BIN"); bin != "" {
		gmlBin = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "gml-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gmlBin = filepath.Join(dir, "gml")
	build := exec.Command("go", "build", "-o", gmlBin, "../cmd/gml")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building gml: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
