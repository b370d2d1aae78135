package test

import (
	"fmt"
	"strings"
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
// it with how long the reply took after the interrupt.
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
			if out := mustRun(t, p, "fmt.Println(\"own output\")"); out != "own output\n" {
				t.Errorf("the next cell printed %q", out)
			}
		})
	}
}
