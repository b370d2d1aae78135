package symbols

import (
	"bytes"
	"compress/gzip"
	_ "embed" // docs.json.gz
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync"
)

//go:generate go run ./gen

// Symbols holds the generated tables: "import/path/name" to exported symbol, in the form
// yaegi's Interpreter.Use expects.
var Symbols = map[string]map[string]reflect.Value{}

// Preimport is a package imported into every kernel under Name.
type Preimport struct {
	Name, Path string
}

//go:embed docs.json.gz
var docsGz []byte

var (
	docsOnce sync.Once
	docs     map[string]map[string]string
	docsErr  error
)

// Doc returns the declaration and doc comment of symbol name ("Func", "Type",
// "Type.Method", or "" for the package) in the package at importPath, when embedded.
func Doc(importPath, name string) (string, bool, error) {
	docsOnce.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(docsGz))
		if err != nil {
			docsErr = fmt.Errorf("symbols: reading embedded docs: %w", err)
			return
		}
		js, err := io.ReadAll(zr)
		if err != nil {
			docsErr = fmt.Errorf("symbols: reading embedded docs: %w", err)
			return
		}
		if err := json.Unmarshal(js, &docs); err != nil {
			docsErr = fmt.Errorf("symbols: decoding embedded docs: %w", err)
		}
	})
	if docsErr != nil {
		return "", false, docsErr
	}
	d, ok := docs[importPath][name]
	return d, ok, nil
}
