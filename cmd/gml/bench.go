package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// benchmark is one `gml bench NAME` program.
type benchmark struct {
	summary string
	run     func(args []string) error
}

var benchmarks = map[string]benchmark{}

// registerBench adds a benchmark; it is called from init functions of this package
// (bench_kernel.go, bench_cpu.go, ...).
func registerBench(name, summary string, run func(args []string) error) {
	if _, dup := benchmarks[name]; dup {
		panic("gml: benchmark registered twice: " + name)
	}
	benchmarks[name] = benchmark{summary: summary, run: run}
}

func init() {
	register("bench", "run a benchmark, printing JSON lines: gml bench NAME [ARGS]", runBench)
}

func runBench(args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		names := make([]string, 0, len(benchmarks))
		for n := range benchmarks {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintln(os.Stderr, "usage: gml bench NAME [ARGS]\n\nbenchmarks:")
		for _, n := range names {
			fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, benchmarks[n].summary)
		}
		if len(args) == 0 {
			return fmt.Errorf("no benchmark named")
		}
		return nil
	}
	b, ok := benchmarks[args[0]]
	if !ok {
		return fmt.Errorf("unknown benchmark %q (gml bench lists them)", args[0])
	}
	return b.run(args[1:])
}

// benchResult is one line of benchmark output. Threads is the number of CPU threads a
// CPU benchmark used. Ref, RefValue and Ratio compare with a reference measured in the
// same run, when there is one.
type benchResult struct {
	Bench    string  `json:"bench"`
	Case     string  `json:"case"`
	Device   string  `json:"device,omitempty"`
	Threads  int     `json:"threads,omitempty"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Ref      string  `json:"ref,omitempty"`
	RefValue float64 `json:"ref_value,omitempty"`
	Ratio    float64 `json:"ratio,omitempty"`
}

// emit prints r as one JSON line on stdout.
func emit(r benchResult) {
	data, err := json.Marshal(r)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gml bench: encoding result: %v\n", err)
		return
	}
	fmt.Println(string(data))
}

// defaultAnchors is ../shared/anchors/pytorch_h200.jsonl beside the repository that
// holds the working directory: the PyTorch figures the GPU benchmarks compare with.
func defaultAnchors() string {
	dir, _ := os.Getwd()
	for dir != "/" && dir != "." {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "anchors", "pytorch_h200.jsonl")
		}
		dir = filepath.Dir(dir)
	}
	return filepath.Join("..", "shared", "anchors", "pytorch_h200.jsonl")
}

// readAnchors calls line for each line of the anchors file (JSON lines).
func readAnchors(path string, line func([]byte)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line(sc.Bytes())
	}
	return sc.Err()
}
