package exec

import (
	"strings"
	"testing"
)

func TestAutoImport(t *testing.T) {
	cases := []struct {
		name  string
		cells []string // run in one fresh interpreter; the last one is checked
		want  string   // text/plain of the last cell, or "error:" + a part of its error
	}{
		{"fmt and math", []string{`fmt.Sprint(math.Sqrt(4))`}, `"2"`},
		{"strings in a func", []string{"func up(s string) string { return strings.ToUpper(s) }", `up("go")`}, `"GO"`},
		{"explicit import wins", []string{"import \"math/rand/v2\"\nrand.IntN(1)"}, "0"},
		{"a variable shadows", []string{`strings := []string{"a"}`, `len(strings)`}, "1"},
		{"declared in the cell", []string{"type sort struct{ N int }\nsort{N: 3}.N"}, "3"},
		{"unknown name stays an error", []string{`nosuchpkg.Foo()`}, "error:undefined: nosuchpkg"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := newInterp(t)
			var r Result
			for _, cell := range c.cells {
				r, _ = run(t, in, cell)
			}
			if want, ok := strings.CutPrefix(c.want, "error:"); ok {
				if r.Err == nil || !strings.Contains(r.Err.Value, want) {
					t.Fatalf("error %+v, want it to contain %q", r.Err, want)
				}
				return
			}
			if r.Err != nil {
				t.Fatalf("cell failed: %s: %s", r.Err.Name, r.Err.Value)
			}
			if got := text(r); got != c.want {
				t.Errorf("result %q, want %q", got, c.want)
			}
		})
	}
}

func TestPackageName(t *testing.T) {
	cases := map[string]string{"fmt": "fmt", "math/rand": "rand", "math/rand/v2": "rand", "gonum.org/v1/gonum/mat": "mat", "v2": "v2"}
	for path, want := range cases {
		if got := packageName(path); got != want {
			t.Errorf("packageName(%q) = %q, want %q", path, got, want)
		}
	}
}
