package exec

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gml-dev/gml/runtime"
	goruntime "runtime"
)

// step is one cell of a scenario and what it must produce.
type step struct {
	code    string
	result  string // text/plain of the value; "" = no value
	out     string // stdout ("" = not checked)
	errName string // Error.Name; "" = must succeed
	errHas  string // substring of the error's traceback
}

func TestExecuteScenarios(t *testing.T) {
	scenarios := []struct {
		name  string
		steps []step
	}{
		{"mixed declarations and statements", []step{
			{code: "import \"fmt\"\nfunc sq(x int) int { return x * x }\ny := sq(4)\nfmt.Println(y)\ny + 1", result: "17", out: "16\n"},
			{code: "x := 3\nfunc double() int { return x * 2 }\nvar z = double()\nz", result: "6"},
		}},
		{"state persists and redefinition works", []step{
			{code: "func f() int { return 1 }\nf()", result: "1"},
			{code: "func f() string { return \"two\" }\nf()", result: `"two"`},
			{code: "var v = 1", result: ""},
			{code: "var v = \"s\"\nv", result: `"s"`},
			{code: "w := 1.5\nw", result: "1.5"},
			{code: "n := 1\nfunc getN() int { return n }", result: ""},
			{code: "n := 5\ngetN()", result: "5"},
			{code: "n := \"now a string\"\nn", result: `"now a string"`},
			{code: "a, b := 1, 2", result: ""},
			{code: "a, b := b, a\n[]int{a, b}", result: "[]int{2, 1}"},
			{code: "w", result: "1.5"},
			{code: "for i := 0; i < 3; i++ {\n\tw := i\n\t_ = w\n}\nif true {\n\tw := \"block\"\n\t_ = w\n}\nw", result: "1.5"},
		}},
		{"loop variables are per iteration", []step{
			{code: "for i := 0; i < 2; i++ {\n}", result: ""}, // leaves an i behind in yaegi's globals
			{code: "import (\"sync\"; \"time\")\nvar wg sync.WaitGroup\nsq := make([]int, 4)\nfor i := 0; i < 4; i++ {\n\twg.Add(1)\n\tgo func() {\n\t\tdefer wg.Done()\n\t\ttime.Sleep(10 * time.Millisecond)\n\t\tsq[i] = i * i\n\t}()\n}\nwg.Wait()\nsq", result: "[]int{0, 1, 4, 9}"},
			{code: "var fs []func() int\nfor i := 0; i < 3; i++ {\n\tfs = append(fs, func() int { return i })\n}\n[]int{fs[0](), fs[1](), fs[2]()}", result: "[]int{0, 1, 2}"},
			{code: "var gs []func() string\nfor _, s := range []string{\"a\", \"b\"} {\n\tgs = append(gs, func() string { return s })\n}\ngs[0]() + gs[1]()", result: `"ab"`},
			{code: "var ps []*int\nfor i := 0; i < 2; i++ { ps = append(ps, &i) }\n*ps[0] + *ps[1]", result: "1"},
			{code: "n := 0\nfor i := 0; i < 10; i++ {\n\tif i == 2 { i += 5 }\n\tn++\n}\nn", result: "5"},
			{code: "m := 0\nfor i := 0; ; i++ {\n\tif i == 3 {\n\t\tbreak\n\t}\n\tm++\n}\nfor ; m < 5; {\n\tm++\n}\nfor ;; {\n\tbreak\n}\nif k := m; k > 0 {\n\tm++\n}\nswitch k := m; {\ncase k > 5:\n\tm = -m\n}\nm", result: "-6"},
		}},
		{"results", []step{
			{code: "import \"fmt\"\nfmt.Println(\"x\")", result: "", out: "x\n"},
			{code: "func none() {}\nnone()", result: ""},
			{code: "func two() (int, error) { return 1, nil }\ntwo()", result: "1"},
			{code: "func three() (int, string, error) { return 1, \"a\", nil }\nthree()", result: "(1, \"a\")"},
			{code: "func pair() (int, any) { return 1, nil }\npair()", result: "(1, <nil>)"},
			{code: "import \"errors\"\nerrors.New(\"bad\")", result: "error: bad"},
			{code: "map[string]int{\"b\": 2, \"a\": 1}", result: `map[string]int{"a": 1, "b": 2}`},
			{code: "type P struct{ X, Y int }\n[]P{{1, 2}}", result: "[]P{P{X: 1, Y: 2}}"},
			{code: "type Q struct{ P P; Name string }\n&Q{P{3, 4}, \"q\"}", result: `&Q{P: P{X: 3, Y: 4}, Name: "q"}`},
			{code: "import \"time\"\ntime.Duration(1500) * time.Millisecond", result: "1.5s"},
			{code: "x := 1\nx++", result: ""},
		}},
		{"imports may be repeated", []step{
			{code: "import (\"fmt\"; \"os\")\nfmt.Fprint(os.Stdout, \"a\")", out: "a"},
			{code: "import \"fmt\"\nfmt.Print(\"b\")", out: "b"},
			{code: "import (\n\t\"fmt\"\n\t\"strings\"\n)\nfmt.Print(strings.ToUpper(\"c\"))", out: "C"},
			{code: "import \"github.com/gml-dev/gml/display\"\ndisplay.Text(\"d\")", result: "d"},
			{code: "import str \"strings\"\nstr.Repeat(\"e\", 2)", result: `"ee"`},
			{code: "package main\n\nimport \"fmt\"\n\nfunc hello() string { return fmt.Sprint(\"f\") }\nhello()", result: `"f"`},
		}},
		{"facts about yaegi", []step{
			{code: "func Max[T int | float64](a, b T) T {\n\tif a > b { return a }\n\treturn b\n}\nMax(3, 4)", result: "4"},
			{code: "type C struct{ n int }\nfunc (c *C) Inc() { c.n++ }\nc := &C{}\nc.Inc()\nc.Inc()\nc.n", result: "2"},
			{code: "import \"sort\"\ns := []int{3, 1, 2}\nsort.Slice(s, func(a, b int) bool { return s[a] < s[b] })\ns", result: "[]int{1, 2, 3}"},
			{code: "import \"os\"\nos.Exit(3)", errName: namePanic, errHas: "os.Exit(3)"},
		}},
		{"faults", []step{
			{code: "q := 41", result: ""},
			{code: "func f(a []int) int {\n\treturn a[5]\n}\nf([]int{1})", errName: namePanic, errHas: "panic: runtime error: index out of range\n  in f at cell[2]:2:9"},
			{code: "import \"fmt\"\nfmt.Println(q)\nfmt.Println(zz)", errName: nameCompile, errHas: "cell[3]:3:13: undefined: zz"},
			{code: "if true {\n\tq = 1\n", errName: nameCompile, errHas: "cell[4]:1:9: unclosed {"},
			{code: "done := make(chan bool)\ngo func() {\n\tdefer func() { done <- true }()\n\tpanic(\"in goroutine\")\n}()\n<-done\nselect {}", errName: nameGoPanic, errHas: "goroutine started in cell[5]: panic: in goroutine"},
			{code: "q + 1", result: "42"},
			{code: "panic(\"boom\")", errName: namePanic, errHas: "at cell[7]:1:1"},
			{code: "import \"example.com/nothing\"", errName: nameCompile, errHas: `cell[8]:1:8: cannot import "example.com/nothing"`},
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			i := newInterp(t)
			for n, s := range sc.steps {
				r, p := run(t, i, s.code)
				switch {
				case s.errName == "" && r.Err != nil:
					t.Fatalf("cell %d %q failed: %v\n%s", n+1, s.code, r.Err, strings.Join(r.Err.Traceback, "\n"))
				case s.errName != "" && (r.Err == nil || r.Err.Name != s.errName):
					t.Fatalf("cell %d %q: error %v, want %s", n+1, s.code, r.Err, s.errName)
				case s.errName != "" && !strings.Contains(strings.Join(r.Err.Traceback, "\n"), s.errHas):
					t.Fatalf("cell %d %q: traceback %q lacks %q", n+1, s.code, r.Err.Traceback, s.errHas)
				}
				if s.errName == "" && text(r) != s.result {
					t.Errorf("cell %d %q: result %q, want %q", n+1, s.code, text(r), s.result)
				}
				if s.out != "" && p.out.String() != s.out {
					t.Errorf("cell %d %q: stdout %q, want %q", n+1, s.code, p.out.String(), s.out)
				}
			}
		})
	}
}

