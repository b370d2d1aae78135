package shaders

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/gml-dev/gml/shaders/cm2"
)

//go:embed spv
var spv embed.FS

//go:embed src
var src embed.FS

// SPIRV returns the compiled module of the named variant.
func SPIRV(name string) ([]byte, error) {
	b, err := spv.ReadFile("spv/" + name + ".spv")
	if err != nil {
		return nil, fmt.Errorf("shaders: no compiled shader %q (run `go generate ./shaders`): %w", name, err)
	}
	return b, nil
}

// Has reports whether a variant of that name is compiled in.
func Has(name string) bool {
	for _, v := range Variants {
		if v.Name == name {
			return true
		}
	}
	for _, c := range Generated {
		if c.Name() == name {
			return true
		}
	}
	return false
}

// GeneratedConfig returns the configuration of the generated module of that name.
func GeneratedConfig(name string) (cm2.Config, bool) {
	for _, c := range Generated {
		if c.Name() == name {
			return c, true
		}
	}
	return cm2.Config{}, false
}

// Sources returns the embedded src/ tree, the sources the committed SPIR-V was
// compiled from.
func Sources() fs.FS {
	sub, err := fs.Sub(src, "src")
	if err != nil {
		panic(err) // src is embedded: it exists
	}
	return sub
}

// Compile runs glslc on v's source from the tree sources (Sources(), or the src
// directory on disk when regenerating) and writes outDir/Name.spv.
func Compile(v Variant, sources fs.FS, outDir string) error {
	tmp, err := os.MkdirTemp("", "gml-shaders-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	entries, err := fs.ReadDir(sources, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := fs.ReadFile(sources, e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	args := []string{"-O", "--target-env=vulkan1.1", "-fshader-stage=comp"}
	for _, d := range v.Defines {
		args = append(args, "-D"+d)
	}
	out := filepath.Join(outDir, v.Name+".spv")
	args = append(args, filepath.Join(tmp, v.Source), "-o", out)
	cmd := exec.Command("glslc", args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("shaders: glslc %s: %v\n%s", v.Name, err, msg)
	}
	return nil
}
