package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
)

// program is one `gml bench NAME` benchmark.
type program struct {
	summary string
	run     func(args []string) error
}

var programs = map[string]program{}

// stdout receives the result lines (a test swaps it).
var stdout io.Writer = os.Stdout

// register adds a benchmark; each benchmark file calls it from init.
func register(name, summary string, run func(args []string) error) {
	if _, dup := programs[name]; dup {
		panic("bench: benchmark registered twice: " + name)
	}
	programs[name] = program{summary: summary, run: run}
}

// Names lists the benchmarks, sorted.
func Names() []string {
	names := make([]string, 0, len(programs))
	for n := range programs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Summary is the one-line description of benchmark name ("" when there is none).
func Summary(name string) string { return programs[name].summary }

// Run runs benchmark name with its command-line arguments (flags of that benchmark),
// printing JSON lines on stdout.
func Run(name string, args []string) error {
	p, ok := programs[name]
	if !ok {
		return fmt.Errorf("unknown benchmark %q (gml bench lists them)", name)
	}
	return p.run(args)
}

// result is one line of benchmark output. Impl names the implementation behind the
// figure where there are several (the GEMM behind products: native, go or openblas);
// Threads is the number of CPU threads it used. Ref, RefThreads, RefValue and Ratio
// (ours over the reference) are set only when a comparable reference exists.
type result struct {
	Bench      string  `json:"bench"`
	Case       string  `json:"case"`
	Device     string  `json:"device,omitempty"`
	Devices    int     `json:"devices,omitempty"` // distinct physical devices (multigpu)
	Parts      int     `json:"parts,omitempty"`   // parts of a meta device (multigpu)
	Impl       string  `json:"impl,omitempty"`
	Threads    int     `json:"threads,omitempty"`
	Value      float64 `json:"value"`
	Unit       string  `json:"unit"`
	Ref        string  `json:"ref,omitempty"`
	RefThreads int     `json:"ref_threads,omitempty"`
	RefValue   float64 `json:"ref_value,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"`
}

// compare fills r's reference fields from ref.
func (r *result) compare(ref reference) {
	r.Ref, r.RefThreads, r.RefValue = ref.name, ref.threads, ref.value
	r.Ratio = round(r.Value/ref.value, 3)
}

// emit prints r as one JSON line on stdout.
func emit(r result) {
	data, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gml bench: encoding result: %v\n", err)
		return
	}
	fmt.Fprintln(stdout, string(data))
}

// startCPUProfile writes a Go CPU profile (go tool pprof) of what follows to path until
// the returned function is called; with an empty path it does nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