func TestGoroutinePanicAfterCellEnds(t *testing.T) {
	i := newInterp(t)
	r, _ := run(t, i, "import \"time\"\ngo func() {\n\ttime.Sleep(50 * time.Millisecond)\n\tpanic(\"late\")\n}()")
	if r.Err != nil {
		t.Fatalf("first cell: %v", r.Err)
	}
	time.Sleep(200 * time.Millisecond)
	r, p := run(t, i, "1")
	if r.Err != nil || text(r) != "1" {
		t.Fatalf("second cell: %v %q", r.Err, text(r))
	}
	if !strings.Contains(p.err.String(), "goroutine started in cell[1]: panic: late") {
		t.Errorf("late goroutine panic not reported on stderr: %q", p.err.String())
	}
}

func TestInterrupt(t *testing.T) {
	spin := func() error {
		for runtime.Interrupted() == nil {
			time.Sleep(time.Millisecond)
		}
		return runtime.Interrupted()
	}
	i, err := New(WithSymbols(map[string]map[string]reflect.Value{"example.com/lib/lib": {"Spin": reflect.ValueOf(spin)}}))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := run(t, i, "kept := 7"); r.Err != nil {
		t.Fatal(r.Err)
	}
	for _, code := range []string{"for {\n}", "import \"example.com/lib\"\nlib.Spin()"} {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(200 * time.Millisecond)
			cancel()
		}()
		start := time.Now()
		r := i.Execute(ctx, code, &fakePub{})
		if took := time.Since(start); took > 1200*time.Millisecond {
			t.Errorf("%q: interrupt took %v", code, took)
		}
		if r.Err == nil || r.Err.Name != nameInterrupt {
			t.Errorf("%q: got %v, want an interrupt", code, r.Err)
		}
		if r, _ := run(t, i, "kept"); text(r) != "7" {
			t.Errorf("state lost after interrupting %q: %v %q", code, r.Err, text(r))
		}
	}
}

