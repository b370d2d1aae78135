package test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gml-dev/gml/kernel/client"
	"github.com/gml-dev/gml/kernel/wire"
)

// cellTimeout bounds one cell; the first cell also waits for the interpreter to start.
const cellTimeout = 30 * time.Second

// startKernel runs `gml kernel` on a fresh local connection and waits until it answers;
// the kernel is shut down when the test ends.
func startKernel(t *testing.T, ipc bool, env ...string) *client.Process {
	t.Helper()
	dir := t.TempDir()
	info, err := client.LocalConnection(dir, ipc)
	if err != nil {
		t.Fatal(err)
	}
	return launch(t, dir, info, env...)
}

// launch starts a kernel on info, with env added to the environment, and waits until
// it answers.
func launch(t *testing.T, dir string, info wire.ConnectionInfo, env ...string) *client.Process {
	t.Helper()
	env = append(append(os.Environ(), "GML_HISTORY_FILE="+filepath.Join(dir, "history.jsonl")), env...)
	p, err := client.Launch(gmlBin, []string{"kernel"}, dir, info, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Shutdown(5 * time.Second); err != nil && p.Alive() {
			t.Errorf("shutting the kernel down: %v", err)
		}
		if t.Failed() {
			t.Logf("kernel output:\n%s", p.Output())
		}
	})
	if _, err := p.Client.WaitReady(cellTimeout); err != nil {
		t.Fatalf("%v\nkernel output:\n%s", err, p.Output())
	}
	return p
}

// run executes code and returns the reply content and the exchange.
func run(t *testing.T, p *client.Process, code string) (wire.ExecuteReply, *client.Exchange) {
	t.Helper()
	ex, err := p.Client.Execute(code, cellTimeout)
	if err != nil {
		t.Fatalf("executing %q: %v", code, err)
	}
	var r wire.ExecuteReply
	if err := ex.Reply.DecodeContent(&r); err != nil {
		t.Fatal(err)
	}
	return r, ex
}

// mustRun executes code, fails the test unless it succeeds, and returns its text: the
// stream output followed by the text/plain of its result.
func mustRun(t *testing.T, p *client.Process, code string) string {
	t.Helper()
	r, ex := run(t, p, code)
	if r.Status != "ok" {
		t.Fatalf("%q: status %s: %s", code, r.Status, errText(r))
	}
	return text(ex)
}

// errText renders the error of a reply: ename, evalue and traceback.
func errText(r wire.ExecuteReply) string {
	if r.Error == nil {
		return "(no error)"
	}
	return r.EName + ": " + r.EValue + "\n" + strings.Join(r.Traceback, "\n")
}

