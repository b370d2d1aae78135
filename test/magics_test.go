package test

import (
	"strings"
	"testing"
	"time"

	"github.com/gml-dev/gml/kernel/wire"
)

// TestShellOverProtocol runs a ! command through the kernel: its first line reaches
// IOPub while it still runs, and an interrupt_request stops a long one.
func TestShellOverProtocol(t *testing.T) {
	p := startKernel(t, false)
	_, ex := run(t, p, "!echo first; sleep 1; echo second")
	var first, reply time.Time
	for _, m := range ex.Outputs() {
		var s wire.Stream
		if m.Header.MsgType == "stream" && m.DecodeContent(&s) == nil && strings.HasPrefix(s.Text, "first") && first.IsZero() {
			first, _ = time.Parse(time.RFC3339Nano, m.Header.Date)
		}
	}
	reply, _ = time.Parse(time.RFC3339Nano, ex.Reply.Header.Date)
	if first.IsZero() || reply.Sub(first) < 700*time.Millisecond {
		t.Errorf("the first line was published at %v, the reply at %v: not streamed while the command ran", first, reply)
	}
	if got := text(ex); got != "first\nsecond\n" {
		t.Errorf("output %q", got)
	}

	req := wire.DefaultExecuteRequest()
	req.Code = "!echo started; sleep 30"
	m, err := p.Client.Send(p.Client.Ch.Shell, "execute_request", req)
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, p, m, "started\n") // an interrupt before the cell starts is not for it
	start := time.Now()
	if _, err := p.Client.Request(p.Client.Ch.Control, "interrupt_request", struct{}{}, cellTimeout); err != nil {
		t.Fatal(err)
	}
	done, err := p.Client.Await(m, cellTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("sleep 30 stopped %v after the interrupt", d)
	}
	var r wire.ExecuteReply
	done.Reply.DecodeContent(&r)
	if r.Status != "error" || r.EName != "Interrupted" {
		t.Errorf("interrupted command: %s %s", r.Status, r.EName)
	}
	if got := mustRun(t, p, "1+1"); got != "2" {
		t.Errorf("after the interrupt 1+1 = %q", got)
	}
}

// TestMagicsOverProtocol runs magics through the kernel and completes their names.
func TestMagicsOverProtocol(t *testing.T) {
	p := startKernel(t, false)
	if got := mustRun(t, p, "%time x := 6 * 7\nx"); !strings.Contains(got, "Wall time: ") || !strings.HasSuffix(got, "42") {
		t.Errorf("%%time: %q", got)
	}
	if got := mustRun(t, p, "%who"); got != "x\n" {
		t.Errorf("%%who: %q", got)
	}
	if got := mustRun(t, p, "%help"); !strings.Contains(got, "%%go") || !strings.Contains(got, "Must(") {
		t.Errorf("%%help: %q", got)
	}
	rep, err := p.Client.Request(p.Client.Ch.Shell, "complete_request", wire.CompleteRequest{Code: "%whe", CursorPos: 3}, cellTimeout)
	if err != nil {
		t.Fatal(err)
	}
	var c wire.CompleteReply
	rep.Reply.DecodeContent(&c)
	if strings.Join(c.Matches, " ") != "%who %whos" || c.CursorStart != 0 {
		t.Errorf("completion of %%wh: %v from %d", c.Matches, c.CursorStart)
	}
}
