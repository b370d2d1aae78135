package notebook

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gmlexec "github.com/gml-dev/gml/kernel/exec"
)

// validate checks a written notebook against the nbformat schema with Debian's
// python3-nbformat (installed by install/deps.sh with Jupyter).
func validate(t *testing.T, path string) {
	t.Helper()
	out, err := exec.Command("/usr/bin/python3", "-c",
		"import nbformat, sys; nbformat.validate(nbformat.read(sys.argv[1], 4))", path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s is not a valid nbformat 4 notebook: %v\n%s", path, err, out)
	}
}

func TestParseAndWriteRoundTrip(t *testing.T) {
	src := `{"cells": [
  {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "text"]},
  {"cell_type": "code", "metadata": {"tags": ["x"]}, "source": "a := 1\na", "execution_count": 3,
   "outputs": [{"output_type": "execute_result", "execution_count": 3, "metadata": {}, "data": {"text/plain": ["1"]}},
               {"output_type": "stream", "name": "stdout", "text": ["a\n", "b\n"]},
               {"output_type": "display_data", "metadata": {}, "data": {"application/json": {"k": [1, 2]}, "text/plain": "j"}}]}],
 "metadata": {"custom": {"kept": true}}, "nbformat": 4, "nbformat_minor": 4}`
	nb, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if nb.Cells[0].Source != "# Title\ntext" || nb.Cells[1].Source != "a := 1\na" {
		t.Fatalf("sources: %q %q", nb.Cells[0].Source, nb.Cells[1].Source)
	}
	if o := nb.Cells[1].Outputs[1]; o.Text != "a\nb\n" || o.Name != "stdout" {
		t.Fatalf("stream output: %+v", o)
	}
	path := filepath.Join(t.TempDir(), "rt.ipynb")
	if err := nb.Write(path); err != nil {
		t.Fatal(err)
	}
	validate(t, path)
	again, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Cells[1].Source != nb.Cells[1].Source || again.Cells[0].ID == "" || again.Metadata["custom"] == nil ||
		again.Cells[1].Outputs[2].Data["application/json"].(map[string]any)["k"] == nil {
		t.Errorf("round trip lost something: %+v", again.Cells[1])
	}
	for _, bad := range []string{`{"nbformat": 3, "cells": []}`, `not json`, `{"nbformat": 4, "cells": [{"cell_type": "weird", "source": ""}]}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

// codeNotebook builds a notebook of code cells.
func codeNotebook(sources ...string) *Notebook {
	nb := New()
	for _, s := range sources {
		nb.Cells = append(nb.Cells, &Cell{Type: "code", Source: s})
	}
	return nb
}

func TestRunSemantics(t *testing.T) {
	interp, err := gmlexec.New()
	if err != nil {
		t.Fatal(err)
	}
	nb := codeNotebook(
		"import \"fmt\"\nfmt.Print(\"a\")\nfmt.Print(\"b\")\nv := 2\nv",
		"panic(\"first failure\")",
		"h := display.NewDisplay(display.Text(\"old\"))\nh.Update(display.Text(\"new\"))",
		"fmt.Println(\"gone\")\ndisplay.ClearOutput(true)\nfmt.Println(\"kept\")",
		"for {\n}",
		"display.Input(\"?\")",
		"v + 1",
	)
	var text strings.Builder
	failures := Run(context.Background(), nb, interp, RunOptions{Timeout: 300 * time.Millisecond, Live: &text})
	// The input cell fails too: its last call returns a non-nil error.
	if len(failures) != 3 || failures[0].Index != 1 || failures[1].Index != 4 || failures[1].Err.Name != "Interrupted" || failures[2].Index != 5 {
		t.Fatalf("failures: %+v", failures)
	}
	outs := func(k int) []*Output { return nb.Cells[k].Outputs }
	if o := outs(0); len(o) != 2 || o[0].Text != "ab" || o[1].Type != "execute_result" || *o[1].ExecutionCount != 1 {
		t.Errorf("cell 1 outputs: %+v", o)
	}
	if o := outs(1); len(o) != 1 || o[0].Type != "error" || o[0].EValue != "first failure" {
		t.Errorf("cell 2 outputs: %+v", o)
	}
	if o := outs(2); len(o) != 1 || o[0].Data["text/plain"] != "new" {
		t.Errorf("cell 3 outputs (display update): %+v", o)
	}
	if o := outs(3); len(o) != 1 || o[0].Text != "kept\n" {
		t.Errorf("cell 4 outputs (clear_output wait): %+v", o)
	}
	if o := outs(5); len(o) != 1 || o[0].Type != "error" || !strings.Contains(o[0].EValue, "headless run has no user") {
		t.Errorf("cell 6 outputs (input): %+v", o)
	}
	if o := outs(6); len(o) != 1 || o[0].Data["text/plain"] != "3" || *nb.Cells[6].ExecutionCount != 7 {
		t.Errorf("cell 7 outputs: %+v", o)
	}
	if !strings.Contains(text.String(), "abOut[1]: 2\n") || !strings.Contains(text.String(), "panic: first failure") {
		t.Errorf("text output:\n%s", text.String())
	}
}

// TestRunStreams checks what a headless run shows while it goes: each cell's output as
// it is printed, a progress bar rewritten in place on one line, the hooks around each
// cell, and, once interrupted, no further cells, with the finished ones' outputs kept
// and the cells not run left empty.
func TestRunStreams(t *testing.T) {
	interp, err := gmlexec.New()
	if err != nil {
		t.Fatal(err)
	}
	nb := codeNotebook(
		"import \"fmt\"\nfmt.Println(\"first\")",
		"import \"time\"\np := display.NewProgress(3)\nfor i := 1; i <= 3; i++ {\n\tp.Set(i)\n\ttime.Sleep(700 * time.Millisecond)\n}\np.Done()\nfmt.Println(\"after\")",
		"fmt.Println(\"slow\")\nfor {\n}",
		"fmt.Println(\"never\")",
	)
	nb.Cells[3].Outputs = []*Output{{Type: "stream", Name: "stdout", Text: "stale\n"}}
	live := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var events []string
	Run(ctx, nb, interp, RunOptions{
		Live: live,
		OnStart: func(c *Cell) {
			events = append(events, fmt.Sprintf("start %d", *c.ExecutionCount))
			if *c.ExecutionCount == 3 {
				go func() { // interrupt once the endless cell has printed
					for !strings.Contains(live.String(), "slow") {
						time.Sleep(10 * time.Millisecond)
					}
					cancel()
				}()
			}
		},
		OnCell: func(c *Cell, _ *Failure) { events = append(events, fmt.Sprintf("end %d", *c.ExecutionCount)) },
	})
	if got := strings.Join(events, ", "); got != "start 1, end 1, start 2, end 2, start 3, end 3" {
		t.Fatalf("hooks: %s", got)
	}
	lines := strings.Split(live.String(), "\n")
	if lines[0] != "first" || lines[2] != "after" || lines[3] != "slow" {
		t.Fatalf("live output:\n%q", live.String())
	}
	// The bar's line: first drawn, then rewritten in place, ending full.
	bar := lines[1]
	if !strings.Contains(bar, "\r") || !strings.Contains(bar[strings.LastIndex(bar, "\r"):], "3/3 100%") {
		t.Fatalf("progress line %q", bar)
	}
	if c := nb.Cells[3]; len(c.Outputs) != 0 || c.ExecutionCount != nil {
		t.Fatalf("the cell after the interrupt: %+v", c)
	}
	if o := nb.Cells[2].Outputs; len(o) != 2 || o[0].Text != "slow\n" || o[1].Type != "error" {
		t.Fatalf("interrupted cell outputs: %+v", o)
	}
}

// lockedBuffer is a strings.Builder safe for one writer and concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestQuickstart runs notebooks/quickstart.ipynb as `gml run` does: no cell may fail,
// and every kind of output the notebook shows off must appear.
func TestQuickstart(t *testing.T) {
	nb, err := Read("../notebooks/quickstart.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	interp, err := gmlexec.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Run(context.Background(), nb, interp, RunOptions{Timeout: time.Minute}) {
		t.Errorf("cell %d failed: %s", f.Index+1, strings.Join(f.Err.Traceback, "\n"))
	}
	seen := map[string]bool{}
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			seen[o.Type] = true
			for mime := range o.Data {
				seen[mime] = true
			}
			if html, ok := o.Data["text/html"].(string); ok && strings.Contains(html, "<progress") {
				seen["progress"] = true
			}
		}
	}
	for _, want := range []string{"stream", "execute_result", "display_data", "text/html", "text/markdown", "image/png", "image/svg+xml", "progress"} {
		if !seen[want] {
			t.Errorf("quickstart produced no %s output", want)
		}
	}
	path := filepath.Join(t.TempDir(), "quickstart.out.ipynb")
	if err := nb.Write(path); err != nil {
		t.Fatal(err)
	}
	validate(t, path)
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("written notebook: %v", err)
	}
}
