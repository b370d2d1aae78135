package gpu

import (
	"strings"
	"testing"
)

// TestHandoverProbeSteps runs the probe's round trips through the fake engine, whose
// timings mean nothing: every way must complete and report a time, and the settings
// must name the engine. The figures come from `gml bench gpu-matmul -handover`.
func TestHandoverProbeSteps(t *testing.T) {
	d := openTest(t)
	attachFake(t, d)
	settings, times, err := d.handoverProbe(12)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(settings, "fake engine") || !strings.Contains(settings, "queue global priority") {
		t.Errorf("settings %q name neither the engine nor the queue's priority", settings)
	}
	want := []string{"vulkan_own_timeline", "vulkan_shared_timeline", "engine_alone", "vulkan_then_engine"}
	if len(times) != len(want) {
		t.Fatalf("%d ways timed, want %d: %+v", len(times), len(want), times)
	}
	for i, h := range times {
		if h.Case != want[i] || h.What == "" || !(h.Micros > 0) {
			t.Errorf("way %d: %+v, want case %s with a description and a positive time", i, h, want[i])
		}
	}
	if _, _, err := d.handoverProbe(0); err == nil {
		t.Error("a probe of 0 round trips did not fail")
	}
}

// TestHandoverProbeNeedsEngine: without a running engine the exported probe says why
// rather than timing nothing.
func TestHandoverProbeNeedsEngine(t *testing.T) {
	d := openTest(t)
	if d.CheckProductPath().Active {
		t.Skip("this device's engine runs products")
	}
	if _, _, err := d.HandoverProbe(10); err == nil || !strings.Contains(err.Error(), "no product engine runs") {
		t.Errorf("HandoverProbe without an engine: %v, want an error saying none runs", err)
	}
}