func TestOutputStreamsWhileRunning(t *testing.T) {
	i := newInterp(t)
	p := &fakePub{}
	done := make(chan Result)
	go func() {
		done <- i.Execute(context.Background(), "import (\"fmt\"; \"os\"; \"time\")\nfmt.Print(\"partial\")\nos.Stdout.Write([]byte(\" raw\\n\"))\nfmt.Fprintln(os.Stderr, \"to stderr\")\ntime.Sleep(600 * time.Millisecond)\nprintln(\"builtin\")", p)
	}()
	time.Sleep(300 * time.Millisecond)
	p.mu.Lock()
	early := p.out.String()
	p.mu.Unlock()
	if early != "partial raw\n" {
		t.Errorf("stdout while the cell runs = %q, want %q", early, "partial raw\n")
	}
	if r := <-done; r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := p.out.String(); got != "partial raw\nbuiltin\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := p.err.String(); got != "to stderr\n" {
		t.Errorf("stderr = %q", got)
	}
}

func TestStdinAndInput(t *testing.T) {
	i := newInterp(t)
	cases := []struct {
		code, want string
		inputs     []string
		errName    string
	}{
		{code: "import \"fmt\"\nvar s string\nfmt.Scanln(&s)\ns", want: `"hello"`, inputs: []string{"hello"}},
		{code: "import (\"bufio\"; \"os\")\nline, _ := bufio.NewReader(os.Stdin).ReadString('\\n')\nline", want: `"a b\n"`, inputs: []string{"a b"}},
		{code: "name, err := display.Input(\"name? \")\nname", want: `"Ann"`, inputs: []string{"Ann"}},
		{code: "_, err := display.Input(\"x\")\nerr", want: "error: stdin is not allowed"},
	}
	for _, c := range cases {
		p := &fakePub{inputs: c.inputs}
		r := i.Execute(context.Background(), c.code, p)
		if r.Err != nil || text(r) != c.want {
			t.Errorf("%q: %v %q, want %q", c.code, r.Err, text(r), c.want)
		}
	}
}

