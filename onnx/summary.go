package onnx

import (
	"fmt"
	"html"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/runtime"
	"github.com/gml-dev/gml/tensor"
)

// Summary describes a loaded model: where it comes from, its interface, its operators,
// its parameters and how its graph was placed on the devices. As a notebook value it
// renders as a table.
type Summary struct {
	Path            string
	Producer        string // "pytorch 2.5.1"
	IRVersion       int64
	Opsets          map[string]int // domain ("" is ai.onnx) to version
	Nodes           int            // ONNX nodes, functions inlined
	Ops             []OpCount      // histogram of ONNX operators, most frequent first
	Inputs, Outputs []ValueInfo
	Parameters      int64 // elements in the initializers
	ParameterBytes  int64 // their size as the engine holds them
	Device          string
	// Built is false until the graph has been lowered (at load when every input shape
	// is known, else at the first Run); the fields below are zero until then.
	Built       bool
	Stages      int      // graphs the model runs as (more than one with data-dependent shapes)
	EngineOps   int      // engine nodes computed per run
	Fallbacks   []string // engine nodes the device has no kernel for, which run on the CPU
	MemoryBytes int64    // device memory the model's runtime holds (all its models)
}

// OpCount is one row of the operator histogram.
type OpCount struct {
	Op    string
	Count int
}

// Summary describes the model.
func (m *Model) Summary() *Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := &Summary{Path: m.path, Producer: strings.TrimSpace(m.producer + " " + m.producerVersion),
		IRVersion: m.irVersion, Opsets: maps.Clone(m.opsets), Nodes: len(m.graph.nodes),
		Inputs: infos(m.graph.inputs), Outputs: infos(m.graph.outputs)}
	hist := map[string]int{}
	for _, n := range m.graph.nodes {
		op := n.op
		if n.domain != "" {
			op = n.domain + "." + op
		}
		hist[op]++
	}
	for op, n := range hist {
		s.Ops = append(s.Ops, OpCount{op, n})
	}
	sort.Slice(s.Ops, func(i, j int) bool {
		if s.Ops[i].Count != s.Ops[j].Count {
			return s.Ops[i].Count > s.Ops[j].Count
		}
		return s.Ops[i].Op < s.Ops[j].Op
	})
	for _, a := range m.graph.inits {
		s.Parameters += int64(a.Len())
		s.ParameterBytes += int64(len(a.t.Bytes()))
	}
	if m.rt == nil {
		return s
	}
	info := m.rt.DeviceInfo()
	s.Device = fmt.Sprintf("%s (%s)", m.rt.Backend(), info.Name)
	for _, builds := range m.stages {
		if len(builds) == 0 {
			continue
		}
		sb := builds[0]
		s.Built = true
		s.Stages++
		if sb.exe == nil {
			continue
		}
		s.EngineOps += computed(sb)
		for _, n := range sb.exe.Fallbacks() {
			s.Fallbacks = append(s.Fallbacks, fmt.Sprintf("%v %v%v", n.Op(), n.DType(), n.Shape()))
		}
	}
	s.MemoryBytes = m.rt.Memory().Total()
	return s
}

// computed counts the nodes a stage computes (sources and reshapes, which are free,
// left out).
func computed(sb *stageBuild) int {
	seen := map[*tensor.Node]bool{}
	var walk func(n *tensor.Node)
	count := 0
	walk = func(n *tensor.Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		if n.Op().Kind() != tensor.KindSource && n.Op() != tensor.OpReshape {
			count++
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	for _, n := range sb.outputs {
		walk(n)
	}
	return count
}

// rows are the summary's key and value lines.
func (s *Summary) rows() [][2]string {
	opsets := make([]string, 0, len(s.Opsets))
	for _, d := range slices.Sorted(maps.Keys(s.Opsets)) {
		name := d
		if name == "" {
			name = "ai.onnx"
		}
		opsets = append(opsets, fmt.Sprintf("%s %d", name, s.Opsets[d]))
	}
	vis := func(vs []ValueInfo) string {
		parts := make([]string, len(vs))
		for i, v := range vs {
			parts[i] = v.String()
		}
		return strings.Join(parts, ", ")
	}
	ops := make([]string, len(s.Ops))
	for i, o := range s.Ops {
		ops[i] = fmt.Sprintf("%s ×%d", o.Op, o.Count)
	}
	r := [][2]string{
		{"model", s.Path},
		{"producer", s.Producer},
		{"format", fmt.Sprintf("IR %d, opsets %s", s.IRVersion, strings.Join(opsets, ", "))},
		{"inputs", vis(s.Inputs)},
		{"outputs", vis(s.Outputs)},
		{"nodes", fmt.Sprintf("%d: %s", s.Nodes, strings.Join(ops, ", "))},
		{"parameters", fmt.Sprintf("%s (%s)", countString(s.Parameters), runtime.FormatBytes(s.ParameterBytes))},
		{"device", s.Device},
	}
	if !s.Built {
		return append(r, [2]string{"placement", "not built yet: an input shape is symbolic; the first Run builds the graph"})
	}
	place := fmt.Sprintf("%d engine ops in %d graph(s)", s.EngineOps, s.Stages)
	if len(s.Fallbacks) == 0 {
		place += ", all on " + strings.Fields(s.Device)[0]
	} else {
		place += fmt.Sprintf(", %d on the CPU (no device kernel): %s", len(s.Fallbacks), strings.Join(s.Fallbacks, "; "))
	}
	return append(r, [2]string{"placement", place}, [2]string{"memory", runtime.FormatBytes(s.MemoryBytes) + " held by the runtime"})
}

// countString writes a parameter count with a unit: "1.24 M".
func countString(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f G", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f k", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func (s *Summary) table() *display.Table {
	t := display.NewTable()
	for _, r := range s.rows() {
		t.Row(r[0], r[1])
	}
	return t.Caption("ONNX model")
}

// String renders the summary as text.
func (s *Summary) String() string { return s.table().String() }

// MIMEBundle renders the summary as an HTML table with a text fallback.
func (s *Summary) MIMEBundle() map[string]any { return s.table().MIMEBundle() }

// MIMEBundle renders the model as its Summary.
func (m *Model) MIMEBundle() map[string]any { return m.Summary().MIMEBundle() }

// String renders the model as its Summary text.
func (m *Model) String() string { return m.Summary().String() }

// MIMEBundle renders an array as its type, shape and first values.
func (a *Array) MIMEBundle() map[string]any {
	return map[string]any{"text/plain": a.String(), "text/html": "<code>" + html.EscapeString(a.String()) + "</code>"}
}
