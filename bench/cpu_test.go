package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gml-dev/gml/internal/openblas"
	"github.com/gml-dev/gml/runtime/cpu/gemm"
	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

// capture runs a benchmark with args and returns its result lines.
func capture(t *testing.T, name string, args ...string) []result {
	t.Helper()
	var buf bytes.Buffer
	stdout = &buf
	defer func() { stdout = os.Stdout }()
	if err := Run(name, args); err != nil {
		t.Fatalf("gml bench %s %v: %v", name, args, err)
	}
	var out []result
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// The CPU benchmark runs every case through the backend and says what ran on how
// many threads, on both sides. Speed is not checked.
func TestBenchCPU(t *testing.T) {
	quick := []string{"-sizes", "33", "-runs", "1", "-min_time", "1ms"}
	rs := capture(t, "cpu", append(quick, "-case", "matmul")...)
	if len(rs) != 1 {
		t.Fatalf("got %d lines, want 1: %+v", len(rs), rs)
	}
	r := rs[0]
	if r.Bench != "matmul" || r.Case != "f32_n33" || r.Impl != gemm.Default().String() || r.Threads != parallel.Workers() || !(r.Value > 0) {
		t.Errorf("matmul line %+v", r)
	}
	if openblas.Available() && gemm.Default() != gemm.OpenBLAS {
		if r.Ref != "openblas" || r.RefThreads != r.Threads || !(r.RefValue > 0) || !(r.Ratio > 0) {
			t.Errorf("matmul line without OpenBLAS on as many threads: %+v", r)
		}
	}

	// An earlier run as the reference: matched by case and thread count.
	base := filepath.Join(t.TempDir(), "base.jsonl")
	data, _ := json.Marshal(result{Bench: "matmul", Case: "f32_n33", Device: "cpu", Impl: "native", Threads: parallel.Workers(), Value: 1, Unit: "GFLOP/s"})
	os.WriteFile(base, data, 0o644)
	rs = capture(t, "cpu", append(quick, "-case", "matmul", "-ref", base)...)
	if rs[0].Ref != "gml native (base.jsonl)" || rs[0].RefValue != 1 || rs[0].Ratio != round(rs[0].Value, 3) {
		t.Errorf("line against a baseline: %+v", rs[0])
	}

	rs = capture(t, "cpu", append(quick, "-case", "elementwise")...)
	if len(rs) != 1 || rs[0].Case != "f32_add_16M" || rs[0].Unit != "GB/s" || !(rs[0].Value > 0) {
		t.Errorf("elementwise lines %+v", rs)
	}
}

func TestBenchCPUFlags(t *testing.T) {
	for _, args := range [][]string{{"-runs", "0"}, {"-sizes", "0"}, {"-case", "fft"}, {"-ref", "/nonexistent"}} {
		if err := Run("cpu", args); err == nil {
			t.Errorf("gml bench cpu %v: no error", args)
		}
	}
	if err := Run("nosuch", nil); err == nil {
		t.Error("an unknown benchmark ran")
	}
}

// The -sizes list: square sizes, MxNxK with transposes and batches, the training preset,
// and errors that name the bad entry.
func TestParseMatMulCases(t *testing.T) {
	cs, err := parseMatMulCases("256, 2048x128x512tb,128x512x2048ta/3,7x1x33tatb")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.name())
	}
	want := []string{"f32_n256", "f32_2048x128x512tb", "f32_128x512x2048ta_b3", "f32_7x1x33tatb"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("names %v, want %v", names, want)
	}
	if c := cs[2]; c.m != 128 || c.n != 512 || c.k != 2048 || !c.ta || c.tb || c.batch != 3 {
		t.Errorf("128x512x2048ta/3 parsed as %+v", c)
	}
	train, err := parseMatMulCases("train")
	if err != nil || len(train) < 10 {
		t.Errorf("train: %d cases, %v", len(train), err)
	}
	for _, bad := range []string{"0", "2x3", "2x3x0", "2x3x4tc", "2x3x4/0", "axbxc", "-5"} {
		if _, err := parseMatMulCases(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("-sizes %q: error %v, want one naming it", bad, err)
		}
	}
}
