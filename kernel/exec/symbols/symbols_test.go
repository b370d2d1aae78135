package symbols

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedFilesFresh regenerates the tables into a temporary directory and fails
// when the committed ones differ: run `go generate ./kernel/exec/symbols` to fix it.
func TestGeneratedFilesFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating the symbol tables takes about 20 s")
	}
	tmp := t.TempDir()
	cmd := exec.Command("go", "run", "./gen", "-o", tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, out)
	}
	generated := func(dir string) map[string][]byte {
		m := map[string][]byte{}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "gen_") || e.Name() == "docs.json.gz" {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				m[e.Name()] = b
			}
		}
		return m
	}
	want, have := generated(tmp), generated(".")
	for name, b := range want {
		if !bytes.Equal(b, have[name]) {
			t.Errorf("%s is stale or missing: run go generate ./kernel/exec/symbols", name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is no longer generated: delete it", name)
		}
	}
}

func TestDocLookup(t *testing.T) {
	cases := []struct {
		path, name, want string
	}{
		{"github.com/gml-dev/gml/display", "HTML", "func HTML(s string) Output"},
		{"github.com/gml-dev/gml/display", "Table.Row", "Row appends one row"},
		{"strings", "ToUpper", "func ToUpper(s string) string"},
		{"fmt", "", "package fmt"},
	}
	for _, c := range cases {
		d, ok, err := Doc(c.path, c.name)
		if err != nil || !ok || !strings.Contains(d, c.want) {
			t.Errorf("Doc(%q, %q) = %q, %v, %v; want it to contain %q", c.path, c.name, d, ok, err, c.want)
		}
	}
	if _, ok, _ := Doc("strings", "NoSuchThing"); ok {
		t.Error("Doc found a symbol that does not exist")
	}
	if _, ok := Symbols["github.com/gml-dev/gml/display/display"]["Show"]; !ok {
		t.Error("display.Show is missing from the tables")
	}
}
