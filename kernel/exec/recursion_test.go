package exec

import (
	"strings"
	"testing"
)

func TestRunawayRecursion(t *testing.T) {
	i := newInterp(t)
	if r, _ := run(t, i, "kept := 41"); r.Err != nil {
		t.Fatal(r.Err)
	}
	tests := []struct{ name, code, fn string }{
		{"direct", "func f(n int) int { return f(n+1) + 1 }\nf(0)", "f"},
		{"mutual", "func even(n int) bool {\n\tif n == 0 {\n\t\treturn true\n\t}\n\treturn odd(n - 1)\n}\nfunc odd(n int) bool { return !even(n - 1) }\neven(-1)", ""}, // even or odd
		{"closure variable", "var fact func(int) int\nfact = func(n int) int { return n * fact(n-1) }\nfact(3)", "fact"},
		{"String through fmt", "import \"fmt\"\ntype T struct{ X int }\nfunc (t T) String() string { return fmt.Sprint(t) }\nfmt.Println(T{1})", "T.String"},
		{"in a goroutine", "import \"time\"\nfunc g(n int) int { return g(n+1) }\ngo func() { g(0) }()\ntime.Sleep(time.Minute)", "g"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := run(t, i, tc.code)
			if r.Err == nil || r.Err.Name != nameStack {
				t.Fatalf("got %v, want a %s error", r.Err, nameStack)
			}
			if !strings.Contains(r.Err.Value, "runaway recursion in "+tc.fn) || !strings.Contains(r.Err.Value, "nested calls") {
				t.Errorf("error %q does not name %s and the depth", r.Err.Value, tc.fn)
			}
			if r, _ := run(t, i, "kept + 1"); r.Err != nil || text(r) != "42" {
				t.Errorf("after the recursion: %v %q", r.Err, text(r))
			}
		})
	}
	// Deep recursion that ends is not stopped.
	if r, _ := run(t, i, "func down(n int) int {\n\tif n == 0 {\n\t\treturn 0\n\t}\n\treturn down(n-1) + 1\n}\ndown(50000)"); r.Err != nil || text(r) != "50000" {
		t.Errorf("down(50000): %v %q", r.Err, text(r))
	}
}

func TestRecursionGuardOnlyInCycles(t *testing.T) {
	i := newInterp(t)
	cells := []string{
		"func leaf(x int) int { return x * 2 }",
		"func caller(x int) int { return leaf(x) + leaf(x+1) }",
		"type V struct{}\nfunc (V) Len() int { return 1 }",
		"apply := func(f func(int) int, x int) int { return f(x) }",
	}
	for _, c := range cells {
		if r, _ := run(t, i, c); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if len(i.guardNames) != 0 {
		t.Errorf("guards in functions that cannot recurse: %v", i.guardNames)
	}
	// A later cell closes a cycle through an earlier function: the new one is guarded.
	if r, _ := run(t, i, "func back(x int) int { return caller(x) }\nfunc leaf(x int) int { return back(x) }"); r.Err != nil {
		t.Fatal(r.Err)
	}
	// caller, compiled again because leaf changed (redefine.go), is in the cycle too.
	if strings.Join(i.guardNames, ",") != "back,leaf,caller" {
		t.Errorf("guarded %v, want back, leaf and caller", i.guardNames)
	}
}

// TestRecursionGuardSurvivesRedefinition checks that a function compiled again because
// a function it calls was redefined keeps its guard.
func TestRecursionGuardSurvivesRedefinition(t *testing.T) {
	i := newInterp(t)
	for _, c := range []string{"func g() int { return 1 }", "func f(n int) int { return f(n+1) + g() }", "func g() int { return 2 }"} {
		if r, _ := run(t, i, c); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if r, _ := run(t, i, "f(0)"); r.Err == nil || r.Err.Name != nameStack || !strings.Contains(r.Err.Value, "runaway recursion in f") {
		t.Fatalf("got %v, want a %s error in f", r.Err, nameStack)
	}
}
