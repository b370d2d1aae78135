// Command copy copies the sources of the generic standard packages that cells run from
// source (kernel/exec/stdpkg.go) from GOROOT into kernel/exec/stdsrc, as .go.txt files
// the go tool leaves alone, and records the Go version they come from. It runs through
// `go generate ./kernel/exec`.
//
// Usage: go run ./stdsrc/copy [-o DIR]   (DIR defaults to ./stdsrc)
package main

import (
	"flag"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// packages are copied whole but for tests and skipped files; iter and sync/atomic are
// written by hand in stdsrc, since they rest on the runtime.
var packages = []string{"cmp", "maps", "slices"}

// skipped are files the kernel replaces (kernel/exec/stdpkg.go, runtimeParts): the
// generic pattern-defeating quicksort, which yaegi cannot run.
var skipped = map[string]bool{"slices/zsortanyfunc.go": true, "slices/zsortordered.go": true}

func main() {
	out := flag.String("o", "stdsrc", "directory to write into")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("stdsrc/copy: ")
	root := runtime.GOROOT()
	for _, p := range packages {
		dir := filepath.Join(*out, p)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			log.Fatal(err)
		}
		names, err := filepath.Glob(filepath.Join(root, "src", p, "*.go"))
		if err != nil {
			log.Fatal(err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") || skipped[p+"/"+filepath.Base(name)] {
				continue
			}
			b, err := os.ReadFile(name)
			if err != nil {
				log.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)+".txt"), b, 0o644); err != nil {
				log.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(*out, "VERSION"), []byte(runtime.Version()+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}
}
