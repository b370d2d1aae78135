package exec

import (
	"strings"
	"testing"
)

func TestImpossibleMakeIsAnError(t *testing.T) {
	i := newInterp(t)
	if r, _ := run(t, i, "kept := 7"); r.Err != nil {
		t.Fatal(r.Err)
	}
	tests := []struct{ name, code, what string }{
		{"constant", "b := make([]byte, 1<<40)\nlen(b)", "make([]uint8, 1099511627776)"},
		{"variable", "n := 1 << 38\nf := make([]float64, n)\nlen(f)", "make([]float64, 274877906944)"},
		{"capacity", "c := make([]int32, 0, 1<<39)\nlen(c)", "make([]int32, 549755813888)"},
		{"map hint", "m := make(map[int64]int64, 1<<40)\nlen(m)", "make(map[int64]int64, 1099511627776)"},
		{"in a function", "func alloc(n int) []byte { return make([]byte, n) }\nlen(alloc(1 << 41))", "make([]uint8, 2199023255552)"},
		{"typed size", "var u uint64 = 1 << 40\nlen(make([]byte, u))", "make([]uint8, 1099511627776)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := run(t, i, tc.code)
			if r.Err == nil {
				t.Fatalf("no error; result %q", text(r))
			}
			if !strings.Contains(r.Err.Value, "cannot allocate") || !strings.Contains(r.Err.Value, tc.what) ||
				!strings.Contains(r.Err.Value, "of memory is available") {
				t.Errorf("error %q does not name %s and the memory available", r.Err.Value, tc.what)
			}
			if r, _ := run(t, i, "kept"); text(r) != "7" {
				t.Errorf("after the allocation: %v %q", r.Err, text(r))
			}
		})
	}
	// Ordinary makes keep working, also with sizes from variables, named types and generics.
	for _, code := range []string{
		"n := 1000\nlen(make([]int, n, 2*n)) + len(make(map[string]int, n)) + cap(make(chan int, n))",
		"type Buf []byte\nlen(make(Buf, 3000))",
		"func Mk[T any](n int) []T { return make([]T, n) }\nlen(Mk[int](5000))",
	} {
		if r, _ := run(t, i, code); r.Err != nil {
			t.Errorf("%q: %v", code, r.Err)
		}
	}
}