// text concatenates an exchange's stream text and text/plain results.
func text(ex *client.Exchange) string {
	var b strings.Builder
	for _, m := range ex.Outputs() {
		switch m.Header.MsgType {
		case "stream":
			var s wire.Stream
			m.DecodeContent(&s)
			b.WriteString(s.Text)
		case "execute_result", "display_data":
			var d wire.DisplayData
			m.DecodeContent(&d)
			if s, ok := d.Data["text/plain"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

func TestInterruptInfiniteLoop(t *testing.T) {
	p := startKernel(t, false)
	mustRun(t, p, "x := 7")
	for _, via := range []string{"interrupt_request", "SIGINT"} {
		t.Run(via, func(t *testing.T) {
			req := wire.DefaultExecuteRequest()
			req.Code = "println(\"looping\")\nfor {}"
			m, err := p.Client.Send(p.Client.Ch.Shell, "execute_request", req)
			if err != nil {
				t.Fatal(err)
			}
			waitOutput(t, p, m, "looping\n") // an interrupt before the cell starts is not for it
			start := time.Now()
			if via == "SIGINT" {
				if err := p.Cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			} else if _, err := p.Client.Request(p.Client.Ch.Control, "interrupt_request", struct{}{}, cellTimeout); err != nil {
				t.Fatal(err)
			}
			ex, err := p.Client.Await(m, cellTimeout)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("the loop stopped %v after the interrupt, want under 1s", d)
			}
			var r wire.ExecuteReply
			ex.Reply.DecodeContent(&r)
			if r.Status != "error" {
				t.Errorf("interrupted cell: status %q, want error", r.Status)
			}
			if got := mustRun(t, p, "x"); got != "7" {
				t.Errorf("after the interrupt x = %q, want 7", got)
			}
		})
	}
}

func TestGoroutinePanic(t *testing.T) {
	p := startKernel(t, false)
	mustRun(t, p, "state := 41")
	r, ex := run(t, p, "import \"time\"\ngo func() { panic(\"boom in goroutine\") }()\ntime.Sleep(200 * time.Millisecond)")
	if r.Status != "error" || !strings.Contains(errText(r), "boom in goroutine") {
		t.Errorf("goroutine panic: status %q, error %s", r.Status, errText(r))
	}
	if outs := ex.Outputs(); len(outs) == 0 || outs[len(outs)-1].Header.MsgType != "error" {
		t.Errorf("goroutine panic: no error output")
	}
	if !p.Alive() {
		t.Fatal("the kernel died")
	}
	if got := mustRun(t, p, "state + 1"); got != "42" {
		t.Errorf("after the panic state + 1 = %q, want 42", got)
	}
}

func TestBadSignatureDropped(t *testing.T) {
	p := startKernel(t, false)
	c := p.Client
	forged, err := wire.NewMessage("execute_request", c.Session, "mallory", wire.ExecuteRequest{Code: "forged := 1", StoreHistory: true})
	if err != nil {
		t.Fatal(err)
	}
	wrongKey, _ := forged.Encode(wire.NewSigner("not-the-key"))
	unsigned := append([][]byte(nil), wrongKey...)
	unsigned[1] = []byte{}
	for _, frames := range [][][]byte{wrongKey, unsigned, {[]byte("junk")}} {
		if err := c.Ch.Shell.SendRaw(frames); err != nil {
			t.Fatal(err)
		}
	}
	// A peer that does not even speak ZMTP.
	junk, err := net.Dial("tcp", net.JoinHostPort(p.Info.IP, strconv.Itoa(p.Info.ShellPort)))
	if err != nil {
		t.Fatal(err)
	}
	junk.Write([]byte("GET / HTTP/1.0\r\n\r\n" + strings.Repeat("\xff", 300)))
	junk.Close()
	if _, err := c.Await(forged, 500*time.Millisecond); err == nil {
		t.Fatal("the kernel answered a message with a bad signature")
	}
	if !p.Alive() {
		t.Fatal("the kernel died on a bad signature")
	}
	if r, _ := run(t, p, "forged"); r.Status != "error" {
		t.Error("the forged cell was executed")
	}
	if !strings.Contains(p.Output(), "signature") {
		t.Errorf("the dropped message was not logged; kernel output:\n%s", p.Output())
	}
}

func TestShutdownRestart(t *testing.T) {
	dir := t.TempDir()
	info, err := client.LocalConnection(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	p := launch(t, dir, info)
	mustRun(t, p, "kept := 1")
	ex, err := p.Client.Request(p.Client.Ch.Control, "shutdown_request", wire.ShutdownRequest{Restart: true}, cellTimeout)
	if err != nil {
		t.Fatal(err)
	}
	var r wire.ShutdownReply
	if ex.Reply.DecodeContent(&r); r.Status != "ok" || !r.Restart {
		t.Errorf("shutdown_reply %+v, want ok with restart", r)
	}
	if err := p.Wait(5 * time.Second); err != nil {
		t.Fatalf("the kernel did not exit cleanly for the restart: %v", err)
	}
	p.Client.Close()
	// The front end starts a new kernel on the same connection: its state is fresh.
	q := launch(t, dir, info)
	if r, _ := run(t, q, "kept"); r.Status != "error" {
		t.Error("state survived the restart")
	}
	if got := mustRun(t, q, "1+1"); got != "2" {
		t.Errorf("1+1 after restart = %q", got)
	}
}

func TestInputRequest(t *testing.T) {
	p := startKernel(t, false)
	var prompts []string
	p.Client.OnInput = func(req wire.InputRequest) string {
		prompts = append(prompts, req.Prompt)
		return "Gopher"
	}
	tests := []struct{ name, code, want string }{
		{"display.Input", "import \"fmt\"\nname, err := display.Input(\"name? \")\nif err != nil {\n\tpanic(err)\n}\nfmt.Println(\"hello\", name)", "hello Gopher"},
		{"os.Stdin", "import (\n\t\"bufio\"\n\t\"fmt\"\n\t\"os\"\n)\nline, _ := bufio.NewReader(os.Stdin).ReadString('\\n')\nfmt.Printf(\"read %q\", line)", `read "Gopher\n"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prompts = nil
			if got := mustRun(t, p, tc.code); !strings.Contains(got, tc.want) || len(prompts) != 1 {
				t.Errorf("output %q (want %q), prompts %q", got, tc.want, prompts)
			}
		})
	}
	if prompts[0] != "" {
		t.Errorf("reading os.Stdin prompted %q, want no prompt", prompts[0])
	}
}

func TestIPCTransport(t *testing.T) {
	p := startKernel(t, true)
	if got := mustRun(t, p, "1+1"); got != "2" {
		t.Errorf("1+1 = %q over ipc", got)
	}
	if err := p.Client.Heartbeat(5 * time.Second); err != nil {
		t.Error(err)
	}
}

// rssKiB reads the resident set size of process pid from /proc.
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("parsing VmRSS %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}

// TestMemoryOverManyCellsIsBounded runs 2,000 cells of the kinds that used to make
// the kernel grow (yaegi kept every compiled chunk, every version of a redefined
// function and every temporary of top-level code) and bounds the growth of the
// worker's and the supervisor's resident memory per cell.
func TestMemoryOverManyCellsIsBounded(t *testing.T) {
	p := startKernel(t, false)
	mustRun(t, p, "import \"runtime/debug\"")
	worker := workerPid(t, p)
	// Each sample first returns freed memory to the OS, so RSS tracks what is retained.
	sample := func() (int, int) {
		mustRun(t, p, "debug.FreeOSMemory()")
		return rssKiB(t, worker), rssKiB(t, p.Cmd.Process.Pid)
	}
	cells := []string{"1+1", "func f(x int) int { return x + 1 }\nf(2)", "len(make([]byte, 1<<20))",
		"buf := make([]byte, 1<<20)\nlen(buf)", "s := 0\nfor i := 0; i < 100; i++ { s += i }\ns",
		"import \"fmt\"\nfmt.Println(s)"}
	const warmup, n = 500, 2000
	var w0, s0 int
	for i := 1; i <= n; i++ {
		mustRun(t, p, cells[i%len(cells)])
		if i == warmup {
			w0, s0 = sample()
		}
	}
	w1, s1 := sample()
	// The live heap grows by under 1 KiB a cell (kernel/exec's TestMemoryPerCellIsBounded);
	// RSS has the allocator's slack on top. The supervisor keeps the history of cells.
	const perCell = 4 // KiB
	for _, m := range []struct {
		name          string
		before, after int
	}{{"worker", w0, w1}, {"supervisor", s0, s1}} {
		per := float64(m.after-m.before) / (n - warmup)
		t.Logf("%s RSS: %d KiB after %d cells, %d KiB after %d: %.2f KiB a cell", m.name, m.before, warmup, m.after, n, per)
		if per > perCell {
			t.Errorf("the %s's RSS grew by %.2f KiB a cell, more than %d", m.name, per, perCell)
		}
	}
}

// TestJupyterKernelTest runs Debian's jupyter_kernel_test suite (test/jkt_gml.py)
// against the kernelspec installed by `gml install` into a temporary JUPYTER_DATA_DIR.
func TestJupyterKernelTest(t *testing.T) {
	const python = "/usr/bin/python3" // Debian's python, where python3-jupyter-kernel-test lives
	if out, err := exec.Command(python, "-c", "import jupyter_kernel_test").CombinedOutput(); err != nil {
		t.Fatalf("jupyter_kernel_test is not importable by %s (install python3-jupyter-kernel-test): %v\n%s", python, err, out)
	}
	dir := t.TempDir()
	env := append(os.Environ(), "JUPYTER_DATA_DIR="+filepath.Join(dir, "data"),
		"JUPYTER_RUNTIME_DIR="+filepath.Join(dir, "runtime"), "GML_HISTORY_FILE="+filepath.Join(dir, "history.jsonl"), "PYTHONDONTWRITEBYTECODE=1")
	install := exec.Command(gmlBin, "install")
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("gml install: %v\n%s", err, out)
	}
	cmd := exec.Command(python, "-m", "unittest", "-v", "jkt_gml")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("jupyter_kernel_test failed: %v\n%s", err, out)
	}
	// Only the pager test may skip: Go has no help pager, so there is no sample for it.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "skipped") && !strings.HasPrefix(line, "test_pager") && !strings.HasPrefix(line, "OK") {
			t.Errorf("jupyter_kernel_test skipped a test: %s", line)
		}
	}
	t.Logf("%s", out)
}
