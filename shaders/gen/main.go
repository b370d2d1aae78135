// Command gen compiles every shader variant into ../spv with glslc and writes the
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
	for _, v := range shaders.Variants {
		if err := shaders.Compile(v, "spv"); err != nil {
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
