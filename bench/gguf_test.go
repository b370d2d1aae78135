package bench

import (
	"strings"
	"testing"
)

// The gguf benchmark times every type and batch, and compares the byte rates with the
// copy of the same run. Speed is not checked.
func TestBenchGGUF(t *testing.T) {
	rs := capture(t, "gguf", "-device", "cpu", "-n", "256", "-k", "512", "-runs", "1", "-min_time", "1ms", "-copy", "1")
	if len(rs) != 1+3*2*2 {
		t.Fatalf("got %d lines, want 13: %+v", len(rs), rs)
	}
	if rs[0].Case != "copy_f32_1MiB" || !(rs[0].Value > 0) {
		t.Errorf("copy line %+v", rs[0])
	}
	for _, r := range rs[1:] {
		if r.Bench != "gguf" || r.Device != "cpu" || !(r.Value > 0) {
			t.Errorf("line %+v", r)
		}
		if strings.HasSuffix(r.Case, "_bytes") && (r.Unit != "GB/s" || r.Ref != "copy" || r.RefValue != rs[0].Value) {
			t.Errorf("byte-rate line without the copy reference: %+v", r)
		}
		if strings.HasSuffix(r.Case, "_flops") && r.Unit != "GFLOP/s" {
			t.Errorf("flop-rate line %+v", r)
		}
	}
	for _, want := range []string{"q4_0_256x512_matvec_bytes", "q8_0_256x512_batch32_flops", "q4_k_256x512_matvec_flops"} {
		found := false
		for _, r := range rs {
			found = found || r.Case == want
		}
		if !found {
			t.Errorf("no line %s", want)
		}
	}
}
