package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gml-dev/gml/notebook"
)

// syncBuffer collects a process's output while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunStreamsAndKeepsWhatFinished runs a notebook whose second cell never ends with
// `gml run -o`: the first cell's output and the progress lines appear while the run
// goes on, the output notebook already holds the finished cell, and Ctrl-C ends the run
// with the notebook written up to the interrupted cell.
func TestRunStreamsAndKeepsWhatFinished(t *testing.T) {
	dir := t.TempDir()
	nb := notebook.New()
	for _, src := range []string{"import \"fmt\"\nfmt.Println(\"first cell done\")", "fmt.Println(\"looping\")\nfor {\n}", "fmt.Println(\"never\")"} {
		nb.Cells = append(nb.Cells, &notebook.Cell{Type: "code", Source: src})
	}
	in, out := filepath.Join(dir, "in.ipynb"), filepath.Join(dir, "out.ipynb")
	if err := nb.Write(in); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gmlBin, "run", in, "-o", out)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(stdout.String(), "looping") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no streamed output after 2 minutes:\nstdout %q\nstderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The run is inside the endless cell: what finished is on screen and on disk.
	partial, err := notebook.Read(out)
	if err != nil {
		t.Fatalf("no output notebook while the run goes on: %v", err)
	}
	if o := partial.Cells[0].Outputs; len(o) != 1 || o[0].Text != "first cell done\n" {
		t.Fatalf("written after cell 1: %+v", o)
	}
	for _, want := range []string{"[1/3] In[1] running", "[1/3] In[1] done in", "[2/3] In[2] running"} {
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("an interrupted run exited with status 0")
	}
	if !strings.Contains(stderr.String(), "interrupted after 2 of 3 cells") {
		t.Fatalf("stderr:\n%s", stderr.String())
	}
	final, err := notebook.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if o := final.Cells[1].Outputs; len(o) != 2 || o[1].Type != "error" || len(final.Cells[2].Outputs) != 0 {
		t.Fatalf("after the interrupt: %+v / %+v", o, final.Cells[2].Outputs)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}
