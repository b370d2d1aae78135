package kernel

import (
	"context"
	"fmt"
	"io"
	"log"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gml-dev/gml/kernel/client"
	"github.com/gml-dev/gml/kernel/wire"
)

const timeout = 5 * time.Second

// runKernel starts a kernel with the fake executor on ipc sockets in a temporary
// directory, connects a client, and stops both when the test ends. The channel receives
// Run's restart result when Run returns.
func runKernel(t *testing.T) (*Kernel, *client.Client, <-chan bool) {
	t.Helper()
	dir := t.TempDir()
	info := wire.ConnectionInfo{Transport: "ipc", IP: filepath.Join(dir, "k"), ShellPort: 1, ControlPort: 2,
		StdinPort: 3, IOPubPort: 4, HBPort: 5, Key: "test-key", SignatureScheme: "hmac-sha256"}
	k, err := New(Config{Info: info, NewExecutor: func() (Executor, error) { return fakeExecutor{}, nil },
		Logger: log.New(io.Discard, "", 0), Version: "test", HistoryFile: filepath.Join(dir, "history.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	restarted := make(chan bool, 1)
	go func() {
		r, _ := k.Run(ctx)
		restarted <- r
	}()
	c, err := client.New(info)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitReady(timeout); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		cancel()
	})
	return k, c, restarted
}

// kinds lists the msg_type of each message.
func kinds(ms []*wire.Message) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Header.MsgType)
	}
	return strings.Join(s, ",")
}

// execute sends an execute_request and returns the exchange and its decoded reply.
func execute(t *testing.T, c *client.Client, req wire.ExecuteRequest) (*client.Exchange, wire.ExecuteReply) {
	t.Helper()
	ex, err := c.Request(c.Ch.Shell, "execute_request", req, timeout)
	if err != nil {
		t.Fatal(err)
	}
	var r wire.ExecuteReply
	if err := ex.Reply.DecodeContent(&r); err != nil {
		t.Fatal(err)
	}
	return ex, r
}

