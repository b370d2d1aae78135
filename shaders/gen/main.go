// Command gen compiles every shader variant into ../spv (run by `go generate ./shaders`
// from the shaders directory).
package main

import (
	"fmt"
	"os"

	"github.com/gml-dev/gml/shaders"
)

func main() {
	for _, v := range shaders.Variants {
		if err := shaders.Compile(v, "spv"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
