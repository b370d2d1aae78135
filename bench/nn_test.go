package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/parallel"
)

// On the CPU the step is compared only with a reference file's figure at our thread
// count; without a file it has no ratio (the H200 figures do not apply).
func TestBenchNNReference(t *testing.T) {
	quick := []string{"-device", "cpu", "-case", "mlp784_b32", "-time", "1ms"}
	rs := capture(t, "nn", quick...)
	if len(rs) != 1 || rs[0].Threads != parallel.Workers() || rs[0].Ref != "" || rs[0].Ratio != 0 || !(rs[0].Value > 0) {
		t.Fatalf("without -ref: %+v", rs)
	}
	ref := filepath.Join(t.TempDir(), "torch.jsonl")
	os.WriteFile(ref, fmt.Appendf(nil, `{"name": "train_step_cpu", "workload": "mlp784_b32", "threads": %d, "ms": 0.5, "torch": "2.11.0"}
{"name": "train_step_cpu", "workload": "mlp784_b32", "threads": %d, "ms": 99, "torch": "2.11.0"}
`, parallel.Workers(), parallel.Workers()+1), 0o644)
	rs = capture(t, "nn", append(quick, "-ref", ref)...)
	if r := rs[0]; r.Ref != "pytorch_eager_cpu 2.11.0" || r.RefValue != 0.5 || r.RefThreads != parallel.Workers() || r.Ratio != round(r.Value/0.5, 3) {
		t.Fatalf("with -ref: %+v", r)
	}
	if err := Run("nn", []string{"-device", "tpu"}); err == nil {
		t.Error("-device tpu accepted")
	}
}

func TestParseTiles(t *testing.T) {
	tiles, err := parseTiles("128,128,16,8,8;64,64,32,4,4,16")
	if err != nil || len(tiles) != 2 || tiles[0].WarpN != 8 || tiles[1].WarpN != 16 || tiles[1].GroupM != 16 {
		t.Fatalf("got %+v, %v", tiles, err)
	}
	if _, err := parseTiles("1,2,3"); err == nil {
		t.Error("a 3-value tile parsed")
	}
}

// The multigpu benchmark labels each line with its parts and the distinct physical
// devices behind them, and compares with one part.
func TestBenchMultiGPU(t *testing.T) {
	rs := capture(t, "multigpu", "-device", "cpu", "-units", "16", "-layers", "2", "-batch", "8", "-time", "1ms", "-parts", "1,2", "-modes", "dp,tp,pp")
	if g := capture(t, "multigpu", "-device", "cpu", "-units", "16", "-layers", "2", "-batch", "8", "-time", "1ms", "-parts", "1,4", "-modes", "tpxdp"); len(g) != 2 || g[1].Parts != 4 || !(g[1].Ratio > 0) {
		t.Errorf("tpxdp: %+v", g)
	}
	if len(rs) != 6 {
		t.Fatalf("%d lines: %+v", len(rs), rs)
	}
	for i, r := range rs {
		if r.Devices != 1 || r.Parts != 1+i%2 || !(r.Value > 0) || r.Unit != "samples/s" || (r.Parts == 2) != (r.Ratio > 0) {
			t.Errorf("line %d: %+v", i, r)
		}
	}
	if err := Run("multigpu", []string{"-modes", "zp"}); err == nil {
		t.Error("-modes zp accepted")
	}
}
