package bench

import "testing"

// The ag benchmark prints nn's compiled step and the three ag modes per workload, each
// mode compared with the nn step of the same run (on the CPU there are no PyTorch
// figures for ag).
func TestBenchAG(t *testing.T) {
	rs := capture(t, "ag", "-device", "cpu", "-case", "mlp784_b32", "-time", "1ms")
	if len(rs) != 1+len(agModes) {
		t.Fatalf("%d lines: %+v", len(rs), rs)
	}
	nn := rs[0]
	if nn.Case != "mlp784_b32_nn" || !(nn.Value > 0) || nn.Ref != "" {
		t.Errorf("nn line: %+v", nn)
	}
	for i, mode := range agModes {
		r := rs[1+i]
		if r.Case != "mlp784_b32_"+mode || !(r.Value > 0) || r.RefValue != nn.Value || r.Ratio <= 0 {
			t.Errorf("%s line: %+v", mode, r)
		}
	}
	if err := Run("ag", []string{"-case", "nothing"}); err == nil {
		t.Error("-case nothing accepted")
	}
}
