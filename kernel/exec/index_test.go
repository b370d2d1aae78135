package exec

import (
	"strings"
	"testing"
)

func TestPanicTextsReadAsGo(t *testing.T) {
	i := newInterp(t)
	if r, _ := run(t, i, "xs := []int{1, 2, 3}\nk := 5\ntype T struct{ X int; Y *T }"); r.Err != nil {
		t.Fatal(r.Err)
	}
	tests := []struct {
		code, value string
		line        string // the source line shown under the innermost frame; "" = none
	}{
		{"xs[k]", "runtime error: index out of range [5] with length 3", "xs[k]"},
		{"n := 2\nxs[n*2]", "runtime error: index out of range [4] with length 3", "xs[n*2]"},
		{"xs[-k+4]", "runtime error: index out of range [-1]", "xs[-k+4]"},
		{"s := \"abc\"\ns[k]", "runtime error: index out of range [5] with length 3", "s[k]"},
		{"a := [3]int{}\na[k]", "runtime error: index out of range [5] with length 3", "a[k]"},
		{"xs[1:k]", "runtime error: slice bounds out of range [:5] with capacity 3", "xs[1:k]"},
		{"lo := 2\nxs[lo:1:2]", "runtime error: slice bounds out of range [2:1:]", "xs[lo:1:2]"},
		{"func at(s []int, i int) int { return s[i] }\nat(xs, 4)", "runtime error: index out of range", "func at(s []int, i int) int { return s[i] }"},
		{"var p *T\np.X", "runtime error: invalid memory address or nil pointer dereference", "p.X"},
		{"q := &T{}\nq.Y.X", "runtime error: invalid memory address or nil pointer dereference", ""},
		{"var ip *int\n*ip + 1", "runtime error: invalid memory address or nil pointer dereference", "*ip + 1"},
		{"var f func()\nf()", "runtime error: invalid memory address or nil pointer dereference", "f()"},
		{"var e error\ne.Error()", "runtime error: invalid memory address or nil pointer dereference", "e.Error()"},
		{"type I interface{ M() }\nvar ii I\nii.M()", "runtime error: invalid memory address or nil pointer dereference", "ii.M()"},
		{"func (t *T) Get() int { return t.X }\nvar tp *T\ntp.Get()", "runtime error: invalid memory address or nil pointer dereference", "func (t *T) Get() int { return t.X }"},
		{"var v any = \"s\"\nv.(int)", "interface conversion: interface {} is string, not int", "v.(int)"},
	}
	for _, tc := range tests {
		r, _ := run(t, i, tc.code)
		if r.Err == nil || r.Err.Name != namePanic {
			t.Errorf("%q: got %v, want a panic", tc.code, r.Err)
			continue
		}
		if r.Err.Value != tc.value {
			t.Errorf("%q: value %q, want %q", tc.code, r.Err.Value, tc.value)
		}
		tb := strings.Join(r.Err.Traceback, "\n")
		if shown := strings.Contains(tb, "\n    "+tc.line+"\n"); tc.line != "" && !shown {
			t.Errorf("%q: the traceback does not show the line %q:\n%s", tc.code, tc.line, tb)
		}
		if tc.line == "" && strings.Count(tb, "\n    ") > 0 {
			t.Errorf("%q: the traceback shows a line although yaegi's position is not trusted:\n%s", tc.code, tb)
		}
	}
}
