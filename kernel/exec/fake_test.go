package exec

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
)

// fakePub records what a cell publishes.
type fakePub struct {
	mu       sync.Mutex
	out, err strings.Builder
	streams  int
	displays []map[string]any
	updates  []bool
	clears   int
	inputs   []string // answers to give, in order
	prompts  []string
}

func (f *fakePub) Stream(name, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streams++
	if name == "stdout" {
		f.out.WriteString(text)
	} else {
		f.err.WriteString(text)
	}
}

func (f *fakePub) Display(data, _ map[string]any, _ string, update bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.displays = append(f.displays, data)
	f.updates = append(f.updates, update)
}

func (f *fakePub) ClearOutput(bool) { f.clears++ }

func (f *fakePub) Input(prompt string, _ bool) (string, error) {
	f.prompts = append(f.prompts, prompt)
	if len(f.inputs) == 0 {
		return "", errors.New("stdin is not allowed")
	}
	a := f.inputs[0]
	f.inputs = f.inputs[1:]
	return a, nil
}

// realStderr is fd 2. Under go test -json (make test) the testing package sets
// os.Stderr to os.Stdout when the tests start, so a cell's writes to os.Stderr, and
// those of the go command that %go get runs, would arrive as stdout; newInterp puts it
// back, as the kernel process has it.
var realStderr = os.NewFile(2, "/dev/stderr")

func newInterp(t *testing.T) *Interp {
	t.Helper()
	os.Stderr = realStderr
	i, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { i.Close() })
	return i
}

// run executes code and returns the result and the publisher.
func run(t *testing.T, i *Interp, code string) (Result, *fakePub) {
	t.Helper()
	p := &fakePub{}
	return i.Execute(context.Background(), code, p), p
}

// text returns the text/plain of a result, or "" when it has none.
func text(r Result) string {
	if r.Data == nil {
		return ""
	}
	s, _ := r.Data["text/plain"].(string)
	return s
}
