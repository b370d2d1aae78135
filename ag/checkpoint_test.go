package ag_test

import (
	"testing"

	"github.com/gml-dev/gml/ag"
)

type deepNet struct {
	Blocks     []*ag.Linear
	Head       *ag.Linear
	checkpoint bool
}

func (n *deepNet) Forward(x *ag.Tensor) *ag.Tensor {
	for _, b := range n.Blocks {
		f := func(in ...*ag.Tensor) *ag.Tensor { return ag.Tanh(ag.Gelu(ag.Relu(b.Forward(in[0])))) }
		if n.checkpoint {
			x = ag.Checkpoint(f, x)
		} else {
			x = f(x)
		}
	}
	return n.Head.Forward(x)
}

// TestCheckpointHoldsLessAndGivesTheSameGradients compares a deep net with and without
// checkpointed blocks: the same gradients, fewer values held, and a captured
// checkpointed step that agrees too.
func TestCheckpointHoldsLessAndGivesTheSameGradients(t *testing.T) {
	run := func(checkpoint, capture bool) (grads [][]float64, held int64) {
		tp, err := ag.NewTape(ag.Device("cpu"))
		if err != nil {
			t.Fatal(err)
		}
		defer tp.Free()
		ag.WithTape(tp, func() {
			ag.SetSeed(5)
			n := &deepNet{Head: ag.NewLinear(32, 1), checkpoint: checkpoint}
			for i := 0; i < 4; i++ {
				n.Blocks = append(n.Blocks, ag.NewLinear(32, 32))
			}
			x, y := ag.Randn(64, 32), ag.Randn(64, 1)
			opt := ag.SGD(ag.Parameters(n), 0.01)
			lossOf := func(in ...*ag.Tensor) *ag.Tensor { return ag.MSE(n.Forward(in[0]), in[1]) }
			if capture {
				s := ag.CaptureStep(lossOf, opt)
				defer s.Free()
				s.Step(x, y)
			} else {
				loss := lossOf(x, y)
				loss.Backward()
				loss.Item()
			}
			for _, p := range ag.Parameters(n) {
				grads = append(grads, p.Grad().Float64s())
			}
			held = ag.TapeMemory().HeldBytes()
		})
		return grads, held
	}
	want, plainHeld := run(false, false)
	got, ckHeld := run(true, false)
	captured, _ := run(true, true)
	for i := range want {
		if d := maxDiff(got[i], want[i]); d > 1e-6 {
			t.Errorf("parameter %d: checkpointed gradient differs by %v", i, d)
		}
		if d := maxDiff(captured[i], want[i]); d > 1e-6 {
			t.Errorf("parameter %d: captured checkpointed gradient differs by %v", i, d)
		}
	}
	if ckHeld >= plainHeld*3/4 {
		t.Errorf("checkpointed blocks hold %d bytes, plain ones %d: want much less", ckHeld, plainHeld)
	}
}
