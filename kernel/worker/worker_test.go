package worker

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gml-dev/gml/kernel"
)

// The test binary is also the worker: with GML_WORKER_TEST set, TestMain serves a fake
// executor instead of running tests.
func TestMain(m *testing.M) {
	if os.Getenv("GML_WORKER_TEST") != "" {
		if err := Serve(func(h Hooks) (kernel.Executor, error) { return fakeExec{h}, nil }); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeExec runs a tiny command language in the worker:
//
//	value X   X is the result            order     stdout, display, stdout, stderr
//	crash     a fatal runtime error      stuck     ignores interrupts, tells the supervisor
//	sleep     waits for the interrupt
type fakeExec struct{ h Hooks }

func (f fakeExec) Execute(ctx context.Context, code string, pub kernel.Publisher) kernel.Result {
	cmd, arg, _ := strings.Cut(code, " ")
	switch cmd {
	case "value":
		return kernel.Result{Data: map[string]any{"text/plain": arg}}
	case "order":
		fmt.Print("before ")
		pub.Display(map[string]any{"text/plain": "shown"}, nil, "", false)
		fmt.Print("after")
		fmt.Fprint(os.Stderr, "warned")
	case "crash":
		debug.SetMaxStack(1 << 12)
		return kernel.Result{Data: map[string]any{"text/plain": fmt.Sprint(deep(1000))}}
	case "sleep":
		<-ctx.Done()
		return kernel.Result{Err: &kernel.CellError{Name: "Interrupted", Value: "stopped"}}
	case "stuck":
		<-ctx.Done()
		f.h.Stuck("still busy\n")
		select {}
	}
	return kernel.Result{}
}

// deep recurses n calls deep: past the stack limit, the runtime's fatal error.
func deep(n int) int {
	if n == 0 {
		return 0
	}
	return deep(n-1) + 1
}

func (fakeExec) Complete(code string, cursor int) ([]string, int, int) {
	return []string{code + "!"}, 0, cursor
}
func (fakeExec) Inspect(string, int, int) (map[string]any, bool) { return nil, false }
func (fakeExec) IsComplete(string) (string, string)              { return "complete", "" }

// Close marks that the worker was let clean up, in the file $GML_WORKER_TEST_CLOSED.
func (fakeExec) Close() error {
	if f := os.Getenv("GML_WORKER_TEST_CLOSED"); f != "" {
		return os.WriteFile(f, []byte("closed"), 0o644)
	}
	return nil
}

// events records what a cell published, in order.
type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	e.log = append(e.log, s)
	e.mu.Unlock()
}

func (e *events) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.log, "|")
}

func (e *events) Stream(name, text string) { e.add(name + ":" + text) }
func (e *events) Display(data, _ map[string]any, _ string, _ bool) {
	e.add(fmt.Sprint("display:", data["text/plain"]))
}
func (e *events) ClearOutput(bool)                   { e.add("clear") }
func (e *events) Input(string, bool) (string, error) { return "", io.EOF }