func TestExecute(t *testing.T) {
	_, c, _ := runKernel(t)
	tests := []struct {
		code    string
		status  string
		outputs string // msg types on IOPub besides status and execute_input
		check   func(*client.Exchange) error
	}{
		{"print hello", "ok", "stream", func(ex *client.Exchange) error {
			var s wire.Stream
			ex.Outputs()[0].DecodeContent(&s)
			if s.Name != "stdout" || s.Text != "hello\n" {
				return fmt.Errorf("stream %+v", s)
			}
			return nil
		}},
		{"eprint oops", "ok", "stream", nil},
		{"value 2", "ok", "execute_result", func(ex *client.Exchange) error {
			var r wire.ExecuteResult
			ex.Outputs()[0].DecodeContent(&r)
			if r.Data["text/plain"] != "2" || r.ExecutionCount == 0 {
				return fmt.Errorf("execute_result %+v", r)
			}
			return nil
		}},
		{"fail boom", "error", "error", func(ex *client.Exchange) error {
			var r wire.ExecuteReply
			ex.Reply.DecodeContent(&r)
			if r.Error == nil || r.EName != "FakeError" || r.EValue != "boom" {
				return fmt.Errorf("reply %+v", r)
			}
			return nil
		}},
		{"show", "ok", "display_data,update_display_data", nil},
		{"clear", "ok", "clear_output", nil},
		{"panic", "error", "error", nil},
		{"input x", "error", "error", nil}, // allow_stdin is false here: see TestInput
	}
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			req := wire.DefaultExecuteRequest()
			req.Code = tc.code
			req.AllowStdin = false
			ex, r := execute(t, c, req)
			if r.Status != tc.status {
				t.Errorf("status %q, want %q (%+v)", r.Status, tc.status, r.Error)
			}
			if tc.code == "input x" && !strings.Contains(r.EValue, "allow_stdin") {
				t.Errorf("input without stdin: error %q, want one naming allow_stdin", r.EValue)
			}
			if got := kinds(ex.IOPub); !strings.HasPrefix(got, "status,execute_input") || !strings.HasSuffix(got, "status") {
				t.Errorf("IOPub %s, want busy, execute_input, ..., idle", got)
			}
			if got := kinds(ex.Outputs()); got != tc.outputs {
				t.Errorf("outputs %q, want %q", got, tc.outputs)
			}
			if tc.check != nil {
				if err := tc.check(ex); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestUserExpressions(t *testing.T) {
	_, c, _ := runKernel(t)
	req := wire.DefaultExecuteRequest()
	req.Code = "print cell"
	req.UserExpressions = map[string]any{"a": "value 7", "b": "fail nope", "c": 3.0, "d": "print hidden"}
	ex, r := execute(t, c, req)
	want := map[string]string{"a": "ok", "b": "error", "c": "error", "d": "ok"}
	for name, status := range want {
		got, _ := r.UserExpressions[name].(map[string]any)
		if got["status"] != status {
			t.Errorf("user expression %s: %v, want status %s", name, got, status)
		}
	}
	if data, _ := r.UserExpressions["a"].(map[string]any)["data"].(map[string]any); data["text/plain"] != "7" {
		t.Errorf("user expression a: data %v, want text/plain 7", data)
	}
	if e, _ := r.UserExpressions["b"].(map[string]any); e["ename"] != "FakeError" || e["evalue"] != "nope" {
		t.Errorf("user expression b: %v, want FakeError nope", e)
	}
	if got := kinds(ex.Outputs()); got != "stream" {
		t.Errorf("outputs %q, want only the cell's stream", got)
	}
	// After a failed cell the expressions are not evaluated.
	req.Code = "fail cell"
	if _, r = execute(t, c, req); len(r.UserExpressions) != 0 {
		t.Errorf("user expressions after a failed cell: %v, want none", r.UserExpressions)
	}
}

func TestExecutionCountAndSilent(t *testing.T) {
	_, c, _ := runKernel(t)
	count := func(silent, store bool) (int, int) {
		req := wire.DefaultExecuteRequest()
		req.Code, req.Silent, req.StoreHistory = "value 1", silent, store
		ex, r := execute(t, c, req)
		return r.ExecutionCount, len(ex.Outputs())
	}
	if n, _ := count(false, true); n != 1 {
		t.Errorf("first count %d, want 1", n)
	}
	if n, out := count(true, true); n != 1 || out != 0 {
		t.Errorf("silent: count %d outputs %d, want 1 and 0", n, out)
	}
	if n, _ := count(false, false); n != 1 {
		t.Errorf("store_history false: count %d, want 1", n)
	}
	if n, _ := count(false, true); n != 2 {
		t.Errorf("count %d, want 2", n)
	}
}

func TestInterruptOnControl(t *testing.T) {
	_, c, _ := runKernel(t)
	req, err := c.Send(c.Ch.Shell, "execute_request", wire.ExecuteRequest{Code: "sleep", StoreHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if _, err := c.Request(c.Ch.Control, "interrupt_request", struct{}{}, timeout); err != nil {
		t.Fatal(err)
	}
	ex, err := c.Await(req, timeout)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("interrupt took %v", d)
	}
	var r wire.ExecuteReply
	ex.Reply.DecodeContent(&r)
	if r.Status != "error" || r.EName != "Interrupted" {
		t.Errorf("interrupted cell replied %+v", r)
	}
}

func TestRestartedPublishesStatus(t *testing.T) {
	k, c, _ := runKernel(t)
	k.Restarted()
	var states []string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline) && len(states) < 2; time.Sleep(10 * time.Millisecond) {
		states = nil
		for _, m := range c.Peek(&wire.Message{}) { // messages without a parent
			var st wire.Status
			if m.Header.MsgType == "status" && m.DecodeContent(&st) == nil {
				states = append(states, st.ExecutionState)
			}
		}
	}
	if strings.Join(states, ",") != "starting,idle" {
		t.Errorf("statuses without a parent after a restart: %v, want starting, idle", states)
	}
}

func TestStopOnErrorAbortsQueued(t *testing.T) {
	_, c, _ := runKernel(t)
	first, _ := c.Send(c.Ch.Shell, "execute_request", wire.ExecuteRequest{Code: "sleep", StoreHistory: true, StopOnError: true})
	queued, _ := c.Send(c.Ch.Shell, "execute_request", wire.ExecuteRequest{Code: "print never", StoreHistory: true})
	info, _ := c.Send(c.Ch.Shell, "kernel_info_request", struct{}{})
	time.Sleep(100 * time.Millisecond)
	if _, err := c.Request(c.Ch.Control, "interrupt_request", struct{}{}, timeout); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req    *wire.Message
		status string
	}{{first, "error"}, {queued, "aborted"}, {info, "ok"}} {
		ex, err := c.Await(tc.req, timeout)
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ Status string }
		ex.Reply.DecodeContent(&r)
		if r.Status != tc.status {
			t.Errorf("%s: status %q, want %q", tc.req.Header.MsgType, r.Status, tc.status)
		}
		if tc.status == "aborted" && len(ex.Outputs()) != 0 {
			t.Errorf("aborted cell produced output: %s", kinds(ex.Outputs()))
		}
	}
}

