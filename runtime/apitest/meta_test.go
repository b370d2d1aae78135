package apitest

import (
	"errors"
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
					outputs = outputs[:1]
					// The hidden units split, the second product contracts them: refused.
					if _, err := m.Compile(outputs); err == nil || !strings.Contains(err.Error(), "contracts the split axis") {
						t.Fatalf("tensor-parallel second product: %v", err)
					}
					h := y.Input(0) // relu(x w + b): its columns are split
					outputs = []*tensor.Node{h}
					want = single(t, d, outputs, feeds)
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
				if len(parts) != c.parts || parts[0].Device != d.ID() || parts[0].Executable == nil {
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

// TestMetaRefuses graphs whose slices would not give the whole result.
func TestMetaRefuses(t *testing.T) {
	d, err := rt.FindDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.NewMeta(rt.Replicate(d, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	g := tensor.NewGraph()
	x := g.Input("x", tensor.F32, 4, 3)
	v := g.Var(tensor.NewVariable("v", random(1, 4, 3)))
	one := g.Input("one", tensor.F32, 1, 3)
	for _, c := range []struct {
		out  *tensor.Node
		want string
	}{
		{tensor.Softmax(x, 0), "normalises along the split axis"},
		{tensor.Sum(x, nil, false), "reduces (or scans, or sorts) along the split axis"},
		{tensor.Mean(x, []int{0}, false), "along the split axis"},
		{tensor.Add(x, v), "whole but spans the split axis"},
		{tensor.Assign(v, x), "updates a variable"},
		{tensor.MatMul(tensor.Transpose(x, 0, 1), x), "contracts the split axis"},
		{tensor.Add(x, one), ""}, // a row broadcast over the split rows: fine
	} {
		_, err := m.Compile([]*tensor.Node{c.out})
		if c.want == "" {
			if err != nil && strings.Contains(err.Error(), "cannot be computed in slices") {
				t.Errorf("%v: %v", c.out, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want an error saying %q", c.out, err, c.want)
		}
	}
	if _, err := rt.NewMeta(nil); err == nil {
		t.Errorf("NewMeta of no devices: no error")
	}
	if _, err := rt.NewMeta(rt.Replicate(d, 2), rt.Proportions(1)); err == nil {
		t.Errorf("NewMeta with one proportion for two devices: no error")
	}
	small := tensor.NewGraph()
	if _, err := m.Compile([]*tensor.Node{tensor.Relu(small.Input("x", tensor.F32, 1, 3))}); err == nil || !strings.Contains(err.Error(), "cannot be split 2 ways") {
		t.Errorf("one row over two parts: %v", err)
	}
}
