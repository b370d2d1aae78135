package exec

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runSteps runs the steps in one interpreter: each must give its result, or fail with
// its error name and a traceback containing errHas.
func runSteps(t *testing.T, i *Interp, steps []step) {
	t.Helper()
	for n, s := range steps {
		r, p := run(t, i, s.code)
		tb := ""
		if r.Err != nil {
			tb = strings.Join(r.Err.Traceback, "\n")
		}
		switch {
		case s.errName != "" && (r.Err == nil || r.Err.Name != s.errName || !strings.Contains(tb, s.errHas)):
			t.Errorf("step %d %q: %v\n%s\nwant %s with %q", n+1, s.code, r.Err, tb, s.errName, s.errHas)
		case s.errName == "" && r.Err != nil:
			t.Errorf("step %d %q failed: %v\n%s\nstderr: %s", n+1, s.code, r.Err, tb, p.err.String())
		case s.errName == "" && text(r) != s.result:
			t.Errorf("step %d %q: result %q, want %q", n+1, s.code, text(r), s.result)
		}
		if s.out != "" && p.out.String() != s.out {
			t.Errorf("step %d %q: stdout %q, want %q", n+1, s.code, p.out.String(), s.out)
		}
		if strings.Contains(p.err.String(), "nil type") {
			t.Errorf("step %d %q: the compiler's log leaked to stderr: %q", n+1, s.code, p.err.String())
		}
	}
}

