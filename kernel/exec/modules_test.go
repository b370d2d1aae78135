package exec

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// writeModule writes module path@version with files into a GOPROXY directory.
func writeModule(t *testing.T, proxy, path, version string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(proxy, path, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("list", version+"\n")
	write(version+".info", `{"Version":"`+version+`","Time":"2024-01-01T00:00:00Z"}`)
	write(version+".mod", files["go.mod"])
	f, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for name, text := range files {
		w, err := z.Create(path + "@" + version + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(text))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestGoModules fetches a module the test serves from a file GOPROXY (no network) with
// %go get, imports its packages, refuses one whose requirements conflict with the
// kernel's, and compiles %%go cells whose functions interpreted cells call, with values
// of gml's types passed both ways. It builds plugins with the go toolchain: the first
// run compiles the standard library for plugins (a minute or more).
func TestGoModules(t *testing.T) {
	if testing.Short() {
		t.Skip("builds plugins with the go toolchain")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		if goBin = filepath.Join(runtime.GOROOT(), "bin", "go"); !fileExists(goBin) {
			t.Skip("no go command")
		}
	}
	out, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := strings.TrimSpace(string(out))
	// The plugin workspace resolves gml's whole module graph, which needs the go.mod of
	// every module in it (github.com/ajstarks/svgo's unpruned requirements among them),
	// while a build fetches only the modules it compiles. Fill the cache through the
	// usual GOPROXY before the test serves from the cache alone, as on a fresh machine.
	if out, err := exec.Command(goBin, "list", "-m", "all").CombinedOutput(); err != nil {
		t.Fatalf("go list -m all (filling the module cache with gml's module graph): %v\n%s", err, out)
	}
	proxy := t.TempDir()
	writeModule(t, proxy, "example.com/greet", "v1.0.0", map[string]string{
		"go.mod":         "module example.com/greet\n\ngo 1.21\n",
		"greet.go":       "package greet\n\nimport \"strings\"\n\n// Hello greets.\nfunc Hello(name string) string { return \"hello, \" + name }\n\n// Apply calls f on n.\nfunc Apply(n int, f func(int) int) int { return f(n) }\n\n// Words splits s.\nfunc Words(s string) []string { return strings.Fields(s) }\n",
		"shout/shout.go": "package shout\n\nimport \"strings\"\n\nfunc Loud(s string) string { return strings.ToUpper(s) + \"!\" }\n",
	})
	writeModule(t, proxy, "example.com/needy", "v1.0.0", map[string]string{
		"go.mod":   "module example.com/needy\n\ngo 1.21\n\nrequire gonum.org/v1/gonum v0.99.0\n",
		"needy.go": "package needy\n\nfunc N() int { return 1 }\n",
	})
	writeModule(t, proxy, "gonum.org/v1/gonum", "v0.99.0", map[string]string{
		"go.mod": "module gonum.org/v1/gonum\n\ngo 1.21\n",
		"doc.go": "package gonum\n",
	})
	// The kernel's own module cache, so that plugins see the very files the test binary
	// was built from (their paths are part of a package's identity); the test's modules
	// come from the proxy and are removed again.
	t.Setenv("GOPROXY", "file://"+proxy+",file://"+filepath.Join(cache, "cache", "download"))
	t.Setenv("GOSUMDB", "off")
	t.Cleanup(func() {
		for _, p := range []string{"example.com/greet@v1.0.0", "example.com/needy@v1.0.0", "gonum.org/v1/gonum@v0.99.0",
			"cache/download/example.com/greet", "cache/download/example.com/needy", "cache/download/gonum.org/v1/gonum/@v/v0.99.0.mod",
			"cache/download/gonum.org/v1/gonum/@v/v0.99.0.info", "cache/download/gonum.org/v1/gonum/@v/v0.99.0.zip",
			"cache/download/gonum.org/v1/gonum/@v/v0.99.0.ziphash", "cache/download/gonum.org/v1/gonum/@v/v0.99.0.lock"} {
			p = filepath.Join(cache, p)
			filepath.Walk(p, func(q string, _ os.FileInfo, _ error) error { return os.Chmod(q, 0o755) })
			os.RemoveAll(p)
		}
		list := filepath.Join(cache, "cache/download/gonum.org/v1/gonum/@v/list")
		if b, err := os.ReadFile(list); err == nil {
			os.WriteFile(list, []byte(strings.ReplaceAll(string(b), "v0.99.0\n", "")), 0o644)
		}
	})
	i := newInterp(t)
	runSteps(t, i, []step{
		{code: "%go get example.com/greet@v1.0.0", out: "example.com/greet: ready to import\n"},
		{code: "import \"example.com/greet\"\ngreet.Hello(\"gml\")", result: `"hello, gml"`},
		{code: "greet.Apply(21, func(x int) int { return x * 2 })", result: "42"}, // an interpreted callback
		{code: "import \"example.com/greet/shout\"\nshout.Loud(greet.Words(\"a b\")[1])", result: `"B!"`},
		{code: "%go get example.com/needy@v1.0.0", errName: nameMagic, errHas: "gonum.org/v1/gonum v0.99.0 (the kernel has v0.17.0)"},
		{code: "%%go\nimport \"github.com/gml-dev/gml/tensor\"\n\n// Sum adds 0..n-1 at compiled speed.\nfunc Sum(n int) int {\n\ts := 0\n\tfor i := 0; i < n; i++ {\n\t\ts += i\n\t}\n\treturn s\n}\n\n// Scale returns a tensor with t's values times k.\nfunc Scale(t *tensor.Tensor, k float32) *tensor.Tensor {\n\tout := t.Clone()\n\tfor i, v := range out.Float32s() {\n\t\tout.Float32s()[i] = v * k\n\t}\n\treturn out\n}\n\ntype Point struct{ X, Y float64 }\n\nconst Limit = 10"},
		{code: "Sum(10_000_000)", result: "49999995000000"},
		{code: "x, _ := tensor.FromFloat32s(tensor.Shape{2}, []float32{1, 2})\nScale(x, 3).Float32s()", result: "[]float32{3, 6}"},
		{code: "Point{X: 1}.X + Limit", result: "11"},
		{code: "func twice(n int) int { return 2 * Sum(n) }\ntwice(4)", result: "12"},
		{code: "%%go\nfunc Sum(n int) int { return -n }", result: ""}, // a new version replaces the old
		{code: "twice(4)", result: "-8"},
		{code: "%%go\nfunc Broken() int {\n\treturn undefinedThing\n}", errName: nameCompile, errHas: "cell[13]:3:9: undefined: undefinedThing"},
	})
}

// TestGoToolchainMissing checks the error of %go get and %%go without a go command.
func TestGoToolchainMissing(t *testing.T) {
	t.Setenv("GML_GO", filepath.Join(t.TempDir(), "go"))
	runSteps(t, newInterp(t), []step{
		{code: "%go get example.com/x@v1.0.0", errName: nameMagic, errHas: "does not run"},
		{code: "%%go\nfunc F() int { return 1 }", errName: nameMagic, errHas: "install " + runtime.Version() + ", or point GML_GO at its go"},
	})
}
