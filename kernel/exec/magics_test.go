package exec

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMagics runs each magic once, in cells the way notebook users write them.
func TestMagics(t *testing.T) {
	i := newInterp(t)
	dir := t.TempDir()
	cases := []struct {
		code    string
		result  string         // substring of text/plain ("" = no value)
		out     *regexp.Regexp // stdout must match
		errName string
	}{
		{code: "x := 3\n!echo there\nx + 1", result: "4", out: regexp.MustCompile(`^there\n$`)},
		{code: "%time y := x * 2", out: regexp.MustCompile(`^CPU times: user .+, sys .+, total .+\nWall time: [0-9.]+ (ns|µs|ms|s)\n$`)},
		{code: "%time x * 10", result: "30", out: regexp.MustCompile(`Wall time: `)},
		{code: "%%time\nz := 0\nfor i := range 1000 {\n\tz += i\n}\nz", result: "499500", out: regexp.MustCompile(`^CPU times: .*\nWall time: `)},
		{code: "%timeit x + 1", out: regexp.MustCompile(`^[0-9.]+ (ns|µs|ms) ± [0-9.]+ (ns|µs|ms) per loop \(mean ± std\. dev\. of 7 runs, [0-9]+ loops each\)\n$`)},
		{code: "%timeit -n 3 -r 2 x + 1", out: regexp.MustCompile(`of 2 runs, 3 loops each\)`)},
		{code: "%%timeit -n 2 -r 1\nw := 0\nw++", out: regexp.MustCompile(`of 1 run, 2 loops each\)`)},
		{code: "t := tensor.New(tensor.F32, 2, 3)\nm := map[string]int{\"a\": 1}\n%who", out: regexp.MustCompile(`^m\tt\tx\ty\tz\n$`)},
		{code: "%whos", result: "t          *tensor.Tensor   f32[2×3] on host"},
		{code: "tape, _ := ag.NewTape(ag.Device(\"cpu\"))\nag.SetTape(tape)\nlin := ag.NewLinear(2, 3)\nout := lin.Forward(ag.FromFloat32s([]int{1, 2}, []float32{1, 2}))\n%whos", result: "out        *ag.Tensor       f32[1×3] on cpu"},
		{code: "%env GML_MAGIC_TEST=on\n!echo $GML_MAGIC_TEST", out: regexp.MustCompile(`^env: GML_MAGIC_TEST=on\non\n$`)},
		{code: "%env GML_MAGIC_TEST", result: `"on"`},
		{code: "import \"os\"\nos.Getenv(\"GML_MAGIC_TEST\")", result: `"on"`},
		{code: "%cd " + dir + "\n!pwd", out: regexp.MustCompile("^" + regexp.QuoteMeta(dir) + "\n" + regexp.QuoteMeta(dir) + "\n$")},
		{code: "%pwd", out: regexp.MustCompile("^" + regexp.QuoteMeta(dir) + "\n$")},
		{code: "%help", result: "%timeit [-n N] [-r R] STATEMENT"},
		{code: "ok := false\n!ok", result: "true"}, // Go: a variable's negation
		{code: "!exit 3", errName: "ShellError"},
		{code: "%nope", errName: nameMagic},
		{code: "%reset -f\n%who", out: regexp.MustCompile(`^reset: .*\nNo variables are defined\.\n$`)},
		{code: "x", errName: nameCompile},
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	for n, c := range cases {
		r, p := run(t, i, c.code)
		switch {
		case c.errName != "" && (r.Err == nil || r.Err.Name != c.errName):
			t.Errorf("cell %d %q: error %v, want %s", n+1, c.code, r.Err, c.errName)
		case c.errName == "" && r.Err != nil:
			t.Errorf("cell %d %q failed: %v", n+1, c.code, r.Err)
		case c.errName == "" && c.result == "" && text(r) != "":
			t.Errorf("cell %d %q: result %q, want none", n+1, c.code, text(r))
		case !strings.Contains(text(r), c.result):
			t.Errorf("cell %d %q: result %q lacks %q", n+1, c.code, text(r), c.result)
		}
		if c.out != nil && !c.out.MatchString(p.out.String()) {
			t.Errorf("cell %d %q: stdout %q does not match %s", n+1, c.code, p.out.String(), c.out)
		}
	}
	os.Unsetenv("GML_MAGIC_TEST")
}

// TestShellStreamsAndStops checks that a ! command's output reaches the front end while
// it runs, and that interrupting the cell stops the command.
func TestShellStreamsAndStops(t *testing.T) {
	i := newInterp(t)
	p := &fakePub{}
	done := make(chan Result)
	go func() { done <- i.Execute(context.Background(), "!echo first; sleep 1; echo second", p) }()
	time.Sleep(500 * time.Millisecond)
	p.mu.Lock()
	early := p.out.String()
	p.mu.Unlock()
	if early != "first\n" {
		t.Errorf("stdout while the command runs = %q, want %q", early, "first\n")
	}
	if r := <-done; r.Err != nil || p.out.String() != "first\nsecond\n" {
		t.Errorf("after the command: %v, stdout %q", r.Err, p.out.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	r := i.Execute(ctx, "!sleep 30", &fakePub{})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("interrupting !sleep 30 took %v", took)
	}
	if r.Err == nil || r.Err.Name != nameInterrupt {
		t.Errorf("interrupted command: %v, want %s", r.Err, nameInterrupt)
	}
}

func TestCompleteMagics(t *testing.T) {
	i := newInterp(t)
	m, start, end := i.Complete("%ti", 3)
	if strings.Join(m, " ") != "%time %timeit" || start != 0 || end != 3 {
		t.Errorf("Complete(%%ti) = %v %d %d", m, start, end)
	}
	m, _, _ = i.Complete("x := 1\n%%g", 10)
	if strings.Join(m, " ") != "%%go" {
		t.Errorf("Complete(%%%%g) = %v", m)
	}
}

// TestTimeitStops interrupts a %timeit whose statement never ends.
func TestTimeitStops(t *testing.T) {
	i := newInterp(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	r := i.Execute(ctx, "%timeit for {}", &fakePub{})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("interrupting %%timeit took %v", took)
	}
	if r.Err == nil || r.Err.Name != nameInterrupt {
		t.Errorf("interrupted %%timeit: %v", r.Err)
	}
	if r, _ := run(t, i, "1+1"); text(r) != "2" {
		t.Errorf("after the interrupt: %v %q", r.Err, text(r))
	}
}
