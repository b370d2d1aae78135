package shaders

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gml-dev/gml/shaders/cm2"
)

// TestSPIRVFresh recompiles every variant and compares it with the committed SPIR-V.
func TestSPIRVFresh(t *testing.T) {
	if _, err := exec.LookPath("glslc"); err != nil {
		t.Fatalf("glslc is needed to check the committed SPIR-V (Debian package glslc): %v", err)
	}
	dir := t.TempDir()
	for _, v := range Variants {
		t.Run(v.Name, func(t *testing.T) {
			if err := Compile(v, dir); err != nil {
				t.Fatal(err)
			}
			want, err := SPIRV(v.Name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, v.Name+".spv"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("spv/%s.spv is stale: run `go generate ./shaders`", v.Name)
			}
		})
	}
}

// TestGeneratedFresh regenerates every module of Generated and compares it with the
// committed SPIR-V byte for byte.
func TestGeneratedFresh(t *testing.T) {
	for _, c := range Generated {
		t.Run(c.Name(), func(t *testing.T) {
			got, err := cm2.Generate(c)
			if err != nil {
				t.Fatal(err)
			}
			want, err := SPIRV(c.Name())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("spv/%s.spv is stale: run `go generate ./shaders`", c.Name())
			}
		})
	}
}

func TestSPIRVMissing(t *testing.T) {
	if _, err := SPIRV("no_such_shader"); err == nil {
		t.Fatal("SPIRV of an unknown name returned no error")
	}
	if Has("no_such_shader") {
		t.Error(`Has("no_such_shader") is true`)
	}
	if !Has(Variants[0].Name) || !Has(Generated[0].Name()) {
		t.Errorf("Has is false for %s or %s", Variants[0].Name, Generated[0].Name())
	}
}
