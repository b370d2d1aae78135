package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gml-dev/gml/kernel/client"
	"github.com/gml-dev/gml/kernel/wire"
)

// Hostile cells over the real protocol: interrupts that must stop library loops, runaway
// recursion, impossible allocations, a worker that dies, and memory over many cells.
// Timings are generous: these tests run on loaded 2-core machines and on a machine
// whose default device is a real GPU.

// stopTimeout bounds how long an interrupted cell may take to reply: one batch of the
// loops below takes milliseconds, so this is slack for a loaded machine.
const stopTimeout = 10 * time.Second

// send sends an execute_request for code without waiting for it.
func send(t *testing.T, p *client.Process, code string) *wire.Message {
	t.Helper()
	req := wire.DefaultExecuteRequest()
	req.Code = code
	m, err := p.Client.Send(p.Client.Ch.Shell, "execute_request", req)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// streamText concatenates the stream output among ms.
func streamText(ms []*wire.Message) string {
	var b strings.Builder
	for _, m := range ms {
		if m.Header.MsgType == "stream" {
			var s wire.Stream
			m.DecodeContent(&s)
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

// waitOutput waits until the running cell req has printed want.
func waitOutput(t *testing.T, p *client.Process, req *wire.Message, want string) {
	t.Helper()
	deadline := time.Now().Add(cellTimeout)
	for time.Now().Before(deadline) {
		if strings.Contains(streamText(p.Client.Peek(req)), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the cell did not print %q within %v; it printed %q\nkernel output:\n%s", want, cellTimeout,
		streamText(p.Client.Peek(req)), p.Output())
}

// interrupt sends interrupt_request, waits for the interrupted cell's reply and returns
// it with how long the reply and status idle took after the interrupt.
func interrupt(t *testing.T, p *client.Process, req *wire.Message) (wire.ExecuteReply, *client.Exchange, time.Duration) {
	t.Helper()
	start := time.Now()
	if _, err := p.Client.Request(p.Client.Ch.Control, "interrupt_request", struct{}{}, cellTimeout); err != nil {
		t.Fatal(err)
	}
	ex, err := p.Client.Await(req, cellTimeout)
	if err != nil {
		t.Fatalf("no reply after the interrupt: %v\nkernel output:\n%s", err, p.Output())
	}
	var r wire.ExecuteReply
	if err := ex.Reply.DecodeContent(&r); err != nil {
		t.Fatal(err)
	}
	return r, ex, time.Since(start)
}

// modelCells builds a small regression model and data in the kernel: x (n, 64), y (n, 1).
func modelCells(t *testing.T, p *client.Process, n int) {
	t.Helper()
	mustRun(t, p, fmt.Sprintf(`import "fmt"
n := %d
xs := make([]float32, n*64)
ys := make([]float32, n)
for i := range xs {
	xs[i] = float32(i%%13) / 13
}
for i := range ys {
	ys[i] = float32(i%%7) / 7
}
x, _ := tensor.FromFloat32s(tensor.Shape{n, 64}, xs)
y, _ := tensor.FromFloat32s(tensor.Shape{n, 1}, ys)
m := nn.Sequential(nn.Dense(128, nn.Activation("relu"), nn.InputShape(64)), nn.Dense(128, nn.Activation("relu")), nn.Dense(1))
if err := m.Compile(nn.Adam(0.001), nn.Loss("mse")); err != nil {
	panic(err)
}`, n))
}

// weightsCell prints a checksum of every weight of m.
const weightsCell = `ws, err := m.Weights()
if err != nil {
	panic(err)
}
sum := 0.0
for _, w := range ws {
	for k := 0; k < w.Shape().Size(); k++ {
		sum += w.Float(k) * float64(k%7+1)
	}
}
fmt.Printf("%.9g\n", sum)`

func TestInterruptStopsFit(t *testing.T) {
	p := startKernel(t, false)
	modelCells(t, p, 2048)
	req := send(t, p, `h, err := m.Fit(x, y, nn.Epochs(100000), nn.BatchSize(16), nn.Verbose(0),
	nn.Callbacks(nn.BatchFunc(func(b int, logs nn.Logs) error {
		fmt.Println("batch", b)
		return nil
	})))
fmt.Println("Fit returned", err, len(h.Epochs))`)
	waitOutput(t, p, req, "batch 5\n")
	r, ex, took := interrupt(t, p, req)
	if r.Status != "error" || r.EName != "Interrupted" {
		t.Fatalf("interrupted Fit: status %s, %s", r.Status, errText(r))
	}
	if took > stopTimeout {
		t.Errorf("Fit stopped %v after the interrupt", took)
	}
	t.Logf("interrupt to reply and idle, mid-Fit: %v", took)
	if strings.Contains(text(ex), "Fit returned") {
		t.Errorf("the cell went on after its interrupt: %q", text(ex))
	}
	// The reply came after Fit stopped: the weights no longer change, and later cells
	// print only their own output.
	first := mustRun(t, p, weightsCell)
	time.Sleep(500 * time.Millisecond)
	second := mustRun(t, p, weightsCell)
	if first != second {
		t.Errorf("the weights changed after the interrupted cell's reply: %q then %q", first, second)
	}
	if strings.Contains(first+second, "batch") {
		t.Errorf("Fit's output appeared in later cells: %q, %q", first, second)
	}
	// The model is usable: a short Fit runs to its end.
	if out := mustRun(t, p, `h, err = m.Fit(x, y, nn.Epochs(1), nn.BatchSize(256), nn.Verbose(0))
fmt.Println("again", err)`); !strings.Contains(out, "again <nil>") {
		t.Errorf("Fit after the interrupt: %q", out)
	}
}

func TestInterruptStopsEvaluateAndPredict(t *testing.T) {
	p := startKernel(t, false)
	// Batches of one sample make both loops run for many seconds on any device.
	modelCells(t, p, 200000)
	for _, call := range []string{"m.Evaluate(x, y, nn.BatchSize(1))", "m.Predict(x, nn.BatchSize(1))"} {
		t.Run(strings.Split(call, "(")[0], func(t *testing.T) {
			req := send(t, p, fmt.Sprintf("fmt.Println(\"start\")\n_, err := %s\nfmt.Println(\"returned\", err)", call))
			waitOutput(t, p, req, "start\n")
			time.Sleep(500 * time.Millisecond) // well inside the loop
			r, ex, took := interrupt(t, p, req)
			if r.Status != "error" || r.EName != "Interrupted" {
				t.Fatalf("status %s, %s; output %q", r.Status, errText(r), text(ex))
			}
			if took > stopTimeout {
				t.Errorf("stopped %v after the interrupt", took)
			}
			t.Logf("interrupt to reply and idle, mid-%s: %v", strings.Split(call, "(")[0], took)
			if out := mustRun(t, p, "fmt.Println(\"own output\")"); out != "own output\n" {
				t.Errorf("the next cell printed %q", out)
			}
		})
	}
}

func TestInterruptStopsAnAgLoop(t *testing.T) {
	p := startKernel(t, false)
	mustRun(t, p, `import "fmt"
ag.SetSeed(1)
lin := ag.NewLinear(64, 1)
xs := make([]float64, 256*64)
for i := range xs {
	xs[i] = float64(i%13) / 13
}
x := ag.FromFloat64s([]int{256, 64}, xs)
y := ag.FromFloat64s([]int{256, 1}, xs[:256])
opt := ag.Adam(ag.Parameters(lin), 0.001)`)
	req := send(t, p, `for step := 0; ; step++ {
	opt.ZeroGrad()
	ag.MSE(lin.Forward(x), y).Backward()
	opt.Step()
	fmt.Println("step", step)
}`)
	waitOutput(t, p, req, "step 5\n")
	r, _, took := interrupt(t, p, req)
	if r.Status != "error" || r.EName != "Interrupted" {
		t.Fatalf("interrupted ag loop: status %s, %s", r.Status, errText(r))
	}
	t.Logf("interrupt to reply and idle, mid ag loop: %v", took)
	const sum = "s := 0.0\nfor k, v := range ag.Parameters(lin)[0].Float64s() {\n\ts += v * float64(k%7+1)\n}\nfmt.Printf(\"%.9g\\n\", s)"
	first := mustRun(t, p, sum)
	time.Sleep(500 * time.Millisecond)
	if second := mustRun(t, p, sum); first != second || strings.Contains(first+second, "step") {
		t.Errorf("after the interrupted loop's reply: %q then %q", first, second)
	}
	// The optimizer works on.
	if out := mustRun(t, p, "opt.ZeroGrad()\nl := ag.MSE(lin.Forward(x), y)\nl.Backward()\nopt.Step()\nfmt.Println(l.Item() > 0)"); out != "true\n" {
		t.Errorf("a step after the interrupt printed %q", out)
	}
}

func TestRunawayRecursionKeepsTheKernel(t *testing.T) {
	p := startKernel(t, false)
	mustRun(t, p, "x := 41")
	start := time.Now()
	r, _ := run(t, p, "func f(n int) int { return f(n+1) + 1 }\nf(0)")
	t.Logf("runaway recursion to its error: %v", time.Since(start))
	if r.Status != "error" || r.EName != "StackOverflow" || !strings.Contains(r.EValue, "runaway recursion in f:") ||
		!strings.Contains(r.EValue, "nested calls") {
		t.Fatalf("runaway recursion: status %s, %s", r.Status, errText(r))
	}
	if got := mustRun(t, p, "x + 1"); got != "42" {
		t.Errorf("after the recursion x + 1 = %q, want 42", got)
	}
}

func TestImpossibleAllocationsAreErrors(t *testing.T) {
	p := startKernel(t, false)
	mustRun(t, p, "x := 41")
	tests := []struct{ name, code, want string }{
		{"make 1 TiB", "b := make([]byte, 1<<40)\nlen(b)", "cannot allocate 1.0 TiB for make([]uint8, 1099511627776)"},
		{"tensor of 1 TiB", "big := tensor.New(tensor.F32, 1<<38)\nbig.Shape()", "cannot allocate 1.0 TiB for tensor.New(f32[274877906944])"},
		{"device buffer of 1 TiB", `r, err := rt.Default()
if err != nil {
	panic(err)
}
g := tensor.NewGraph()
ones := tensor.Full(g, tensor.F32, tensor.Shape{1 << 38}, 1)
e, err := r.Compile([]*tensor.Node{ones})
if err == nil {
	_, err = e.Run(nil)
}
if err != nil {
	panic(err)
}`, "1.0 TiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := run(t, p, tc.code)
			// The CPU says what is available, the GPU what is free of its heap.
			if text := errText(r); r.Status != "error" || !strings.Contains(text, tc.want) ||
				!strings.Contains(text, "available") && !strings.Contains(text, "free of") {
				t.Errorf("status %s, %s\nwant an error with %q and the memory available", r.Status, text, tc.want)
			}
			if got := mustRun(t, p, "x + 1"); got != "42" {
				t.Errorf("after the allocation x + 1 = %q, want 42", got)
			}
		})
	}
}

// statuses returns the execution states of the status messages among ms, in order.
func statuses(ms []*wire.Message) []string {
	var s []string
	for _, m := range ms {
		if m.Header.MsgType == "status" {
			var st wire.Status
			m.DecodeContent(&st)
			s = append(s, st.ExecutionState)
		}
	}
	return s
}

// workerPid returns the pid of the kernel's worker process, waiting for one to exist.
// Linux lists children per thread of the parent.
func workerPid(t *testing.T, p *client.Process) int {
	t.Helper()
	pid := p.Cmd.Process.Pid
	for deadline := time.Now().Add(cellTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, task := range tasks {
			data, _ := os.ReadFile(task)
			if f := strings.Fields(string(data)); len(f) > 0 {
				n, err := strconv.Atoi(f[0])
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
	}
	t.Fatal("the kernel has no worker process")
	return 0
}

// kill sends SIGKILL to the worker, as the OOM killer does.
func killWorker(t *testing.T, p *client.Process) {
	t.Helper()
	if err := syscall.Kill(workerPid(t, p), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

func TestWorkerDeathIsReported(t *testing.T) {
	p := startKernel(t, false)
	// A fatal error of the runtime: Go's stack limit set far below what a call needs.
	mustRun(t, p, "kept := 1")
	r, ex := run(t, p, "import \"runtime/debug\"\ndebug.SetMaxStack(1 << 12)\nfunc deep(n int) int {\n\tif n == 0 {\n\t\treturn 0\n\t}\n\treturn deep(n-1) + 1\n}\ndeep(100)")
	checkDeath(t, p, r, "fatal error: stack overflow")
	if tb := errText(r); !strings.Contains(tb, "The Go runtime's report:\nruntime: goroutine stack exceeds 4096-byte limit") {
		t.Errorf("the crash report is missing or incomplete:\n%s", tb)
	}
	// Its first lines may go out as stderr before the runtime starts the crash file;
	// the goroutine trace after them must not.
	if strings.Contains(streamText(ex.Outputs()), "[running]:") {
		t.Errorf("the crash report was also sent as stderr: %q", streamText(ex.Outputs()))
	}
	// What the OOM killer does, during a cell.
	mustRun(t, p, "kept := 1")
	req := send(t, p, "println(\"looping\")\nfor {\n}")
	waitOutput(t, p, req, "looping\n")
	killed := time.Now()
	killWorker(t, p)
	ex, err := p.Client.Await(req, cellTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("worker killed during a cell to its reply and idle: %v", time.Since(killed))
	ex.Reply.DecodeContent(&r)
	checkDeath(t, p, r, "killed by SIGKILL")
	// And between cells: the next cell says so, and runs.
	killWorker(t, p)
	time.Sleep(time.Second)
	out := mustRun(t, p, "1+1")
	if !strings.Contains(out, "died between cells") || !strings.Contains(out, "killed by SIGKILL") || !strings.HasSuffix(out, "2") {
		t.Errorf("the cell after a death between cells printed %q", out)
	}
	// The kernel logs each worker's start: the first and the three restarts.
	if ready := readyRE.FindAllStringSubmatch(p.Output(), -1); len(ready) != 4 {
		t.Errorf("the kernel logged %d worker starts, want 4:\n%s", len(ready), p.Output())
	} else {
		t.Logf("worker start to ready: first %s, after each death %s, %s, %s", ready[0][1], ready[1][1], ready[2][1], ready[3][1])
	}
}

// readyRE finds the kernel's log lines of a worker that is ready.
var readyRE = regexp.MustCompile(`worker \d+ ready after (\S+)`)

// checkDeath checks the reply r of a cell during which the worker died, then that the
// kernel answers, that the state is gone and that cells run again.
func checkDeath(t *testing.T, p *client.Process, r wire.ExecuteReply, cause string) {
	t.Helper()
	text := errText(r)
	if r.Status != "error" || r.EName != "KernelDied" || !strings.Contains(text, cause) || !strings.Contains(text, "All state is lost") ||
		!strings.Contains(text, "%go get") {
		t.Fatalf("status %s, %s\nwant KernelDied naming %q", r.Status, text, cause)
	}
	if _, err := p.Client.Request(p.Client.Ch.Control, "kernel_info_request", struct{}{}, cellTimeout); err != nil {
		t.Fatalf("kernel_info after the death: %v", err)
	}
	if r, _ := run(t, p, "kept"); r.Status != "error" {
		t.Error("a variable survived the death of the worker")
	}
	if got := mustRun(t, p, "1+1"); got != "2" {
		t.Errorf("1+1 after the restart = %q", got)
	}
}

func TestOutputAfterItsCellIsShownMarked(t *testing.T) {
	p := startKernel(t, false)
	mustRun(t, p, "import (\"fmt\"; \"time\")\ngo func() {\n\ttime.Sleep(300 * time.Millisecond)\n\tfmt.Println(\"late hello\")\n}()")
	time.Sleep(time.Second)
	_, ex := run(t, p, "fmt.Println(\"own\")")
	var streams []wire.Stream
	for _, m := range ex.Outputs() {
		if m.Header.MsgType == "stream" {
			var s wire.Stream
			m.DecodeContent(&s)
			streams = append(streams, s)
		}
	}
	all := fmt.Sprint(streams)
	if len(streams) < 3 || streams[0].Name != "stderr" || !strings.Contains(streams[0].Text, "written between cells") ||
		!strings.Contains(streams[1].Text, "late hello") || streams[len(streams)-1].Text != "own\n" {
		t.Errorf("streams of the next cell: %s", all)
	}
}

func TestInterruptThatCannotStop(t *testing.T) {
	p := startKernel(t, false)
	// time.Sleep in a cell ends with the interrupt.
	// Each cell prints first: an interrupt that comes before its cell has started is
	// not for it.
	req := send(t, p, "import (\"fmt\"; \"time\")\nfmt.Println(\"sleeping\")\ntime.Sleep(time.Hour)")
	waitOutput(t, p, req, "sleeping\n")
	if r, _, took := interrupt(t, p, req); r.EName != "Interrupted" || took > stopTimeout {
		t.Errorf("time.Sleep: %s after %v", errText(r), took)
	}
	// Compiled code that does not check: the notebook is told where the cell is, and a
	// second interrupt restarts the worker.
	req = send(t, p, "import \"sync\"\nvar wg sync.WaitGroup\nwg.Add(1)\nfmt.Println(\"waiting\")\nwg.Wait()")
	waitOutput(t, p, req, "waiting\n")
	if _, err := p.Client.Request(p.Client.Ch.Control, "interrupt_request", struct{}{}, cellTimeout); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, p, req, "does not check for interrupts")
	if !strings.Contains(streamText(p.Client.Peek(req)), "sync.(*WaitGroup).Wait") {
		t.Errorf("the note does not say where the cell is: %q", streamText(p.Client.Peek(req)))
	}
	r, _, _ := interrupt(t, p, req)
	if r.EName != "KernelRestarted" {
		t.Errorf("second interrupt: %s", errText(r))
	}
	if got := mustRun(t, p, "1+1"); got != "2" {
		t.Errorf("1+1 after the restart = %q", got)
	}
}

func TestClosuresSurviveAnInterrupt(t *testing.T) {
	p := startKernel(t, false)
	mustRun(t, p, "func counter() func() int {\n\tn := 0\n\treturn func() int {\n\t\tn++\n\t\treturn n\n\t}\n}\nnext := counter()\nnext()")
	req := send(t, p, "println(\"looping\")\nfor {\n}")
	waitOutput(t, p, req, "looping\n")
	interrupt(t, p, req)
	if got := mustRun(t, p, "next()"); got != "2" {
		t.Errorf("a closure made before the interrupt returned %q, want 2", got)
	}
}

// TestGoCellsAfterAWorkerDeath checks that what a %%go cell loaded into the worker is
// reported lost when the worker dies, loads again into the new worker, and that the
// Go workspaces of both workers are removed (the dead one's by the supervisor).
func TestGoCellsAfterAWorkerDeath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds plugins with the go toolchain")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	tmp := t.TempDir()
	p := startKernel(t, false, "TMPDIR="+tmp)
	const goCell = "%%go\nfunc Triple(n int) int { return 3 * n }"
	buildGoCell := func() {
		t.Helper()
		ex, err := p.Client.Execute(goCell, 10*time.Minute) // the first plugin build compiles gml
		if err != nil {
			t.Fatal(err)
		}
		var r wire.ExecuteReply
		ex.Reply.DecodeContent(&r)
		if r.Status != "ok" {
			t.Fatalf("%%%%go cell: %s", errText(r))
		}
	}
	buildGoCell()
	if got := mustRun(t, p, "Triple(2)"); got != "6" {
		t.Fatalf("Triple(2) = %q", got)
	}
	dead := workerPid(t, p)
	if ws, _ := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("gml-go-%d-*", dead))); len(ws) != 1 {
		t.Fatalf("the worker's workspaces in TMPDIR: %v, want one", ws)
	}
	killWorker(t, p)
	for deadline := time.Now().Add(cellTimeout); workerPid(t, p) == dead; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no new worker after the death")
		}
	}
	r, ex := run(t, p, "Triple(2)")
	if out := text(ex); r.Status != "error" || !strings.Contains(out, "died between cells") || !strings.Contains(out, "%%go cells") {
		t.Errorf("after the death: status %s, output %q, %s", r.Status, out, errText(r))
	}
	if ws, _ := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("gml-go-%d-*", dead))); len(ws) != 0 {
		t.Errorf("the dead worker's workspace was left: %v", ws)
	}
	buildGoCell()
	if got := mustRun(t, p, "Triple(5)"); got != "15" {
		t.Errorf("Triple(5) in the new worker = %q", got)
	}
	if err := p.Shutdown(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if ws, _ := filepath.Glob(filepath.Join(tmp, "gml-go-*")); len(ws) != 0 {
		t.Errorf("workspaces left after the shutdown: %v", ws)
	}
}
