package worker

import (
	"os"
	"strings"
	"testing"
)

func TestTakeReport(t *testing.T) {
	const report = "runtime: goroutine stack exceeds 4096-byte limit\nruntime: sp=0xc000 stack=[0xc000, 0xd000]\nfatal error: stack overflow\n\nruntime stack:\nruntime.throw(...)\n"
	tests := []struct {
		name, stderr, file   string
		wantReport, wantLeft string
	}{
		{"file lacks the first lines", "cell output\n" + report, "\nruntime stack:\nruntime.throw(...)\n",
			"runtime: goroutine stack exceeds 4096-byte limit\nruntime: sp=0xc000 stack=[0xc000, 0xd000]\nfatal error: stack overflow\n\nruntime stack:\nruntime.throw(...)", "cell output\n"},
		{"stderr already sent", "", "panic: boom\n\ngoroutine 1:\n", "panic: boom\n\ngoroutine 1:", ""},
		{"no report", "just output\n", "", "", "just output\n"},
	}
	// The first lines went out as the cell's output before the worker died.
	t.Run("first lines already sent", func(t *testing.T) {
		crash, err := os.CreateTemp(t.TempDir(), "crash")
		if err != nil {
			t.Fatal(err)
		}
		defer crash.Close()
		crash.WriteString("\nruntime stack:\nruntime.throw(...)\n")
		p := &proc{crash: crash, err: &outPipe{buf: []byte("cell output\n" + report)}}
		if sent, _ := p.err.take(true, int64(len("cell output\n")+60)); !strings.HasPrefix(sent, "cell output\nruntime: goroutine") {
			t.Fatalf("took %q", sent)
		}
		if got := p.takeReport(); !strings.HasPrefix(got, "runtime: goroutine stack exceeds") || !strings.HasSuffix(got, "runtime.throw(...)") {
			t.Errorf("report %q", got)
		}
		if left := string(p.err.buf); left != "" {
			t.Errorf("stderr left %q", left)
		}
	})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			crash, err := os.CreateTemp(t.TempDir(), "crash")
			if err != nil {
				t.Fatal(err)
			}
			crash.WriteString(tc.file)
			p := &proc{crash: crash, err: &outPipe{buf: []byte(tc.stderr)}}
			if got := p.takeReport(); got != tc.wantReport {
				t.Errorf("report %q, want %q", got, tc.wantReport)
			}
			if left := string(p.err.buf); left != tc.wantLeft {
				t.Errorf("stderr left %q, want %q", left, tc.wantLeft)
			}
			crash.Close()
		})
	}
}
