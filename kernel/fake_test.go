package kernel

import (
	"context"
	"strings"
	"time"
)

// fakeExecutor runs a tiny command language so the dispatcher can be tested without an
// interpreter. Each cell is one command:
//
//	print TEXT     stream TEXT to stdout      eprint TEXT  stream TEXT to stderr
//	value TEXT     TEXT is the cell's value   fail TEXT    the cell fails with TEXT
//	sleep          run until interrupted      input PROMPT ask for input and print it
//	show           display_data, then update  clear        clear_output
//	panic          the executor itself panics
type fakeExecutor struct{}

func (fakeExecutor) Execute(ctx context.Context, code string, pub Publisher) Result {
	cmd, arg, _ := strings.Cut(code, " ")
	switch cmd {
	case "print":
		pub.Stream("stdout", arg+"\n")
	case "eprint":
		pub.Stream("stderr", arg+"\n")
	case "value":
		return Result{Data: map[string]any{"text/plain": arg}}
	case "fail":
		return Result{Err: &CellError{Name: "FakeError", Value: arg, Traceback: []string{"FakeError: " + arg}}}
	case "sleep":
		select {
		case <-ctx.Done():
			return Result{Err: &CellError{Name: "Interrupted", Value: "interrupted"}}
		case <-time.After(10 * time.Second):
		}
	case "input":
		s, err := pub.Input(arg, false)
		if err != nil {
			return Result{Err: &CellError{Name: "InputError", Value: err.Error()}}
		}
		pub.Stream("stdout", "got "+s)
	case "show":
		pub.Display(map[string]any{"text/plain": "v1"}, nil, "d1", false)
		pub.Display(map[string]any{"text/plain": "v2"}, nil, "d1", true)
	case "clear":
		pub.ClearOutput(false)
	case "panic":
		panic("fake executor bug")
	}
	return Result{}
}

func (fakeExecutor) Complete(code string, cursor int) ([]string, int, int) {
	if strings.HasPrefix(code[:cursor], "fm") {
		return []string{"fmt"}, 0, cursor
	}
	return nil, cursor, cursor
}

func (fakeExecutor) Inspect(code string, cursor, detail int) (map[string]any, bool) {
	if code == "fmt" {
		return map[string]any{"text/plain": "package fmt"}, true
	}
	return nil, false
}

func (fakeExecutor) IsComplete(code string) (string, string) {
	if strings.HasSuffix(code, "{") {
		return "incomplete", "\t"
	}
	return "complete", ""
}

func (fakeExecutor) Close() error { return nil }
