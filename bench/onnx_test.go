package bench

import "testing"

// The onnx benchmark times a shared model and compares it with ONNX Runtime's figure at
// the same thread count when the anchors have one.
func TestBenchONNX(t *testing.T) {
	dir := sharedPath("onnx", "models")
	rs := capture(t, "onnx", "-device", "cpu", "-case", "mlp", "-time", "10ms", "-dir", dir)
	if len(rs) != 1 {
		t.Fatalf("%d lines: %+v", len(rs), rs)
	}
	r := rs[0]
	if r.Bench != "onnx" || r.Case != "mlp" || r.Unit != "ms/run" || !(r.Value > 0) {
		t.Errorf("line: %+v", r)
	}
	if r.Ref != "" && (r.RefThreads != r.Threads || r.Ratio <= 0) {
		t.Errorf("reference at another thread count: %+v", r)
	}
	if err := Run("onnx", []string{"-case", "nothing", "-dir", dir}); err == nil {
		t.Error("-case nothing accepted")
	}
}
