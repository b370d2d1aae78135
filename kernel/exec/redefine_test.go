package exec

import (
	"strings"
	"testing"
)

// TestRedefinition covers issue 16's redefinition rows: a redefined function takes
// effect in its earlier callers, a redefined type takes effect for later cells (values
// of the old type keep it), re-running an unchanged cell keeps its types, and a
// declaration that no longer compiles against the new definition is reported.
func TestRedefinition(t *testing.T) {
	i := newInterp(t)
	runSteps(t, i, []step{
		{code: "func g() int { return 1 }\nfunc h() int { return g() * 10 }\nh()", result: "10"},
		{code: "func g() int { return 2 }\nh()", result: "20"},
		{code: "func k() int { return h() + 1 }\nfunc g() int { return 3 }\nk()", result: "31"}, // through h
		{code: "type P struct{ X int }\nfunc (p P) Sum() int { return p.X }\nfunc mk(x int) P { return P{X: x} }\np1 := mk(1)", result: ""},
		{code: "type P struct{ X, Y int }\nP{1, 2}", result: "P{X: 1, Y: 2}"},
		{code: "P{X: 3, Y: 4}.Sum()", result: "3"}, // the method of an earlier cell, on the new P
		{code: "mk(5)", result: "P{X: 5, Y: 0}"},
		{code: "p1", result: "P{X: 1}"}, // the old value keeps its type
		{code: "type P struct{ X, Y int }\np2 := P{1, 2}", result: ""},
		{code: "type P struct{ X, Y int }\np2.Sum()", result: "1"}, // unchanged: same type
		{code: "type Box struct{ In P }\nfunc open(b Box) int { return b.In.X }", result: ""},
		{code: "type P struct{ X, Y, Z int }\nopen(Box{In: P{X: 7}})", result: "7"}, // Box follows P
	})
	r, p := run(t, i, "type P struct{ Y, Z int }") // X is gone: Sum, mk and open break
	if r.Err != nil {
		t.Fatalf("redefining P: %v", r.Err)
	}
	for _, want := range []string{"after the redefinition of P", "P.Sum (cell[4]:2)", "unknown field X"} {
		if !strings.Contains(p.err.String(), want) {
			t.Errorf("stderr %q lacks %q", p.err.String(), want)
		}
	}
}
