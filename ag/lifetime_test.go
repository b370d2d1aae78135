package ag_test

import (
	"math"
	"strings"
	"testing"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

// TestValuesAreNeverStale checks what a value read later gives: the value of its own
// step (held on the device), a recomputation when the program that held it ran again
// but the parameters are unchanged, and an error when they changed.
func TestValuesAreNeverStale(t *testing.T) {
	cpuTape(t)
	w := ag.Param(mustT(tensor.FromFloat32s(tensor.Shape{1}, []float32{1})))
	opt := ag.SGD([]*ag.Tensor{w}, 0.5)
	x := ag.Ones(1)
	var outs []*ag.Tensor
	for i := 0; i < 3; i++ {
		opt.ZeroGrad()
		out := ag.Mul(w, x)
		loss := ag.Sum(out, false)
		loss.Backward()
		opt.Step()
		outs = append(outs, out)
		// Read after the step that changed w: the value the step computed, from before.
		if got := out.Item(); got != 1-0.5*float64(i) {
			t.Fatalf("step %d: out = %v, want %v", i, got, 1-0.5*float64(i))
		}
	}
	// The first step's out was already read and kept on the host.
	if got := outs[0].Item(); got != 1 {
		t.Errorf("outs[0] = %v, want 1", got)
	}
	// Not read in its step, overwritten by the next run of its program, and w changed.
	var lost *ag.Tensor
	for i := 0; i < 2; i++ {
		opt.ZeroGrad()
		out := ag.Mul(w, x)
		ag.Sum(out, false).Backward()
		opt.Step()
		if i == 0 {
			lost = out
		}
	}
	if err := ag.Catch(func() { lost.Item() }); err == nil || !strings.Contains(err.Error(), "no longer held") {
		t.Errorf("reading a value whose parameters changed: %v", err)
	}
	// An evaluation loop: the program runs again but nothing changes, so an old value is
	// recomputed, not lost.
	var evals []*ag.Tensor
	for i := 0; i < 3; i++ {
		e := ag.Mul(w, ag.FromFloat32s([]int{1}, []float32{float32(i + 1)}))
		evals = append(evals, ag.Exp(e))
		e.Item()
	}
	if st := w.Tape().CacheStats(); st.Hits == 0 {
		t.Fatalf("the evaluation loop did not reuse its program: %+v", st)
	}
	wv := w.Item()
	for i, e := range evals {
		if got, want := e.Item(), math.Exp(wv*float64(i+1)); math.Abs(got-want) > 1e-4*want {
			t.Errorf("eval %d = %v, want %v", i, got, want)
		}
	}
}

func TestCheckModeAndAnomalies(t *testing.T) {
	cpuTape(t)
	ag.Eager(true)
	x := ag.FromFloat32s([]int{3}, []float32{1, -1, 2})
	w := ag.Param(mustT(tensor.FromFloat32s(tensor.Shape{3}, []float32{1, 1, 1})))
	y := ag.Mul(x, w)
	if y.Tape().CacheStats().Misses == 0 {
		t.Error("check mode did not run the op when it was recorded")
	}
	ag.Eager(false)
	ag.CheckAnomaly(true)
	defer ag.CheckAnomaly(false)
	l := ag.Log(y) // log(-1): NaN
	err := ag.Catch(func() { ag.Sum(l, false).Item() })
	if err == nil || !strings.Contains(err.Error(), "log") || !strings.Contains(err.Error(), "tape position") || !strings.Contains(err.Error(), "lifetime_test.go") {
		t.Errorf("anomaly: %v", err)
	}
}
