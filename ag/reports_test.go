package ag_test

import (
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

type mlpForReports struct {
	L1, L2 *ag.Linear
}

func (m *mlpForReports) Forward(x *ag.Tensor) *ag.Tensor {
	return m.L2.Forward(ag.Relu(m.L1.Forward(x)))
}

func TestTapeMemoryAndEstimate(t *testing.T) {
	tp := cpuTape(t)
	m := &mlpForReports{ag.NewLinear(64, 256), ag.NewLinear(256, 10)}
	shapes := ag.ShapesOf(m, []int{64}, tensor.F32)
	if len(shapes.Params) != 4 || len(shapes.Activations) != 5 {
		t.Fatalf("ShapesOf: %+v", shapes)
	}
	est := ag.EstimateTrainingMemory(shapes, 128, "adam")
	opt := ag.Adam(ag.Parameters(m), 1e-3)
	x, y := ag.Randn(128, 64), ag.FromInts([]int{128}, make([]int, 128))
	ag.Profile(true)
	for i := 0; i < 3; i++ {
		opt.ZeroGrad()
		loss := ag.CrossEntropy(m.Forward(x), y)
		loss.Backward()
		opt.Step()
		loss.Item()
	}
	rep := ag.TapeMemory()
	params := int64(4 * ag.CountParams(m))
	if rep.Kept[0].What != "parameters" || rep.Kept[0].Bytes != params {
		t.Errorf("kept: %+v, want the parameters' %d bytes first", rep.Kept, params)
	}
	if got := rep.KeptBytes(); got != 4*params+8 { // weights, gradients, two moments; rate and step
		t.Errorf("kept %d bytes, want %d", got, 4*params+8)
	}
	if rep.HeldBytes() == 0 || !strings.Contains(rep.String(), "matmul") {
		t.Errorf("held nothing by op:\n%s", rep)
	}
	var peak int64
	for _, r := range tp.Runtime().Memory().Rows {
		peak += r.Peak
	}
	if ratio := float64(est.Total()) / float64(peak); ratio < 0.7 || ratio > 1.4 {
		t.Errorf("estimate %d bytes, measured peak %d (ratio %.2f)\n%s\n%s", est.Total(), peak, ratio, est, tp.Runtime().Memory())
	}
	prof := ag.ProfileReport()
	if len(prof.Steps) != 3 || !prof.Steps[2].CacheHit || prof.Steps[0].CacheHit || prof.Steps[2].Nodes == 0 {
		t.Errorf("profile:\n%s", prof)
	}
	tp.Clear()
	if rep := ag.TapeMemory(); rep.HeldBytes() != 0 || rep.KeptBytes() != 4*params+8 {
		t.Errorf("after Clear:\n%s", rep)
	}
}

// Re-running a cell that builds a model and an optimizer must not pile up device
// memory: parameters and optimizer state nothing reaches are released.
func TestUnreachableParametersAreReleased(t *testing.T) {
	tp := cpuTape(t)
	train := func() {
		m := &mlpForReports{ag.NewLinear(64, 256), ag.NewLinear(256, 10)}
		opt := ag.Adam(ag.Parameters(m), 1e-3)
		loss := ag.CrossEntropy(m.Forward(ag.Randn(8, 64)), ag.FromInts([]int{8}, make([]int, 8)))
		loss.Backward()
		opt.Step()
	}
	train()
	tp.Clear()
	inUse := func() int64 {
		var n int64
		for _, r := range tp.Runtime().Memory().Rows {
			n += r.Bytes
		}
		return n
	}
	if inUse() == 0 {
		t.Fatal("nothing allocated")
	}
	for i := 0; i < 4; i++ {
		train()
	}
	tp.Clear()
	deadline := time.Now().Add(5 * time.Second)
	for inUse() > 0 && time.Now().Before(deadline) {
		goruntime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := inUse(); n > 0 {
		t.Errorf("%d bytes still held after every model was dropped:\n%s\n%s", n, tp.Runtime().Memory(), tp.Memory())
	}
	if rep := tp.Memory(); rep.KeptBytes() != 0 {
		t.Errorf("the tape still lists dropped parameters:\n%s", rep)
	}
}
