package apitest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// single runs outputs on one device.
func single(t *testing.T, d *rt.PhysicalDevice, outputs []*tensor.Node, feeds map[*tensor.Node]*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	r := runtimeOn(t, d)
	e, err := r.Compile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Free()
	out, err := e.Run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMetaReplicas: a meta device over replicas of one device gives the results of the
// device alone, with rows split (data parallel) or the weights' columns split (tensor
// parallel), in equal and unequal proportions.
func TestMetaReplicas(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		_, x, y, _, _, _ := mlp(7)
		sum := tensor.Sum(y, []int{1}, false) // a row-wise reduction: splits by rows
		feeds := map[*tensor.Node]*tensor.Tensor{x: random(50, 7, 6)}
		want := single(t, d, []*tensor.Node{y, sum}, feeds)
		splitW := func(n *tensor.Node) (int, bool) {
			if v := n.Variable(); v != nil && (v.Name() == "w" || v.Name() == "b") {
				return v.Shape().Rank() - 1, true // columns of w and b: the hidden units
			}
			return 0, false
		}
		cases := []struct {
			name  string
			parts int
			opts  []rt.MetaOption
		}{
			{"rows/2", 2, nil},
			{"rows/3 unequal", 3, []rt.MetaOption{rt.Proportions(1, 2, 4)}},
			{"hidden units/2", 2, []rt.MetaOption{rt.SplitBy(splitW)}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				m, err := rt.NewMeta(rt.Replicate(d, c.parts), c.opts...)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				outputs := []*tensor.Node{y, sum}
				if c.name == "hidden units/2" {
					// The hidden units split, the second product contracts them: each
					// part's product is a summand, summed across the parts (Megatron's
					// column- then row-parallel pair).
					outputs = outputs[:1]
					want = want[:1]
				}
				e, err := m.Compile(outputs)
				if err != nil {
					t.Fatal(err)
				}
				defer e.Free()
				for range 2 {
					got, err := e.Run(feeds)
					if err != nil {
						t.Fatal(err)
					}
					for i := range outputs {
						closeTo(t, outputs[i].String(), got[i], want[i], 1e-5)
					}
				}
				parts := e.Parts()
				if len(parts) != c.parts || parts[0].Device != d.ID() || len(parts[0].Executables) != e.Phases() {
					t.Errorf("parts %+v", parts)
				}
				if !strings.Contains(e.String(), "part") {
					t.Errorf("meta executable table: %s", e)
				}
				e.Free()
				if _, err := e.Run(feeds); !errors.Is(err, rt.ErrFreed) {
					t.Errorf("Run after Free: %v", err)
				}
			})
		}
	})
}

// TestMetaAcrossDevices splits rows between the CPU and the GPU.
func TestMetaAcrossDevices(t *testing.T) {
	devs := devices(t)
	if len(devs) < 2 {
		t.Skip("one device here: the meta device over replicas covers the splitting")
	}
	_, x, y, _, _, _ := mlp(9)
	feeds := map[*tensor.Node]*tensor.Tensor{x: random(60, 9, 6)}
	want := single(t, devs[0], []*tensor.Node{y}, feeds)
	m, err := rt.NewMeta(devs)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := m.Compile([]*tensor.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Free()
	got, err := e.Run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, "rows split between "+devs[0].ID()+" and "+devs[1].ID(), got[0], want[0], 1e-5)
}

