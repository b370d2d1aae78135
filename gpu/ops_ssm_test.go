package gpu

import (
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/runtime/cpu/cputest"
	"github.com/gml-dev/gml/tensor"
)

// TestBackendSSM checks every state-space and linear-attention op, forward and
// backward (the gradients of a weighted sum of both outputs), against the CPU backend.
// 37 tokens make the backward passes recompute from two checkpoints.
func TestBackendSSM(t *testing.T) {
	be := openBackend(t)
	defer be.Close()
	const b, tt, h, s = 2, 37, 3, 8
	cases := []struct {
		name   string
		shapes [][]int
		ranges [][2]float64
		build  func(x []*tensor.Node) (y, state *tensor.Node)
	}{
		{"ssm_conv", [][]int{{b, 9, 5}, {5, 4}, {b, 3, 5}}, nil,
			func(x []*tensor.Node) (*tensor.Node, *tensor.Node) {
				return tensor.SSMConv(x[0], x[1], x[2]), tensor.SSMConvState(x[0], x[2], 4)
			}},
		{"ssm_scan", [][]int{{b, tt, 70}, {b, tt, 70}, {70, 16}, {b, tt, 16}, {b, tt, 16}, {b, 70, 16}},
			[][2]float64{{-1, 1}, {0.05, 0.6}, {-1.5, -0.2}, {-1, 1}, {-1, 1}, {-1, 1}},
			func(x []*tensor.Node) (*tensor.Node, *tensor.Node) {
				return tensor.SSMScan(x[0], x[1], x[2], x[3], x[4], x[5])
			}},
		{"wkv6", [][]int{{b, tt, h, s}, {b, tt, h, s}, {b, tt, h, s}, {b, tt, h, s}, {h, s}, {b, h, s, s}},
			[][2]float64{{-1, 1}, {-1, 1}, {-1, 1}, {0.6, 0.98}, {-1, 1}, {-1, 1}},
			func(x []*tensor.Node) (*tensor.Node, *tensor.Node) {
				return tensor.WKV6(x[0], x[1], x[2], x[3], x[4], x[5])
			}},
		{"gla", [][]int{{b, tt, h, s}, {b, tt, h, s}, {b, tt, h, s}, {b, tt, h, s}, {b, h, s, s}},
			[][2]float64{{-1, 1}, {-1, 1}, {-1, 1}, {0.6, 0.98}, {-1, 1}},
			func(x []*tensor.Node) (*tensor.Node, *tensor.Node) {
				return tensor.GLA(x[0], x[1], x[2], x[3], x[4], 0)
			}},
		{"wkv7", [][]int{{b, tt, h, s}, {b, tt, h, s}, {b, tt, h, s}, {b, tt, h, s}, {b, tt, h, s}, {b, tt, h, s}, {b, h, s, s}},
			[][2]float64{{-1, 1}, {0.6, 0.98}, {-0.5, 0.5}, {-1, 1}, {-0.3, 0}, {0, 0.3}, {-1, 1}},
			func(x []*tensor.Node) (*tensor.Node, *tensor.Node) {
				return tensor.WKV7(x[0], x[1], x[2], x[3], x[4], x[5], x[6])
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 7))
			g := tensor.NewGraph()
			feeds := map[*tensor.Node]*tensor.Tensor{}
			xs := make([]*tensor.Node, len(c.shapes))
			for i, sh := range c.shapes {
				lo, hi := -1.0, 1.0
				if c.ranges != nil {
					lo, hi = c.ranges[i][0], c.ranges[i][1]
				}
				xs[i] = randInput(g, r, feeds, lo, hi, sh...)
			}
			y, st := c.build(xs)
			wy := randInput(g, r, feeds, -1, 1, y.Shape()...)
			ws := randInput(g, r, feeds, -1, 1, st.Shape()...)
			loss := tensor.Add(tensor.Sum(tensor.Mul(y, wy), nil, false), tensor.Sum(tensor.Mul(st, ws), nil, false))
			outs := append([]*tensor.Node{y, st}, tensor.Grad(loss, xs)...)
			want, err := cputest.Run(outs, feeds)
			if err != nil {
				t.Fatal(err)
			}
			got := runGPU(t, be, outs, feeds, true)
			for i := range outs {
				if e := relErr(got[i].Float32s(), want[i].Float32s()); e > 2e-5 {
					t.Errorf("output %d (%v): relative error %.3g against the CPU", i, outs[i], e)
				}
			}
		})
	}
}