// TestModernGo covers the Go 1.21+ constructs of issue 16's table that yaegi v0.16.1
// lacks and the kernel lowers: each row as a scenario.
func TestModernGo(t *testing.T) {
	scenarios := []struct {
		name  string
		steps []step
	}{
		{"range over an integer", []step{
			{code: "s := 0\nfor i := range 5 {\n\ts += i\n}\ns", result: "10"},
			{code: "n := 4\nc := 0\nfor range n {\n\tc++\n}\nc", result: "4"},
			{code: "var fs []func() int\nfor i := range 3 {\n\tfs = append(fs, func() int { return i })\n}\nfs[0]() + 10*fs[1]() + 100*fs[2]()", result: "210"},
			{code: "k := 0\nfor i := range 3 {\n\ti += 10 // does not change the iteration\n\tk += i\n}\nk", result: "33"},
			{code: "type Count uint8\nvar m Count = 3\nfunc last() Count {\n\tvar x Count\n\tfor i := range m {\n\t\tx = i\n\t}\n\treturn x\n}\nlast()", result: "2"},
			{code: "func sum(n int) int {\n\tt := 0\n\tfor i := range n {\n\t\tt += i\n\t}\n\treturn t\n}\nsum(100)", result: "4950"},
			{code: "for i := range len(\"abc\") { fmt.Print(i) }", out: "012"},
		}},
		{"range over a function", []step{
			{code: "func gen(yield func(int) bool) {\n\tfor i := 0; i < 5; i++ {\n\t\tif !yield(i * 10) {\n\t\t\treturn\n\t\t}\n\t}\n}", result: ""},
			{code: "u := 0\nfor v := range gen {\n\tif v == 30 {\n\t\tbreak\n\t}\n\tif v == 10 {\n\t\tcontinue\n\t}\n\tu += v\n}\nu", result: "20"},
			{code: "func pairs(yield func(string, int) bool) {\n\t_ = yield(\"a\", 1) && yield(\"b\", 2)\n}\nfunc find(k string) int {\n\tfor key, val := range pairs {\n\t\tif key == k {\n\t\t\treturn val\n\t\t}\n\t}\n\treturn -1\n}\nfind(\"b\")", result: "2"},
			{code: "func twice(yield func() bool) { _ = yield() && yield() }\nw := 0\nfor range twice { w++ }\nw", result: "2"},
			{code: "outer:\nfor i := range 3 {\n\tfor v := range gen {\n\t\tif v > 10 { continue outer }\n\t\tif i == 2 { break outer }\n\t\tfmt.Print(i, v, \" \")\n\t}\n}", out: "0 0 0 10 1 0 1 10 "},
			{code: "var got []int\nfor v := range gen {\n\tgot = append(got, v)\n}\ngot", result: "[]int{0, 10, 20, 30, 40}"},
			{code: "func firstOver(seq func(func(int) bool), n int) (v int, ok bool) {\n\tfor x := range seq {\n\t\tif x > n {\n\t\t\treturn x, true\n\t\t}\n\t}\n\treturn\n}\nfirstOver(gen, 15)", result: "(20, true)"},
			{code: "func bad(yield func(int) bool) { yield(1); yield(2) }\nfor range bad { break }", errName: namePanic, errHas: "range function continued iteration"},
			{code: "func g() {\n\tfor v := range gen {\n\t\tdefer fmt.Println(v)\n\t}\n}", errName: nameCompile, errHas: "defer in the body of a range-over-function loop"},
		}},
		{"min, max and clear", []step{
			{code: "min(3, 1, 2)", result: "1"},
			{code: "max(1, 2.5)", result: "2.5"},
			{code: "x := 2.5\nmin(1, x)", result: "1"},
			{code: "m := max(-1, -2)\nm", result: "-1"},
			{code: "max(\"a\", \"b\")", result: `"b"`},
			{code: "import \"math\"\nmath.IsNaN(min(1, math.NaN()))", result: "true"},
			{code: "mp := map[string]int{\"a\": 1}\nclear(mp)\nlen(mp)", result: "0"},
			{code: "sl := []int{1, 2}\nclear(sl)\nsl", result: "[]int{0, 0}"},
		}},
		{"generic inference", []step{
			{code: "func Map[T, U any](xs []T, f func(T) U) []U {\n\tvar r []U\n\tfor _, x := range xs {\n\t\tr = append(r, f(x))\n\t}\n\treturn r\n}\nMap([]int{1, 2}, func(i int) string { return fmt.Sprint(i * 2) })", result: `[]string{"2", "4"}`},
			{code: "ys := Map([]int{1}, func(i int) float64 { return float64(i) / 2 })\nys", result: "[]float64{0.5}"},
			{code: "func Sum[T int | float64](xs ...T) T {\n\tvar s T\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}\nSum(1.5, 2.5)", result: "4"},
			{code: "Sum(1, 2.5)", result: "3.5"},
			{code: "total := Sum(1, 2, 3)\ntotal", result: "6"},
			{code: "func Last[S ~[]E, E any](s S) E { return s[len(s)-1] }\nLast([]string{\"a\", \"z\"})", result: `"z"`},
			{code: "func Keys[K comparable, V any](m map[K]V) []K {\n\tvar ks []K\n\tfor k := range m {\n\t\tks = append(ks, k)\n\t}\n\treturn ks\n}\nlen(Keys(map[string]bool{\"a\": true}))", result: "1"},
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { runSteps(t, newInterp(t), sc.steps) })
	}
}

// TestGenericStdPackages runs slices, maps, cmp, iter and sync/atomic's Pointer, which
// cells get from source (stdpkg.go), with and without an import line.
func TestGenericStdPackages(t *testing.T) {
	runSteps(t, newInterp(t), []step{
		{code: "xs := []int{3, 1, 2}\nslices.Sort(xs)\nxs", result: "[]int{1, 2, 3}"}, // imported automatically
		{code: "import \"slices\"\nslices.Contains(xs, 2)", result: "true"},
		{code: "slices.Index(xs, 3)", result: "2"},
		{code: "ys := slices.Clone(xs)\nslices.Reverse(ys)\nys", result: "[]int{3, 2, 1}"},
		{code: "slices.Max(xs) + slices.Min(xs)", result: "4"},
		{code: "slices.IndexFunc(xs, func(v int) bool { return v > 1 })", result: "1"},
		{code: "slices.Insert(xs, 1, 10, 11)", result: "[]int{1, 10, 11, 2, 3}"},
		{code: "type P struct{ Name string; Age int }\nps := []P{{\"b\", 2}, {\"a\", 1}}\nslices.SortFunc(ps, func(a, b P) int { return cmp.Compare(a.Age, b.Age) })\nps[0].Name", result: `"a"`},
		{code: "slices.BinarySearch(xs, 2)", result: "(1, true)"},
		{code: "fs := []float64{2, math.NaN(), 1}\nslices.Sort(fs)\nmath.IsNaN(fs[0]) && fs[1] == 1", result: "true"},
		{code: "import \"maps\"\nm := map[string]int{\"b\": 2, \"a\": 1}\nkeys := slices.Sorted(maps.Keys(m))\nkeys", result: `[]string{"a", "b"}`},
		{code: "maps.Clone(m)", result: `map[string]int{"a": 1, "b": 2}`},
		{code: "maps.Equal(m, map[string]int{\"a\": 1, \"b\": 2})", result: "true"},
		{code: "n := 0\nfor _, v := range maps.All(m) {\n\tn += v\n}\nn", result: "3"},
		{code: "slices.Sorted(maps.Values(m))", result: "[]int{1, 2}"},
		{code: "import \"iter\"\nfunc fib(n int) iter.Seq[int] {\n\treturn func(yield func(int) bool) {\n\t\ta, b := 0, 1\n\t\tfor range n {\n\t\t\tif !yield(a) {\n\t\t\t\treturn\n\t\t\t}\n\t\t\ta, b = b, a+b\n\t\t}\n\t}\n}\nslices.Collect(fib(8))", result: "[]int{0, 1, 1, 2, 3, 5, 8, 13}"},
		{code: "next, stop := iter.Pull(fib(5))\nv1, _ := next()\nv2, _ := next()\nv3, _ := next()\nstop()\n[]int{v1, v2, v3}", result: "[]int{0, 1, 1}"},
		{code: "total := 0\nfor v := range fib(6) {\n\ttotal += v\n}\ntotal", result: "12"},
		{code: "var chunks [][]int\nfor c := range slices.Chunk([]int{1, 2, 3}, 2) {\n\tchunks = append(chunks, c)\n}\nchunks", result: "[][]int{[]int{1, 2}, []int{3}}"},
		{code: "func firstN[T any](seq iter.Seq[T], n int) []T {\n\tvar out []T\n\tfor v := range seq {\n\t\tif len(out) == n {\n\t\t\tbreak\n\t\t}\n\t\tout = append(out, v)\n\t}\n\treturn out\n}\nfirstN(slices.Values([]int{1, 2, 3}), 2)", result: "[]int{1, 2}"},
		{code: "type Bag struct{ items []string }\nfunc (b *Bag) All() iter.Seq2[int, string] {\n\treturn func(yield func(int, string) bool) {\n\t\tfor i, s := range b.items {\n\t\t\tif !yield(i, s) {\n\t\t\t\treturn\n\t\t\t}\n\t\t}\n\t}\n}\nout := \"\"\nfor i, s := range (&Bag{items: []string{\"x\", \"y\"}}).All() {\n\tout += fmt.Sprint(i) + s\n}\nout", result: `"0x1y"`},
		{code: "cmp.Compare(1, 2) + cmp.Compare(\"b\", \"a\")", result: "0"},
		{code: "import \"sync/atomic\"\nvar ptr atomic.Pointer[string]\ns := \"hi\"\nptr.Store(&s)\n*ptr.Load()", result: `"hi"`},
		{code: "var cnt atomic.Int64\ncnt.Add(5)\ncnt.Load()", result: "5"},
		{code: "atomic.AddInt32(new(int32), 3)", result: "3"},
		{code: "func slices() int { return 1 }", errName: "", result: ""}, // a cell may still use the name
	})
}

// TestStdSourcesFresh checks that stdsrc holds the standard files of the Go version it
// records (regenerate with `go generate ./kernel/exec`).
func TestStdSourcesFresh(t *testing.T) {
	v, err := os.ReadFile("stdsrc/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(v)) != runtime.Version() {
		t.Skipf("stdsrc is from %s, this is %s", strings.TrimSpace(string(v)), runtime.Version())
	}
	for _, p := range []string{"cmp", "maps", "slices"} {
		names, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", p, "*.go"))
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") || strings.HasPrefix(filepath.Base(n), "zsort") {
				continue // zsort*.go: replaced by the kernel's sorting
			}
			want, _ := os.ReadFile(n)
			got, err := os.ReadFile(filepath.Join("stdsrc", p, filepath.Base(n)+".txt"))
			if err != nil || string(got) != string(want) {
				t.Errorf("stdsrc/%s/%s.txt is stale or missing: run go generate ./kernel/exec", p, filepath.Base(n))
			}
		}
	}
}
