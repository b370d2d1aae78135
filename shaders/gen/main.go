// Command gen writes the op codes of tensor's op table (src/opcodes.glsl and
// ../gpu/opcodes.go), compiles every shader variant into spv with glslc, and writes the
// generated modules of shaders.Generated (run by `go generate ./shaders` from the
// shaders directory).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gml-dev/gml/shaders"
	"github.com/gml-dev/gml/shaders/cm2"
)

func main() {
	// The op codes first: the shaders include them, and they compile from the tree on
	// disk, not from the copy embedded in this program when it was built.
	for path, b := range map[string][]byte{"src/opcodes.glsl": shaders.GLSLOpCodes(), "../gpu/opcodes.go": shaders.GoOpCodes()} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	for _, v := range shaders.Variants {
		if err := shaders.Compile(v, os.DirFS("src"), "spv"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	for _, c := range shaders.Generated {
		b, err := cm2.Generate(c)
		if err == nil {
			err = os.WriteFile(filepath.Join("spv", c.Name()+".spv"), b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
