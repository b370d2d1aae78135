package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// refOptimizer is a float64 reimplementation of nn's optimizers, written from their
// definitions (Keras's Adam with ε outside the square root, L2 weight decay added to
// the gradient for Adam and SGD, decoupled decay for AdamW, SGD momentum with optional
// Nesterov), to check the backends' update kernels against.
type refOptimizer struct {
	kind                        string
	lr, momentum, decay, b1, b2 float64
	eps                         float64
	nesterov                    bool
	step                        int
	m, v                        [][]float64 // per parameter: moments (Adam) or velocity (m, SGD)
}

func (o *refOptimizer) apply(params, grads [][]float64) {
	if o.m == nil {
		for _, p := range params {
			o.m = append(o.m, make([]float64, len(p)))
			o.v = append(o.v, make([]float64, len(p)))
		}
	}
	o.step++
	t := float64(o.step)
	for k, p := range params {
		for i := range p {
			g := grads[k][i]
			if o.kind != "adamw" {
				g += o.decay * p[i]
			}
			switch o.kind {
			case "sgd":
				vel := o.momentum*o.m[k][i] + g
				o.m[k][i] = vel
				if o.nesterov {
					vel = g + o.momentum*vel
				}
				p[i] -= o.lr * vel
			default:
				if o.kind == "adamw" {
					p[i] *= 1 - o.lr*o.decay
				}
				o.m[k][i] = o.b1*o.m[k][i] + (1-o.b1)*g
				o.v[k][i] = o.b2*o.v[k][i] + (1-o.b2)*g*g
				mhat := o.m[k][i] / (1 - math.Pow(o.b1, t))
				vhat := o.v[k][i] / (1 - math.Pow(o.b2, t))
				p[i] -= o.lr * mhat / (math.Sqrt(vhat) + o.eps)
			}
		}
	}
}

// linearGrads returns the gradients of the mean squared error of x·W + b against y
// (n samples, in inputs, out outputs) with respect to W (in×out) and b.
func linearGrads(x, y []float64, w, b []float64, n, in, out int) [][]float64 {
	gw, gb := make([]float64, len(w)), make([]float64, len(b))
	for s := 0; s < n; s++ {
		for j := 0; j < out; j++ {
			pred := b[j]
			for i := 0; i < in; i++ {
				pred += x[s*in+i] * w[i*out+j]
			}
			d := 2 * (pred - y[s*out+j]) / float64(n*out)
			gb[j] += d
			for i := 0; i < in; i++ {
				gw[i*out+j] += d * x[s*in+i]
			}
		}
	}
	return [][]float64{gw, gb}
}

// TestOptimizersAgainstFloat64 trains a linear layer under an mse loss for a few steps
// on every device and compares the weights' change with the float64 reference
// optimizer. The tiny-gradient cases keep Adam's second moment near 0, where ε's place
// (outside the square root) decides the step size.
func TestOptimizersAgainstFloat64(t *testing.T) {
	const n, in, out, steps = 8, 3, 2, 4
	cases := []struct {
		name  string
		opt   func() Optimizer
		ref   refOptimizer
		scale float64 // of the inputs and of the error, so of the gradients
	}{
		{"adam", func() Optimizer { return Adam(1e-2) }, refOptimizer{kind: "adam", lr: 1e-2}, 1},
		{"adam_tiny_gradients", func() Optimizer { return Adam(1e-2) }, refOptimizer{kind: "adam", lr: 1e-2}, 1e-3},
		{"adam_weight_decay", func() Optimizer { return Adam(1e-2, WeightDecay(0.5)) }, refOptimizer{kind: "adam", lr: 1e-2, decay: 0.5}, 1e-3},
		{"adamw", func() Optimizer { return AdamW(1e-2, WeightDecay(0.5)) }, refOptimizer{kind: "adamw", lr: 1e-2, decay: 0.5}, 1e-3},
		{"sgd", func() Optimizer { return SGD(0.1) }, refOptimizer{kind: "sgd", lr: 0.1}, 1},
		{"sgd_momentum", func() Optimizer { return SGD(0.1, Momentum(0.9)) }, refOptimizer{kind: "sgd", lr: 0.1, momentum: 0.9}, 1},
		{"sgd_nesterov", func() Optimizer { return SGD(0.1, Momentum(0.9), Nesterov()) }, refOptimizer{kind: "sgd", lr: 0.1, momentum: 0.9, nesterov: true}, 1},
		{"sgd_weight_decay", func() Optimizer { return SGD(0.1, WeightDecay(0.3)) }, refOptimizer{kind: "sgd", lr: 0.1, decay: 0.3}, 1},
	}
	for _, device := range testDevices(t) {
		for _, c := range cases {
			t.Run(device+"/"+c.name, func(t *testing.T) {
				SetSeed(7)
				m := Sequential(Dense(out, InputShape(in)))
				if err := m.Compile(c.opt(), Loss("mse"), Device(device)); err != nil {
					t.Fatal(err)
				}
				defer m.Free()
				params := m.Params()
				w0, err := m.Weights()
				if err != nil {
					t.Fatal(err)
				}
				ref := make([][]float64, len(params))
				for k, p := range params {
					for _, v := range w0[p.Name()].Float32s() {
						ref[k] = append(ref[k], float64(v))
					}
				}
				init := [][]float64{append([]float64(nil), ref[0]...), append([]float64(nil), ref[1]...)}
				// Targets a small error away from the initial predictions.
				r := rand.New(rand.NewPCG(1, 2))
				x, y := make([]float64, n*in), make([]float64, n*out)
				for i := range x {
					x[i] = r.NormFloat64() * c.scale
				}
				for s := 0; s < n; s++ {
					for j := 0; j < out; j++ {
						pred := ref[1][j]
						for i := 0; i < in; i++ {
							pred += x[s*in+i] * ref[0][i*out+j]
						}
						y[s*out+j] = pred + r.NormFloat64()*c.scale
					}
				}
				xt, yt := tensor.New(tensor.F32, n, in), tensor.New(tensor.F32, n, out)
				for i, v := range x {
					xt.Float32s()[i] = float32(v)
					x[i] = float64(xt.Float32s()[i]) // the reference sees what the model sees
				}
				for i, v := range y {
					yt.Float32s()[i] = float32(v)
					y[i] = float64(yt.Float32s()[i])
				}
				tr, err := m.NewTrainer()
				if err != nil {
					t.Fatal(err)
				}
				o := c.ref
				if o.kind != "sgd" {
					o.b1, o.b2, o.eps = 0.9, 0.999, 1e-7
				}
				for s := 0; s < steps; s++ {
					if _, err := tr.Step(xt, yt); err != nil {
						t.Fatal(err)
					}
					o.apply(ref, linearGrads(x, y, ref[0], ref[1], n, in, out))
				}
				got, err := m.Weights()
				if err != nil {
					t.Fatal(err)
				}
				// Compare the change of the weights, which is the optimizer's work.
				for k, p := range params {
					var diff, size float64
					for i, v := range got[p.Name()].Float32s() {
						want := ref[k][i] - init[k][i]
						diff = max(diff, math.Abs(float64(v)-ref[k][i]))
						size = max(size, math.Abs(want))
					}
					if !(size > 0) || !(diff <= 2e-3*size+1e-7) {
						t.Errorf("%s after %d steps: max |gml - float64| = %.3g, largest change %.3g", p.Name(), steps, diff, size)
					}
				}
			})
		}
	}
}