func TestRichResults(t *testing.T) {
	i := newInterp(t)
	cases := []struct {
		code, mime, want string
	}{
		{"display.HTML(\"<b>hi</b>\")", "text/html", "<b>hi</b>"},
		{"type R struct{}\nfunc (R) MIMEBundle() map[string]any { return map[string]any{\"text/markdown\": \"*r*\", \"text/plain\": \"r\"} }\nR{}", "text/markdown", "*r*"},
		{"type S struct{}\nfunc (S) String() string { return \"an S\" }\nS{}", "text/plain", "an S"},
	}
	for _, c := range cases {
		r, _ := run(t, i, c.code)
		if r.Err != nil || r.Data[c.mime] != c.want {
			t.Errorf("%q: %v %v, want %s = %q", c.code, r.Err, r.Data, c.mime, c.want)
		}
	}
	if r, _ := run(t, i, "rt.Devices()"); r.Err != nil || !strings.Contains(fmt.Sprint(r.Data["text/html"]), "<table>") {
		t.Errorf("rt.Devices() does not render as a table: %v %v", r.Err, r.Data)
	}
	r, p := run(t, i, "display.Show(display.Markdown(\"# T\"), R{})\nh := display.NewDisplay(display.Text(\"a\"))\nh.Update(display.Text(\"b\"))")
	if r.Err != nil || len(p.displays) != 4 || !p.updates[3] || p.displays[0]["text/markdown"] != "# T" || p.displays[1]["text/markdown"] != "*r*" {
		t.Errorf("display calls: %v %v %v", r.Err, p.displays, p.updates)
	}
}

// TestFailedCompileLeavesNoTrace checks that a cell that does not compile leaves no
// half-made symbols behind (yaegi would panic on them later), that yaegi's "definition
// loop" message is replaced by the undefined name, and that compile errors point at the
// right column.
func TestFailedCompileLeavesNoTrace(t *testing.T) {
	i := newInterp(t)
	steps := []step{
		{code: "y := undefinedThing + 1", errName: nameCompile, errHas: "cell[1]:1:6: undefined: undefinedThing"},
		{code: "var q = zz", errName: nameCompile, errHas: "cell[2]:1:9: undefined: zz"},
		{code: "type T struct{ A Undef }", errName: nameCompile, errHas: "cell[3]:1:18: undefined: Undef"},
		{code: "y := 1\ny = zz", errName: nameCompile, errHas: "cell[4]:2:5: undefined: zz"},
		{code: "func f() int { return \"s\" }", errName: nameCompile, errHas: "cell[5]:1:23: cannot use"},
		{code: "zz := 5\nzz", result: "5"},
		{code: "q := 2\nq + zz", result: "7"},
		{code: "type T struct{ A int }\nT{A: 3}.A", result: "3"},
	}
	for n, s := range steps {
		r, _ := run(t, i, s.code)
		if s.errName != "" {
			if r.Err == nil || r.Err.Name != s.errName || !strings.Contains(strings.Join(r.Err.Traceback, "\n"), s.errHas) {
				t.Errorf("cell %d %q: %v, want %s containing %q", n+1, s.code, r.Err, s.errName, s.errHas)
			}
			continue
		}
		if r.Err != nil || text(r) != s.result {
			t.Errorf("cell %d %q: %v %q, want %q", n+1, s.code, r.Err, text(r), s.result)
		}
	}
}

// TestRedeclaredGlobalsDoNotPileUp re-runs `buf := make([]byte, 1<<20)`: each run must
// reuse the global, not keep the old buffer alive in a new interpreter slot.
func TestRedeclaredGlobalsDoNotPileUp(t *testing.T) {
	i := newInterp(t)
	for k := 0; k < 64; k++ {
		if r, _ := run(t, i, "buf := make([]byte, 1<<20)\nlen(buf)"); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	if ms.HeapAlloc > 32<<20 {
		t.Errorf("live heap %d MiB after 64 cells re-declaring a 1 MiB buffer", ms.HeapAlloc>>20)
	}
}
