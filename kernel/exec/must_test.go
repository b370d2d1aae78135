package exec

import (
	"strings"
	"testing"
)

// TestErrorsInCells covers Must, Must2, Check and a last expression that returns an
// error: a failure is an Error naming the call and its place, success shows the value.
func TestErrorsInCells(t *testing.T) {
	i := newInterp(t)
	steps := []step{
		{code: "import \"strconv\"\nfunc bad() (int, error) { return strconv.Atoi(\"x\") }", result: ""},
		{code: "a := Must(strconv.Atoi(\"12\"))\na", result: "12"},
		{code: "a = Must(bad())", errName: nameFailure, errHas: "Error: strconv.Atoi: parsing \"x\": invalid syntax\n  Must(bad()) at cell[3]:1:5"},
		{code: "a", result: "12"}, // a failed Must leaves the variable alone
		{code: "v, err := strconv.Atoi(\"7\")\nb := Must(v, err)\nb", result: "7"},
		{code: "Must(strconv.Atoi(\"9\"))", result: "9"},
		{code: "c := Must(strconv.Atoi(\"2\")) * Must(strconv.Atoi(\"3\"))\nc", result: "6"},
		{code: "p, q := Must2(func() (int, string, error) { return 1, \"a\", nil }())\nq", result: `"a"`},
		{code: "func f(s string) int { return Must(strconv.Atoi(s)) * 2 }\nf(\"4\")", result: "8"},
		{code: "f(\"no\")", errName: nameFailure, errHas: "Must(strconv.Atoi(s)) in f at cell[9]:1:31\n  at cell[10]:1:1"},
		{code: "func g() { Check(strconv.ErrRange) }\ng()", errName: nameFailure, errHas: "Error: value out of range\n  Check(strconv.ErrRange) in g at cell[11]:1:12\n  at cell[11]:2:1"},
		{code: "for _, s := range []string{\"1\", \"x\"} {\n\tn := Must(strconv.Atoi(s))\n\t_ = n\n}", errName: nameFailure, errHas: "Must(strconv.Atoi(s)) in func at cell[12]:2:7"},
		// The last expression's error is the cell's error; a nil error is not shown.
		{code: "bad()", errName: nameFailure, errHas: "Error: strconv.Atoi: parsing \"x\": invalid syntax\n  returned by bad() at cell[13]:1:1"},
		{code: "strconv.Atoi(\"5\")", result: "5"},
		{code: "import \"os\"\nos.Remove(\"/nonexistent/gml-test\")", errName: nameFailure, errHas: "returned by os.Remove(\"/nonexistent/gml-test\") at cell[15]:2:1"},
		{code: "os.Setenv(\"GML_MUST_TEST\", \"1\")", result: ""},
		{code: "import \"errors\"\nerrors.New(\"shown, not raised\")", result: "error: shown, not raised"},
		{code: "import \"fmt\"\ns := fmt.Sprint(1) + fmt.Sprint(Must(strconv.Atoi(\"1\")))", errName: nameCompile, errHas: "cell[18]:2:33: Must(f()) works as the first call of a statement"},
		{code: "func Must(x int) int { return x + 1 }\nMust(1)", result: "2"}, // redefined: no lowering
	}
	for n, s := range steps {
		r, _ := run(t, i, s.code)
		if s.errName != "" {
			if r.Err == nil || r.Err.Name != s.errName || !strings.Contains(strings.Join(r.Err.Traceback, "\n"), s.errHas) {
				t.Errorf("cell %d %q: %v, want %s with %q", n+1, s.code, r.Err, s.errName, s.errHas)
				if r.Err != nil {
					t.Log(strings.Join(r.Err.Traceback, "\n"))
				}
			}
			continue
		}
		if r.Err != nil || text(r) != s.result {
			t.Errorf("cell %d %q: %v %q, want %q", n+1, s.code, r.Err, text(r), s.result)
		}
	}
}
