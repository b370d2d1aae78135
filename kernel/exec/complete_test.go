package exec

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestComplete(t *testing.T) {
	i := newInterp(t)
	if r, _ := run(t, i, "import (\"strings\"; \"time\")\ntype pt struct{ X, Yval int }\nfunc (p *pt) Scale(k int) { p.X *= k }\np := pt{1, 2}\nd := time.Second\nfunc helperFunc() {}\nvar héllo = 1"); r.Err != nil {
		t.Fatal(r.Err)
	}
	cases := []struct {
		code        string
		cursor      int // -1 = end of code, in code points
		want        []string
		absent      string
		start, end  int
		exactLength bool
	}{
		{code: "strings.ToU", cursor: -1, want: []string{"ToUpper", "ToUpperSpecial"}, start: 8, end: 11, exactLength: true},
		{code: "display.HT", cursor: -1, want: []string{"HTML"}, start: 8, end: 10, exactLength: true},
		{code: "x := p.", cursor: -1, want: []string{"Scale", "X", "Yval"}, start: 7, end: 7, exactLength: true},
		{code: "d.Seco", cursor: -1, want: []string{"Seconds"}, start: 2, end: 6},
		{code: "helper", cursor: -1, want: []string{"helperFunc"}, start: 0, end: 6},
		{code: "fo", cursor: -1, want: []string{"for"}, start: 0, end: 2},
		{code: "ap", cursor: -1, want: []string{"append"}, start: 0, end: 2},
		{code: "stri", cursor: -1, want: []string{"string", "strings"}, start: 0, end: 4},
		{code: "_gml", cursor: -1, absent: "_gmlcell", start: 0, end: 4},
		{code: "é := hél", cursor: -1, want: []string{"héllo"}, start: 5, end: 8},
		{code: "unicode.IsUp", cursor: -1, want: []string{"IsUpper"}, start: 8, end: 12, exactLength: true},
		{code: "strings.ToU + 1", cursor: 11, want: []string{"ToUpper"}, start: 8, end: 11},
	}
	for _, c := range cases {
		cursor := c.cursor
		if cursor < 0 {
			cursor = len([]rune(c.code))
		}
		got, start, end := i.Complete(c.code, cursor)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("Complete(%q) = %v, lacks %q", c.code, got, w)
			}
		}
		if c.exactLength && len(got) != len(c.want) {
			t.Errorf("Complete(%q) = %v, want exactly %v", c.code, got, c.want)
		}
		if c.absent != "" && slices.Contains(got, c.absent) {
			t.Errorf("Complete(%q) offers internal name %q", c.code, c.absent)
		}
		if start != c.start || end != c.end {
			t.Errorf("Complete(%q) span [%d, %d), want [%d, %d)", c.code, start, end, c.start, c.end)
		}
	}
}

func TestInspect(t *testing.T) {
	i := newInterp(t)
	if r, _ := run(t, i, "import \"strings\"\nnums := []int{1, 2}\nfunc add(a, b int) int { return a + b }\ntab := display.NewTable(\"a\")"); r.Err != nil {
		t.Fatal(r.Err)
	}
	cases := []struct {
		code   string
		cursor int
		want   []string
	}{
		{"strings.ToUpper(", 16, []string{"func ToUpper(s string) string", "ToUpper returns s with all Unicode letters mapped to their upper case"}},
		{"display.HTML(x)", 10, []string{"func HTML(s string) Output", "HTML returns an Output"}},
		{"strings", 3, []string{"package strings"}},
		{"sort.Ints(x)", 6, []string{"func Ints(x []int)"}},
		{"n := len(nums)", 8, []string{"func len(v Type) int", "The len built-in function returns the length of v"}},
		{"nums", 4, []string{"nums: []int", "[]int{1, 2}"}},
		{"add(1, 2)", 2, []string{"func add: func(int, int) int"}},
		{"tab", 3, []string{"tab: *display.Table", "Table is an HTML table builder"}},
		{"tab.Row(1)", 6, []string{"func (t *Table) Row(cells ...any) *Table", "Row appends one row"}},
	}
	for _, c := range cases {
		data, found := i.Inspect(c.code, c.cursor, 0)
		if !found {
			t.Errorf("Inspect(%q, %d) found nothing", c.code, c.cursor)
			continue
		}
		s := data["text/plain"].(string)
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("Inspect(%q, %d) = %q, lacks %q", c.code, c.cursor, s, w)
			}
		}
	}
	if _, found := i.Inspect("nothingHere", 3, 0); found {
		t.Error("Inspect found an undefined name")
	}
}

func TestIsComplete(t *testing.T) {
	cases := []struct {
		code, status, indent string
	}{
		{"", "complete", ""},
		{"x := 1", "complete", ""},
		{"import \"fmt\"\nfmt.Println(1)", "complete", ""},
		{"func f() {", "incomplete", "    "},
		{"for i := 0; i < 3; i++ {\n    if i > 1 {", "incomplete", "        "},
		{"x := []int{1,\n", "incomplete", "    "},
		{"s := `raw", "incomplete", ""},
		{"x := 1 +", "incomplete", "    "},
		{"x := 1)", "invalid", ""},
		{"x := := 2", "invalid", ""},
		{"s := \"open", "invalid", ""},
	}
	for _, c := range cases {
		status, indent := IsComplete(c.code)
		if status != c.status || indent != c.indent {
			t.Errorf("IsComplete(%q) = %q, %q; want %q, %q", c.code, status, indent, c.status, c.indent)
		}
	}
}

func TestFormatValue(t *testing.T) {
	long := make([]int, 30)
	var nilBuf *strings.Builder // String on a nil *strings.Builder panics
	cases := []struct {
		v    any
		want string
	}{
		{nil, "<nil>"},
		{"a\"b", `"a\"b"`},
		{[]string(nil), "[]string(nil)"},
		{&struct{ A []int }{[]int{1}}, "&struct{A: []int{1}}"},
		{long, "[]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ... (10 more)}"},
		{[]fmt.Stringer{nilBuf}, "<[]fmt.Stringer: formatting panicked: runtime error: invalid memory address or nil pointer dereference>"},
		{[]string{strings.Repeat("a", 60), strings.Repeat("b", 60)}, "[]string{\n    \"" + strings.Repeat("a", 60) + "\",\n    \"" + strings.Repeat("b", 60) + "\",\n}"},
	}
	for _, c := range cases {
		if got := formatValue(c.v, nil); got != c.want {
			t.Errorf("formatValue(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}
