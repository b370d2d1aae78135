package shaders

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gml-dev/gml/shaders/cm2"
	"github.com/gml-dev/gml/tensor"
)

// TestSPIRVFresh recompiles every variant and compares it with the committed SPIR-V.
func TestSPIRVFresh(t *testing.T) {
	if _, err := exec.LookPath("glslc"); err != nil {
		t.Fatalf("glslc is needed to check the committed SPIR-V (Debian package glslc): %v", err)
	}
	dir := t.TempDir()
	for _, v := range Variants {
		t.Run(v.Name, func(t *testing.T) {
			if err := Compile(v, Sources(), dir); err != nil {
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

// TestOpCodesFresh compares src/opcodes.glsl with what the op table gives now.
func TestOpCodesFresh(t *testing.T) {
	got, err := fs.ReadFile(Sources(), "opcodes.glsl")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, GLSLOpCodes()) {
		t.Error("src/opcodes.glsl is stale: run `go generate ./shaders` (make generate)")
	}
}

// TestEveryOpCodeHasACase requires each shader's source to name every op code it is
// given (a case, a test or a comment at the branch that serves it), so an op added to
// the table with codes on a shader cannot go without its case there.
func TestEveryOpCodeHasACase(t *testing.T) {
	if len(OpCodes()) == 0 {
		t.Fatal("the op table gives no shader op codes")
	}
	for _, sc := range OpCodes() {
		src, err := fs.ReadFile(Sources(), sc.Shader+".comp")
		if err != nil {
			t.Errorf("the op table names shader %q, which has no source: %v", sc.Shader, err)
			continue
		}
		if !bytes.Contains(src, []byte(`#include "opcodes.glsl"`)) {
			t.Errorf("%s.comp does not include opcodes.glsl", sc.Shader)
		}
		for _, c := range sc.Codes {
			if name := strings.ToUpper(sc.Shader + "_" + c.Name); !bytes.Contains(src, []byte(name)) {
				t.Errorf("%s.comp has no case for %s", sc.Shader, name)
			}
		}
	}
}

// TestOpCodesNumbering checks the numbering OpCodes promises: per shader from 0 without
// gaps, each kind's codes consecutive.
func TestOpCodesNumbering(t *testing.T) {
	for _, sc := range OpCodes() {
		seen := map[tensor.Kind]bool{}
		for i, c := range sc.Codes {
			if c.Value != uint32(i) {
				t.Errorf("%s: code %s is %d, want %d", sc.Shader, c.Name, c.Value, i)
			}
			if seen[c.Kind] && sc.Codes[i-1].Kind != c.Kind {
				t.Errorf("%s: the %v codes are not consecutive", sc.Shader, c.Kind)
			}
			seen[c.Kind] = true
		}
	}
}

// TestShaderNamesInVariants checks that every shader the op table names is compiled.
func TestShaderNamesInVariants(t *testing.T) {
	for op := tensor.Op(1); int(op) < tensor.NumOps; op++ {
		name := op.GPU().Shader
		if name == "" {
			continue
		}
		found := false
		for _, v := range Variants {
			found = found || v.Source == name+".comp"
		}
		if !found {
			t.Errorf("%v: the op table names shader %q, which no variant compiles", op, name)
		}
	}
}
