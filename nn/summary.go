package nn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gml-dev/gml/display"
)

// Summary describes a model layer by layer. As a notebook value it renders as a table
// (layer, output shape, parameters, device); String gives the text form.
type Summary struct {
	Name   string
	Rows   []SummaryRow
	Params int
	Device string
}

// SummaryRow is one layer application of a Summary.
type SummaryRow struct {
	Layer, Kind, Output string
	Params              int
	Inputs              []string
}

// Summary describes the model. A Sequential model without InputShape that has not seen
// data yet lists its layers without shapes.
func (m *Net) Summary() *Summary {
	s := &Summary{Name: m.name, Device: "not placed yet"}
	if m.comp != nil && m.comp.rt != nil {
		s.Device = m.comp.rt.Backend()
	}
	if !m.Built() {
		for _, l := range m.pending {
			if l != nil {
				s.Rows = append(s.Rows, SummaryRow{Layer: l.Name(), Kind: l.Kind(), Output: "? (not built)"})
			}
		}
		return s
	}
	for _, in := range m.inputs {
		s.Rows = append(s.Rows, SummaryRow{Layer: in.name, Kind: "input", Output: batchShape(in)})
	}
	counted := map[Layer]bool{}
	for _, n := range m.nodes {
		r := SummaryRow{Layer: n.layer.Name(), Kind: n.layer.Kind(), Output: batchShape(n)}
		if !counted[n.layer] {
			counted[n.layer] = true
			for _, v := range n.layer.Params() {
				r.Params += v.Shape().Size()
			}
		}
		for _, in := range n.inputs {
			if in.layer != nil {
				r.Inputs = append(r.Inputs, in.layer.Name())
			} else {
				r.Inputs = append(r.Inputs, in.name)
			}
		}
		s.Rows = append(s.Rows, r)
	}
	s.Params = m.CountParams()
	return s
}

// batchShape writes a node's shape with the batch axis as "None": (None, 28, 28).
func batchShape(n *Node) string {
	parts := []string{"None"}
	for _, d := range n.spec.Shape {
		parts = append(parts, fmt.Sprint(d))
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func (s *Summary) table() *display.Table {
	t := display.NewTable("Layer (type)", "Output shape", "Param #", "Connected to", "Device")
	for _, r := range s.Rows {
		t.Row(fmt.Sprintf("%s (%s)", r.Layer, r.Kind), r.Output, r.Params, strings.Join(r.Inputs, ", "), s.Device)
	}
	return t.Caption(fmt.Sprintf("Model %q: %d trainable parameters, device %s", s.Name, s.Params, s.Device))
}

// String renders the summary as a text table.
func (s *Summary) String() string { return s.table().String() }

// MIMEBundle renders the summary as an HTML table with a text fallback.
func (s *Summary) MIMEBundle() map[string]any { return s.table().MIMEBundle() }

// MIMEBundle renders the model as its Summary table.
func (m *Net) MIMEBundle() map[string]any { return m.Summary().MIMEBundle() }

// String renders the model as its Summary text.
func (m *Net) String() string { return m.Summary().String() }

// layerTable describes one layer: kind, configuration, the input it was built for and
// its weights.
func layerTable(l Layer) *display.Table {
	t := display.NewTable("Layer (type)", "Configuration", "Input", "Weights", "Param #")
	b := l.base()
	in := "not built yet"
	if b.built != nil {
		specs := make([]string, len(b.built))
		for i, s := range b.built {
			specs[i] = s.String()
		}
		in = strings.Join(specs, ", ")
	}
	var weights []string
	params := 0
	for _, v := range append(l.Params(), l.State()...) {
		w := strings.TrimPrefix(v.Name(), b.name+"/") + " " + v.Shape().String()
		if !slices.Contains(l.Params(), v) {
			w += " (state)"
		} else {
			params += v.Shape().Size()
		}
		weights = append(weights, w)
	}
	t.Row(fmt.Sprintf("%s (%s)", b.name, b.kind), configText(l), in, strings.Join(weights, ", "), params)
	if b.err != nil {
		t.Caption("error: " + b.err.Error())
	}
	return t
}

// configText writes a layer's configuration as "Units 128, Activation relu", leaving
// out fields at their zero value.
func configText(l Layer) string {
	raw, err := json.Marshal(l.config())
	if err != nil {
		return ""
	}
	var fields map[string]any
	if json.Unmarshal(raw, &fields) != nil {
		return string(raw) // a custom layer's Config that is not an object
	}
	var parts []string
	for _, k := range sortedKeys(fields) {
		switch v := fields[k].(type) {
		case nil, bool, string, float64:
			if v == nil || v == false || v == "" || v == 0.0 {
				continue
			}
		}
		parts = append(parts, fmt.Sprintf("%s %v", k, fields[k]))
	}
	return strings.Join(parts, ", ")
}

// String describes the layer as a one-row table: kind, configuration, input, weights.
func (b *layerBase) String() string { return layerTable(b.self).String() }

// MIMEBundle renders the layer as a one-row summary table, never as its Go struct.
func (b *layerBase) MIMEBundle() map[string]any { return layerTable(b.self).MIMEBundle() }