func TestBadSignatureDropped(t *testing.T) {
	_, c, _ := runKernel(t)
	m, _ := wire.NewMessage("execute_request", c.Session, "u", wire.ExecuteRequest{Code: "print forged"})
	frames, _ := m.Encode(wire.NewSigner("wrong-key"))
	if err := c.Ch.Shell.SendRaw(frames); err != nil {
		t.Fatal(err)
	}
	unsigned := append([][]byte(nil), frames...)
	unsigned[1] = []byte{}
	if err := c.Ch.Shell.SendRaw(unsigned); err != nil {
		t.Fatal(err)
	}
	if err := c.Ch.Shell.SendRaw([][]byte{[]byte("garbage")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Await(m, 300*time.Millisecond); err == nil {
		t.Fatal("a message with a bad signature was answered")
	}
	ex, err := c.Execute("value 3", timeout)
	if err != nil {
		t.Fatalf("kernel stopped answering after bad messages: %v", err)
	}
	var r wire.ExecuteReply
	ex.Reply.DecodeContent(&r)
	if r.ExecutionCount != 1 {
		t.Errorf("execution_count %d, want 1: a forged cell was counted", r.ExecutionCount)
	}
}

func TestInput(t *testing.T) {
	_, c, _ := runKernel(t)
	var prompt string
	c.OnInput = func(req wire.InputRequest) string {
		prompt = req.Prompt
		return "42"
	}
	ex, err := c.Execute("input name?", timeout)
	if err != nil {
		t.Fatal(err)
	}
	var s wire.Stream
	outs := ex.Outputs()
	if len(outs) != 1 || outs[0].DecodeContent(&s) != nil || s.Text != "got 42" || prompt != "name?" {
		t.Errorf("outputs %s (%+v), prompt %q", kinds(outs), s, prompt)
	}
}

func TestRequests(t *testing.T) {
	_, c, _ := runKernel(t)
	for _, code := range []string{"value 1", "print a", "value 1"} {
		if _, err := c.Execute(code, timeout); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		msgType string
		content any
		want    string // substring of the reply content
	}{
		{"kernel_info_request", struct{}{}, `"protocol_version":"5.3"`},
		{"kernel_info_request", struct{}{}, `"name":"go"`},
		{"complete_request", wire.CompleteRequest{Code: "fm", CursorPos: 2}, `"matches":["fmt"],"cursor_start":0,"cursor_end":2`},
		{"complete_request", wire.CompleteRequest{Code: "zz", CursorPos: 2}, `"matches":[]`},
		{"inspect_request", wire.InspectRequest{Code: "fmt", CursorPos: 1}, `"found":true`},
		{"inspect_request", wire.InspectRequest{Code: "nope", CursorPos: 1}, `"found":false,"data":{}`},
		{"is_complete_request", wire.IsCompleteRequest{Code: "func f() {"}, `"status":"incomplete","indent":"\t"`},
		{"is_complete_request", wire.IsCompleteRequest{Code: "x"}, `"status":"complete"`},
		{"history_request", wire.HistoryRequest{HistAccessType: "tail", N: 2}, `"history":[[1,2,"print a"],[1,3,"value 1"]]`},
		{"history_request", wire.HistoryRequest{HistAccessType: "tail", N: 1, Output: true}, `[[1,3,["value 1","1"]]]`},
		{"history_request", wire.HistoryRequest{HistAccessType: "range", Session: 0, Start: 1, Stop: 2}, `[[1,1,"value 1"]]`},
		{"history_request", wire.HistoryRequest{HistAccessType: "search", Pattern: "value*", Unique: true}, `[[1,3,"value 1"]]`},
		{"history_request", wire.HistoryRequest{HistAccessType: "search", Pattern: "v?lue 1", N: 5}, `[[1,1,"value 1"],[1,3,"value 1"]]`},
		{"comm_info_request", struct{}{}, `"comms":{}`},
	}
	for _, tc := range tests {
		t.Run(tc.msgType, func(t *testing.T) {
			ex, err := c.Request(c.Ch.Shell, tc.msgType, tc.content, timeout)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(ex.Reply.Content), tc.want) {
				t.Errorf("reply %s lacks %s", ex.Reply.Content, tc.want)
			}
			if got := kinds(ex.IOPub); got != "status,status" {
				t.Errorf("IOPub %s, want busy and idle only", got)
			}
		})
	}
	// A request whose content is not what its type says gets an error reply.
	ex, err := c.Request(c.Ch.Shell, "complete_request", []int{1}, timeout)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ex.Reply.Content), `"status":"error","ename":"BadRequest"`) || ex.Reply.Header.MsgType != "complete_reply" {
		t.Errorf("malformed complete_request: %s %s", ex.Reply.Header.MsgType, ex.Reply.Content)
	}

	// comm_open has no reply: it is answered with comm_close on IOPub.
	open, _ := c.Send(c.Ch.Shell, "comm_open", wire.CommOpen{CommID: "c1", TargetName: "widgets"})
	iopub, err := c.AwaitIdle(open, timeout)
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(iopub); got != "status,comm_close,status" || !strings.Contains(string(iopub[1].Content), `"comm_id":"c1"`) {
		t.Errorf("comm_open: IOPub %s", got)
	}
	if _, err := c.AwaitReply(open, 100*time.Millisecond); err == nil {
		t.Error("comm_open got a shell reply")
	}
}

func TestShutdownRestart(t *testing.T) {
	_, c, restarted := runKernel(t)
	ex, err := c.Request(c.Ch.Control, "shutdown_request", wire.ShutdownRequest{Restart: true}, timeout)
	if err != nil {
		t.Fatal(err)
	}
	var r wire.ShutdownReply
	if ex.Reply.DecodeContent(&r); r.Status != "ok" || !r.Restart {
		t.Errorf("shutdown_reply %+v", r)
	}
	select {
	case restart := <-restarted:
		if !restart {
			t.Error("Run reported no restart")
		}
	case <-time.After(timeout):
		t.Fatal("Run did not return after shutdown_request")
	}
}

func TestHeartbeat(t *testing.T) {
	_, c, _ := runKernel(t)
	for i := 0; i < 3; i++ {
		if err := c.Heartbeat(timeout); err != nil {
			t.Fatal(err)
		}
	}
}