func start(t testing.TB, env ...string) *Supervisor {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(Config{Command: []string{self}, Env: append(append(os.Environ(), "GML_WORKER_TEST=1"), env...),
		Log: log.New(io.Discard, "", 0), LogFile: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSupervisor(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	if r := s.Execute(ctx, "value 2", &events{}); r.Err != nil || r.Data["text/plain"] != "2" {
		t.Fatalf("value 2: %+v", r)
	}
	// Output written to fd 1 and 2 keeps its place around the cell's messages.
	ev := &events{}
	if r := s.Execute(ctx, "order", ev); r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := ev.String(); got != "stdout:before |display:shown|stdout:after|stderr:warned" {
		t.Errorf("order: %s", got)
	}
	// A cell begun by Start is finished by Execute; one Execute does not match is run
	// first, unseen.
	s.Start("order")
	ev = &events{}
	if r := s.Execute(ctx, "order", ev); r.Err != nil || ev.String() != "stdout:before |display:shown|stdout:after|stderr:warned" {
		t.Errorf("order after Start: %v %s", r.Err, ev)
	}
	s.Start("value 4")
	if r := s.Execute(ctx, "value 5", &events{}); r.Err != nil || r.Data["text/plain"] != "5" {
		t.Errorf("Execute after Start of other code: %+v", r)
	}
	if m, _, _ := s.Complete("fmt.Pr", 6); len(m) != 1 || m[0] != "fmt.Pr!" {
		t.Errorf("Complete: %v", m)
	}
	// An interrupt that stops the cell, and one that cannot: the second interrupt ends
	// the worker.
	ictx, cancel := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	if r := s.Execute(ictx, "sleep", &events{}); r.Err == nil || r.Err.Name != "Interrupted" {
		t.Errorf("sleep: %+v", r.Err)
	}
	ictx, cancel = context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	ev = &events{}
	go func() {
		for !strings.Contains(ev.String(), "still busy") {
			time.Sleep(10 * time.Millisecond)
		}
		s.Interrupt()
	}()
	if r := s.Execute(ictx, "stuck", ev); r.Err == nil || r.Err.Name != "KernelRestarted" {
		t.Errorf("stuck: %+v", r.Err)
	}
	// A fatal error: the cell fails with the runtime's report, a new worker answers.
	r := s.Execute(ctx, "crash", &events{})
	if r.Err == nil || r.Err.Name != "KernelDied" || !strings.Contains(strings.Join(r.Err.Traceback, "\n"), "fatal error:") {
		t.Fatalf("crash: %+v", r.Err)
	}
	if r := s.Execute(ctx, "value 3", &events{}); r.Err != nil || r.Data["text/plain"] != "3" {
		t.Errorf("after the crash: %+v", r)
	}
}

// BenchmarkExecuteRoundTrip measures what the supervisor adds to a cell: a request to
// the worker and its result back, with a fake executor that does nothing.
func BenchmarkExecuteRoundTrip(b *testing.B) {
	s := start(b)
	ctx := context.Background()
	pub := &events{}
	for b.Loop() {
		s.Start("value 2")
		if r := s.Execute(ctx, "value 2", pub); r.Err != nil {
			b.Fatal(r.Err)
		}
	}
}

// TestCloseLetsTheWorkerCleanUp checks that the supervisor's Close ends the worker by
// hanging up, so the executor's Close runs (it removes the %go get workspace).
func TestCloseLetsTheWorkerCleanUp(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "closed")
	s := start(t, "GML_WORKER_TEST_CLOSED="+mark)
	if r := s.Execute(context.Background(), "value 1", &events{}); r.Err != nil {
		t.Fatal(r.Err)
	}
	begin := time.Now()
	s.Close()
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the worker's executor was not closed: %v", err)
	}
	if took := time.Since(begin); took >= stopWait {
		t.Errorf("Close took %v: the worker did not exit when the supervisor hung up", took)
	}
}

// TestFrameLimit: a message over the frame limit is refused by Send with an error that
// names it, and nothing reaches the other side; one within it goes through.
func TestFrameLimit(t *testing.T) {
	defer func(old int) { maxFrame = old }(maxFrame)
	maxFrame = 64
	for _, tc := range []struct {
		text string
		ok   bool
	}{{"short", true}, {strings.Repeat("x", 100), false}} {
		var buf strings.Builder
		c := newConn(struct {
			io.Reader
			io.Writer
		}{strings.NewReader(""), &buf})
		err := c.Send(&msg{T: tResult, Text: tc.text})
		if tc.ok != (err == nil) {
			t.Fatalf("Send of %d bytes of text: %v", len(tc.text), err)
		}
		if !tc.ok {
			if !strings.Contains(err.Error(), "exceeds the 64-byte limit") || buf.Len() != 0 {
				t.Errorf("Send = %v, %d bytes written; want a limit error and nothing written", err, buf.Len())
			}
			continue
		}
		got, err := newConn(struct {
			io.Reader
			io.Writer
		}{strings.NewReader(buf.String()), io.Discard}).Recv()
		if err != nil || got.Text != tc.text {
			t.Errorf("Recv = %+v, %v; want the text back", got, err)
		}
	}
}
