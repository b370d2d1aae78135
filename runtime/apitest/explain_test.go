package apitest

import (
	"strings"
	"testing"

	rt "github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// TestExplain: the schedule of a graph with an op the GPU leaves to the CPU: segments,
// the fallback and its reason, the copies around it, buffer reuse, FLOPs and bytes,
// and the pictures, without allocating.
func TestExplain(t *testing.T) {
	eachDevice(t, func(t *testing.T, d *rt.PhysicalDevice) {
		r := runtimeOn(t, d)
		g := tensor.NewGraph()
		x := g.Input("x", tensor.F32, 4, 3)
		w := g.Var(tensor.NewVariable("w", random(40, 3, 5)))
		h := tensor.Relu(tensor.MatMul(x, w))
		e := tensor.Cast(tensor.Exp(tensor.Cast(h, tensor.F16)), tensor.F32) // exp on f16: the GPU has no shader
		y := tensor.Mean(tensor.Softmax(e, -1), nil, false)
		before := r.Memory().Total()
		s, err := r.Explain(g)
		if err != nil {
			t.Fatal(err)
		}
		if r.Memory().Total() != before {
			t.Errorf("Explain allocated: %d bytes in use, %d before", r.Memory().Total(), before)
		}
		if len(s.Outputs) != 1 || s.Outputs[0] != y {
			t.Errorf("outputs %v, want the graph's sink %v", s.Outputs, y)
		}
		if s.FLOPs < 2*4*3*5 {
			t.Errorf("FLOPs %g: less than the product's %d", s.FLOPs, 2*4*3*5)
		}
		if s.Bytes <= 0 || s.Buffers.Values < 5 || s.Buffers.Buffers > s.Buffers.Values || s.Buffers.Bytes > s.Buffers.Unshared {
			t.Errorf("bytes %d, buffers %+v", s.Bytes, s.Buffers)
		}
		reuses := 0
		for _, p := range s.Nodes {
			if p.Reuses != nil {
				reuses++
			}
		}
		if reuses == 0 {
			t.Errorf("no activation reuses a buffer: %+v", s.Nodes)
		}
		if d.Type() == rt.CPU {
			if len(s.Segments) != 1 || len(s.Fallbacks) != 0 || len(s.Transfers) != 0 || s.Segments[0].Device != "cpu" {
				t.Errorf("on the CPU: %d segments, %d fallbacks, %d transfers", len(s.Segments), len(s.Fallbacks), len(s.Transfers))
			}
		} else {
			if len(s.Segments) != 3 || len(s.Fallbacks) != 1 || s.Fallbacks[0].Node.Op() != tensor.OpExp ||
				!strings.Contains(s.Fallbacks[0].Reason, "f32") || len(s.Transfers) != 2 {
				t.Errorf("on %v: segments %+v, fallbacks %+v, transfers %+v", d, s.Segments, s.Fallbacks, s.Transfers)
			}
			if s.Segments[1].Device != "cpu" || s.Segments[0].Device != d.ID() {
				t.Errorf("segments on %s, %s", s.Segments[0].Device, s.Segments[1].Device)
			}
		}
		html, _ := s.MIMEBundle()["text/html"].(string)
		for _, want := range []string{"<svg", "segment 0", "FLOPs", d.ID()} {
			if !strings.Contains(html, want) {
				t.Errorf("Explain's HTML lacks %q", want)
			}
		}
		if d.Type().IsGPU() && (!strings.Contains(html, "copy "+d.ID()+"→cpu") || !strings.Contains(s.String(), "fallbacks")) {
			t.Errorf("Explain does not show the copies and fallbacks:\n%s", s)
		}
		if _, err := r.Explain(tensor.NewGraph()); err == nil {
			t.Errorf("Explain of an empty graph: no error")
		}
	})
}

// TestGraphView: a graph as a cell's value renders its node table and picture.
func TestGraphView(t *testing.T) {
	g, _, y, _, _, _ := mlp(2)
	b := g.MIMEBundle()
	html, _ := b["text/html"].(string)
	text, _ := b["text/plain"].(string)
	for _, want := range []string{"<svg", "matmul", "placement", "y"} {
		if !strings.Contains(html, want) {
			t.Errorf("graph HTML lacks %q", want)
		}
	}
	if !strings.Contains(text, "relu") || !strings.Contains(text, "f32") {
		t.Errorf("graph text: %s", text)
	}
	if sinks := g.Sinks(); len(sinks) != 1 || sinks[0] != y {
		t.Errorf("sinks %v, want %v", sinks, y)
	}
	if !strings.Contains(g.String(), "<- #") {
		t.Errorf("graph String: %s", g)
	}
}
