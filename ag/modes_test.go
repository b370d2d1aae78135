package ag_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gml-dev/gml/ag"
	"github.com/gml-dev/gml/tensor"
)

// netForModes is a small classifier with the parts whose execution differs between
// modes: dropout (seeds), layer norm, several parameters.
type netForModes struct {
	L1         *ag.Linear
	Norm       *ag.LayerNormLayer
	L2         *ag.Linear
	Drop       *ag.DropoutLayer
	checkpoint bool
}

func (n *netForModes) Forward(x *ag.Tensor) *ag.Tensor {
	block := func(in ...*ag.Tensor) *ag.Tensor { return n.Drop.Forward(ag.Gelu(n.Norm.Forward(n.L1.Forward(in[0])))) }
	var h *ag.Tensor
	if n.checkpoint {
		h = ag.Checkpoint(block, x)
	} else {
		h = block(x)
	}
	return n.L2.Forward(h)
}

// trainModes trains the same model for 20 steps in one mode on a device and returns
// every parameter and gradient afterwards, by name.
func trainModes(t *testing.T, device, mode string) (map[string][]float64, []float64) {
	tp, err := ag.NewTape(ag.Device(device))
	if err != nil {
		t.Skipf("no %s device: %v", device, err)
	}
	defer tp.Free()
	out := map[string][]float64{}
	var losses []float64
	ag.WithTape(tp, func() {
		ag.SetSeed(3)
		m := &netForModes{L1: ag.NewLinear(6, 16), Norm: ag.NewLayerNorm(16), L2: ag.NewLinear(16, 4), Drop: ag.NewDropout(0.25)}
		params := ag.Parameters(m)
		opt := ag.Adam(params, 0.01)
		xs := ag.Randn(8, 6)
		ys := ag.FromInts([]int{8}, []int{0, 1, 2, 3, 3, 2, 1, 0})
		lossOf := func(in ...*ag.Tensor) *ag.Tensor { return ag.CrossEntropy(m.Forward(in[0]), in[1]) }
		m.checkpoint = mode == "checkpointed"
		switch mode {
		case "deferred", "eager", "checkpointed":
			ag.Eager(mode == "eager")
			for i := 0; i < 20; i++ {
				opt.ZeroGrad()
				loss := lossOf(xs, ys)
				loss.Backward()
				ag.ClipGradNorm(params, 0.5)
				opt.Step()
				losses = append(losses, loss.Item())
			}
			ag.Eager(false)
		case "captured":
			step := ag.CaptureStep(lossOf, opt, ag.ClipNorm(0.5))
			defer step.Free()
			for i := 0; i < 20; i++ {
				losses = append(losses, step.Step(xs, ys))
			}
		default:
			t.Fatalf("unknown mode %s", mode)
		}
		for _, p := range ag.NamedParameters(m) {
			out[p.Name] = p.Tensor.Float64s()
			out[p.Name+".grad"] = p.Tensor.Grad().Float64s()
		}
	})
	return out, losses
}

func TestModesAgreeAfter20Steps(t *testing.T) {
	want, wantLoss := trainModes(t, "cpu", "deferred")
	if wantLoss[19] >= wantLoss[0] {
		t.Errorf("loss did not fall: %v", wantLoss)
	}
	for _, device := range []string{"cpu", "gpu"} {
		for _, mode := range []string{"deferred", "eager", "checkpointed", "captured"} {
			if device == "cpu" && mode == "deferred" {
				continue
			}
			t.Run(device+"/"+mode, func(t *testing.T) {
				got, loss := trainModes(t, device, mode)
				tol := 1e-5
				if device != "cpu" {
					tol = 1e-3 // another device's arithmetic, compounded over 20 Adam steps
				}
				if d := maxDiff(loss, wantLoss); d > tol {
					t.Errorf("losses differ by %.2e:\n got %v\nwant %v", d, loss, wantLoss)
				}
				for name, w := range want {
					if d := maxDiff(got[name], w); d > tol {
						t.Errorf("%s differs by %.2e", name, d)
					}
				}
			})
		}
	}
}

// maxDiff is the largest elementwise difference, relative where values exceed 1.
func maxDiff(a, b []float64) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = math.Max(d, math.Abs(a[i]-b[i])/math.Max(1, math.Abs(b[i])))
	}
	return d
}

var _ = fmt.Sprint
var _ = strings.Contains
var _ = tensor.F32
