package kernel

import (
	"testing"
	"time"

	"github.com/gml-dev/gml/kernel/wire"
)

// stop_on_error aborts the queue only after a cell that failed: requests queued behind
// a cell that succeeds run normally.
func TestStopOnErrorRunsQueuedAfterSuccess(t *testing.T) {
	k, c, _ := runKernel(t)
	queuedSent := make(chan struct{})
	c.OnInput = func(wire.InputRequest) string {
		// The first cell finishes only once the kernel holds the second request in its
		// queue (sent is not yet received: poll, on a loaded machine too).
		<-queuedSent
		for deadline := time.Now().Add(timeout); len(k.shellQueue) == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		return "fine"
	}
	first, err := c.Send(c.Ch.Shell, "execute_request", wire.ExecuteRequest{Code: "input wait", StoreHistory: true, StopOnError: true, AllowStdin: true})
	if err != nil {
		t.Fatal(err)
	}
	queued, err := c.Send(c.Ch.Shell, "execute_request", wire.ExecuteRequest{Code: "print ran", StoreHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	close(queuedSent)
	for i, req := range []*wire.Message{first, queued} {
		ex, err := c.Await(req, timeout)
		if err != nil {
			t.Fatal(err)
		}
		var r wire.ExecuteReply
		if err := ex.Reply.DecodeContent(&r); err != nil {
			t.Fatal(err)
		}
		if r.Status != "ok" {
			t.Errorf("request %d: status %q, want ok", i+1, r.Status)
		}
		if req != queued {
			continue
		}
		var s wire.Stream
		if outs := ex.Outputs(); len(outs) != 1 || outs[0].DecodeContent(&s) != nil || s.Text != "ran\n" {
			t.Errorf("the queued cell printed %s (%+v), want ran", kinds(outs), s)
		}
	}
}