// TestMetaExchanges: ops whose slices are not slices of the result (sums and means over
// the split rows, softmax along them, products contracting them, a whole operand
// spanning them) exchange values between the parts and give one device's results.
func TestMetaExchanges(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		m, err := rt.NewMeta(rt.Replicate(d, 2))
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		g := tensor.NewGraph()
		x := g.Input("x", tensor.F32, 5, 3)
		v := g.Var(tensor.NewVariable("v", random(1, 5, 3)))
		one := g.Input("one", tensor.F32, 1, 3)
		feeds := map[*tensor.Node]*tensor.Tensor{x: random(2, 5, 3)}
		for _, c := range []struct {
			out    *tensor.Node
			phases int
		}{
			{tensor.Softmax(x, 0), 1},                        // an input: fed whole
			{tensor.Softmax(tensor.Relu(x), 0), 2},           // gathered, then whole
			{tensor.Sum(x, nil, false), 1},                   // summed at the end
			{tensor.Exp(tensor.Mean(x, []int{0}, false)), 2}, // summed, then whole
			{tensor.Add(x, v), 1},                            // v sliced in each part
			{tensor.MatMul(tensor.Transpose(x, 0, 1), x), 1}, // summands
			{tensor.Relu(tensor.MatMul(tensor.Transpose(x, 0, 1), x)), 2},
			{tensor.Add(x, one), 1},                           // a row broadcast over the rows
			{tensor.Mul(x, tensor.Sum(x, []int{0}, true)), 2}, // a column sum over every row
		} {
			t.Run(c.out.String(), func(t *testing.T) {
				feeds := map[*tensor.Node]*tensor.Tensor{x: feeds[x]}
				if slices.Contains(c.out.Inputs(), one) {
					feeds[one] = random(3, 1, 3)
				}
				want := single(t, d, []*tensor.Node{c.out}, feeds)
				e, err := m.Compile([]*tensor.Node{c.out})
				if err != nil {
					t.Fatal(err)
				}
				defer e.Free()
				if e.Phases() != c.phases {
					t.Errorf("%d phases, want %d", e.Phases(), c.phases)
				}
				got, err := e.Run(feeds)
				if err != nil {
					t.Fatal(err)
				}
				closeTo(t, c.out.String(), got[0], want[0], 1e-5)
			})
		}
		if _, err := rt.NewMeta(nil); err == nil {
			t.Errorf("NewMeta of no devices: no error")
		}
		if _, err := rt.NewMeta(rt.Replicate(d, 2), rt.Proportions(1)); err == nil {
			t.Errorf("NewMeta with one proportion for two devices: no error")
		}
		four, err := rt.NewMeta(rt.Replicate(d, 4))
		if err != nil {
			t.Fatal(err)
		}
		defer four.Close()
		small := tensor.NewGraph()
		if _, err := four.Compile([]*tensor.Node{tensor.Relu(small.Input("x", tensor.F32, 3, 3))}); err == nil || !strings.Contains(err.Error(), "cannot be split 4 ways") {
			t.Errorf("three rows over four parts: %v", err)
		}
	})
}

// sgdStep builds a training step of the mlp: the mean squared error, its gradients and
// a plain SGD update of every weight; it returns the loss and the updates.
func sgdStep(rows int) (x, target *tensor.Node, vars []*tensor.Variable, outputs []*tensor.Node) {
	g, x, y, w, b, w2 := mlp(rows)
	target = g.Input("target", tensor.F32, rows, 3)
	loss := tensor.Mean(tensor.Square(tensor.Sub(y, target)), nil, false)
	vars = []*tensor.Variable{w, b, w2}
	nodes := make([]*tensor.Node, len(vars))
	for i, v := range vars {
		nodes[i] = g.Var(v)
	}
	outputs = []*tensor.Node{loss}
	for i, gr := range tensor.Grad(loss, nodes) {
		outputs = append(outputs, tensor.Assign(nodes[i], tensor.Sub(nodes[i], tensor.MulScalar(gr, 0.1))))
	}
	return x, target, vars, outputs
}

// TestMetaTraining: a training step on a meta device over replicas is data parallel
// (each part the gradients of its rows, summed, the same update everywhere): the
// losses and weights equal one device's after every step, and the replicas' weights
// are identical.
func TestMetaTraining(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		for _, parts := range []int{2, 3} {
			t.Run(fmt.Sprint(parts, " replicas"), func(t *testing.T) {
				x, target, vars, outputs := sgdStep(12)
				one := runtimeOn(t, d)
				m, err := rt.NewMeta(rt.Replicate(d, parts))
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				stepBoth(t, one, m, outputs, 4, func(step int) map[*tensor.Node]*tensor.Tensor {
					return map[*tensor.Node]*tensor.Tensor{x: random(uint64(100+step), 12, 6), target: random(uint64(200+step), 12, 3)}
				}, func(step int, got, want []*tensor.Tensor) {
					closeTo(t, fmt.Sprintf("step %d loss", step), got[0], want[0], 1e-5)
					for _, v := range vars {
						w, err := one.Read(v)
						if err != nil {
							t.Fatal(err)
						}
						reps, err := m.Replicas(v)
						if err != nil {
							t.Fatal(err)
						}
						if len(reps) != parts {
							t.Fatalf("%d replicas of %v", len(reps), v)
						}
						for k, r := range reps {
							closeTo(t, fmt.Sprintf("step %d: %v on replica %d", step, v, k), r, w, 1e-5)
							if !bytes.Equal(r.Bytes(), reps[0].Bytes()) {
								t.Fatalf("step %d: %v differs between replicas 0 and %d", step, v, k)
							}
						}
					}
				})
			})
		}
	})
}
