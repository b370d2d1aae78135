package bench

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gml-dev/gml/kernel/client"
	"github.com/gml-dev/gml/kernel/wire"
)

func init() {
	register("kernel", "gml kernel over the real protocol: start to kernel_info_reply, 1+1 round trip, a 10M-iteration sum interpreted and in a %%go cell", benchKernel)
}

// benchKernel starts `gml kernel` as a child process several times, timing process start
// to kernel_info_reply and to the first cell's result, then times the round trip of a
// `1+1` execute_request until both execute_reply and status idle have arrived.
func benchKernel(args []string) error {
	fs := flag.NewFlagSet("bench kernel", flag.ContinueOnError)
	n := fs.Int("n", 200, "timed `1+1` round trips")
	starts := fs.Int("starts", 5, "kernel processes to start for the start-up times")
	ipc := fs.Bool("ipc", false, "use the ipc transport instead of tcp")
	bin := fs.String("bin", "", "the gml binary whose kernel is started (default: this program)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *starts < 1 {
		return errors.New("-n and -starts must be at least 1")
	}
	if *bin == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		*bin = self
	}
	dir, err := os.MkdirTemp("", "gml-bench-kernel-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	env := append(os.Environ(), "GML_HISTORY_FILE="+filepath.Join(dir, "history.jsonl"))

	var toInfo, toResult []time.Duration
	var p *client.Process
	for i := 0; i < *starts; i++ {
		if p != nil {
			if err := p.Shutdown(5 * time.Second); err != nil {
				return err
			}
		}
		info, err := client.LocalConnection(dir, *ipc)
		if err != nil {
			return err
		}
		if p, err = client.Launch(*bin, []string{"kernel"}, dir, info, env); err != nil {
			return err
		}
		req, err := p.Client.Send(p.Client.Ch.Shell, "kernel_info_request", struct{}{})
		if err != nil {
			return err
		}
		if _, err := p.Client.AwaitReply(req, 10*time.Second); err != nil {
			p.Kill()
			return fmt.Errorf("%w; kernel output:\n%s", err, p.Output())
		}
		toInfo = append(toInfo, time.Since(p.Started))
		if _, err := p.Client.WaitReady(10 * time.Second); err != nil {
			p.Kill()
			return err
		}
		if err := onePlusOne(p.Client); err != nil {
			p.Kill()
			return fmt.Errorf("%w; kernel output:\n%s", err, p.Output())
		}
		toResult = append(toResult, time.Since(p.Started))
	}
	defer p.Shutdown(5 * time.Second)

	for i := 0; i < 20; i++ { // warm up
		if err := onePlusOne(p.Client); err != nil {
			return err
		}
	}
	trips := make([]time.Duration, *n)
	for i := range trips {
		start := time.Now()
		if err := onePlusOne(p.Client); err != nil {
			return err
		}
		trips[i] = time.Since(start)
	}
	transport := "tcp"
	if *ipc {
		transport = "ipc"
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	emit(result{Bench: "kernel", Case: "start_to_kernel_info_reply_p50_" + transport, Value: ms(percentile(toInfo, 0.5)), Unit: "ms"})
	emit(result{Bench: "kernel", Case: "start_to_first_result_p50_" + transport, Value: ms(percentile(toResult, 0.5)), Unit: "ms"})
	emit(result{Bench: "kernel", Case: "roundtrip_1plus1_p50_" + transport, Value: ms(percentile(trips, 0.5)), Unit: "ms"})
	emit(result{Bench: "kernel", Case: "roundtrip_1plus1_p90_" + transport, Value: ms(percentile(trips, 0.9)), Unit: "ms"})
	return benchSum(p.Client, ms)
}

// sumCells define the 10M-iteration sum of issue 16 interpreted and in a %%go cell
// (compiled by the go toolchain into a plugin), the way a notebook writes it.
const (
	sumInterpreted = "func sumTo(n int) int {\n\ts := 0\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn s\n}"
	sumGoCell      = "%%go\nfunc SumGo(n int) int {\n\ts := 0\n\tfor i := range n {\n\t\ts += i\n\t}\n\treturn s\n}"
	sumWant        = "49999995000000"
)

// benchSum times the execute round trip of a cell calling the sum of 0..10M-1, best of
// 5, interpreted and compiled by a %%go cell. The %%go case needs the go toolchain the
// kernel was built with; without it the case is reported on stderr and skipped.
func benchSum(c *client.Client, ms func(time.Duration) float64) error {
	best := func(call string) (time.Duration, error) {
		var b time.Duration
		for k := 0; k < 5; k++ {
			start := time.Now()
			ex, err := c.Execute(call, 60*time.Second)
			if err != nil {
				return 0, err
			}
			d := time.Since(start)
			if !hasResult(ex, sumWant) {
				return 0, fmt.Errorf("%s did not give %s: %s", call, sumWant, ex.Reply.Content)
			}
			if k == 0 || d < b {
				b = d
			}
		}
		return b, nil
	}
	if _, err := c.Execute(sumInterpreted, 10*time.Second); err != nil {
		return err
	}
	d, err := best("sumTo(10_000_000)")
	if err != nil {
		return err
	}
	emit(result{Bench: "kernel", Case: "sum10M_interpreted", Value: ms(d), Unit: "ms"})
	ex, err := c.Execute(sumGoCell, 10*time.Minute)
	if err != nil {
		return err
	}
	if !strings.Contains(string(ex.Reply.Content), `"status":"ok"`) {
		fmt.Fprintf(os.Stderr, "gml bench kernel: the %%%%go cell failed, sum10M_gocell skipped: %s\n", ex.Reply.Content)
		return nil
	}
	d, err = best("SumGo(10_000_000)")
	if err != nil {
		return err
	}
	emit(result{Bench: "kernel", Case: "sum10M_gocell", Value: ms(d), Unit: "ms"})
	return nil
}

// hasResult reports whether an execution gave the execute_result text want.
func hasResult(ex *client.Exchange, want string) bool {
	for _, m := range ex.Outputs() {
		var r wire.ExecuteResult
		if m.Header.MsgType == "execute_result" && m.DecodeContent(&r) == nil && r.Data["text/plain"] == want {
			return true
		}
	}
	return false
}

// onePlusOne executes `1+1` and checks that the result is 2.
func onePlusOne(c *client.Client) error {
	ex, err := c.Execute("1+1", 10*time.Second)
	if err != nil {
		return err
	}
	if hasResult(ex, "2") {
		return nil
	}
	return fmt.Errorf("1+1 did not produce the execute_result 2: %s", ex.Reply.Content)
}

// percentile returns the q-quantile (0 <= q <= 1) of ds by the nearest-rank method.
func percentile(ds []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
