package runtime

import (
	"fmt"
	"html"
	"sort"
	"strings"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/tensor"
)

// A graph as a cell's value renders through this view: its node table and picture as
// the default runtime would place them (tensor.SetGraphView).
func init() { tensor.SetGraphView(viewGraph) }

// maxPictureNodes bounds the nodes drawn: past it, a picture is unreadable and large.
const maxPictureNodes = 160

func viewGraph(g *tensor.Graph) map[string]any {
	if len(g.Sinks()) == 0 {
		return nil
	}
	r, err := Default()
	if err != nil {
		return nil
	}
	s, err := r.Explain(g)
	if err != nil {
		return map[string]any{"text/plain": g.String() + "\n(cannot place it: " + err.Error() + ")"}
	}
	return s.bundle(false)
}

// nodeTable lists every node: op, name, dtype, shape, inputs, placement, bytes, FLOPs
// and buffer.
func (s *Schedule) nodeTable(caption string) *display.Table {
	t := display.NewTable("#", "op", "name", "dtype", "shape", "sources", "placement", "bytes", "FLOPs", "buffer")
	for _, p := range s.Nodes {
		n := p.Node
		var src []string
		for _, in := range n.Inputs() {
			src = append(src, fmt.Sprintf("#%d", in.ID()))
		}
		flops := ""
		if p.FLOPs > 0 {
			flops = formatCount(p.FLOPs)
		}
		t.Row(n.ID(), n.Op().String(), n.Name(), n.DType().String(), n.Shape().String(), strings.Join(src, " "), p.placement(), FormatBytes(p.Bytes), flops, p.bufferText())
	}
	return t.Caption(caption)
}

// deviceColors gives each device of the schedule a colour: the CPU orange, others in
// turn from a palette.
func (s *Schedule) deviceColors() map[string]string {
	palette := []string{"#4c78a8", "#54a24b", "#b279a2", "#72b7b2", "#9d755d"}
	c := map[string]string{}
	add := func(d string) {
		if _, ok := c[d]; ok || d == "" {
			return
		}
		if strings.HasPrefix(d, "cpu") {
			c[d] = "#f58518"
			return
		}
		c[d] = palette[(len(c))%len(palette)]
	}
	add(s.Device)
	for _, seg := range s.Segments {
		add(seg.Device)
	}
	return c
}

// Diagram draws the schedule left to right: sources as rounded boxes, segments as
// tinted boxes in their device's colour, fallbacks in red, copies between devices as
// red dashed arrows, fused nodes computed through their decomposition dashed.
func (s *Schedule) Diagram() *display.Diagram {
	colors := s.deviceColors()
	d := &display.Diagram{Title: "graph on " + s.Device}
	for _, seg := range s.Segments {
		d.Groups = append(d.Groups, display.DiagramGroup{ID: fmt.Sprint("s", seg.Index),
			Label: fmt.Sprintf("segment %d · %s · %s", seg.Index, seg.Device, plural(len(seg.Nodes), "node")), Color: colors[seg.Device]})
	}
	id := func(n *tensor.Node) string { return fmt.Sprint("n", n.ID()) }
	reason := map[*tensor.Node]string{}
	for _, f := range s.Fallbacks {
		reason[f.Node] = f.Reason
	}
	for _, p := range s.Nodes {
		n := p.Node
		lines := []string{fmt.Sprintf("#%d %s", n.ID(), n.Op()), fmt.Sprintf("%v%v", n.DType(), n.Shape())}
		if n.Name() != "" {
			lines = append(lines, fmt.Sprintf("%q", n.Name()))
		}
		dn := display.DiagramNode{ID: id(n), Lines: lines, Tooltip: n.String() + ": " + p.placement()}
		switch p.Role {
		case "input", "constant", "variable":
			dn.Round, dn.Fill = true, "#eeeeee"
		case "fallback":
			dn.Fill = "#fde0dd"
			dn.Tooltip += ": " + reason[n]
		case "fused":
			dn.Dashed = true
		}
		if p.Segment >= 0 {
			dn.Group = fmt.Sprint("s", p.Segment)
		}
		d.Nodes = append(d.Nodes, dn)
	}
	type key struct {
		n   *tensor.Node
		seg int
	}
	moved := map[key]TransferInfo{}
	for _, t := range s.Transfers {
		moved[key{t.Node, t.Before}] = t
	}
	for _, p := range s.Nodes {
		for _, in := range p.Node.Inputs() {
			e := display.DiagramEdge{From: id(in), To: id(p.Node)}
			if t, ok := moved[key{in, p.Segment}]; ok {
				e.Label, e.Color, e.Dashed = fmt.Sprintf("copy %s→%s", t.From, t.To), "#d62728", true
			}
			d.Edges = append(d.Edges, e)
		}
	}
	for _, l := range s.Lowered {
		d.Edges = append(d.Edges, display.DiagramEdge{From: id(l.Result), To: id(l.Node), Label: "is", Dashed: true})
	}
	devs := make([]string, 0, len(colors))
	for dev := range colors {
		devs = append(devs, dev)
	}
	sort.Strings(devs)
	for _, dev := range devs {
		d.Legend = append(d.Legend, display.DiagramGroup{Label: dev, Color: colors[dev]})
	}
	if len(s.Fallbacks) > 0 {
		d.Legend = append(d.Legend, display.DiagramGroup{Label: "fallback to the CPU", Color: "#fde0dd"})
	}
	if len(s.Transfers) > 0 {
		d.Legend = append(d.Legend, display.DiagramGroup{Label: "copy between devices", Color: "#d62728"})
	}
	return d
}

// picture returns the diagram's SVG, or a note when the graph is too large to draw.
func (s *Schedule) picture() string {
	if len(s.Nodes) > maxPictureNodes {
		return fmt.Sprintf("<p>(%d nodes: too many to draw; the table lists them)</p>", len(s.Nodes))
	}
	return s.Diagram().SVG()
}

// bundle renders the schedule: with full, its segments, fallbacks, transfers and
// memory first (Explain); without, the node table and picture alone (a graph's view).
func (s *Schedule) bundle(full bool) map[string]any {
	var h, t strings.Builder
	if full {
		h.WriteString("<p>" + html.EscapeString(s.Summary()) + "</p>")
		t.WriteString(s.Summary() + "\n\n")
		for _, tab := range s.tables() {
			h.WriteString(tab.HTML())
			t.WriteString(tab.String() + "\n\n")
		}
	}
	nodes := s.nodeTable(s.Summary())
	if full {
		nodes = s.nodeTable("nodes")
	}
	h.WriteString(s.picture())
	h.WriteString(nodes.HTML())
	t.WriteString(nodes.String())
	return map[string]any{"text/html": h.String(), "text/plain": t.String()}
}

// tables are Explain's report: segments, fallbacks, lowerings, transfers, memory.
func (s *Schedule) tables() []*display.Table {
	seg := display.NewTable("segment", "device", "nodes", "ops", "FLOPs", "bytes")
	for _, x := range s.Segments {
		var ops []string
		seen := map[tensor.Op]bool{}
		for _, n := range x.Nodes {
			if !seen[n.Op()] {
				seen[n.Op()] = true
				ops = append(ops, n.Op().String())
			}
		}
		seg.Row(x.Index, x.Device, len(x.Nodes), strings.Join(ops, ", "), formatCount(x.FLOPs), FormatBytes(x.Bytes))
	}
	out := []*display.Table{seg.Caption("segments: each is prepared once and run as one program")}
	if len(s.Fallbacks) > 0 {
		f := display.NewTable("node", "why it runs on the CPU")
		for _, x := range s.Fallbacks {
			f.Row(x.Node.String(), x.Reason)
		}
		out = append(out, f.Caption("fallbacks"))
	}
	if len(s.Lowered) > 0 {
		l := display.NewTable("node", "computed as")
		for _, x := range s.Lowered {
			l.Row(x.Node.String(), strings.Join(x.Ops, ", "))
		}
		out = append(out, l.Caption("fused ops computed through their decomposition"))
	}
	if len(s.Transfers) > 0 {
		tr := display.NewTable("value", "from", "to", "bytes", "before segment")
		for _, x := range s.Transfers {
			tr.Row(x.Node.String(), x.From, x.To, FormatBytes(x.Bytes), x.Before)
		}
		out = append(out, tr.Caption("copies between devices at every run"))
	}
	m := display.NewTable("pool", "bytes")
	for p := Pool(0); p < NumPools; p++ {
		if s.Memory[p] > 0 {
			m.Row(p.String(), FormatBytes(s.Memory[p]))
		}
	}
	out = append(out, m.Caption(fmt.Sprintf("buffers the executable would own; %d activations share %d buffers", s.Buffers.Values, s.Buffers.Buffers)))
	return out
}

// MIMEBundle renders the schedule: summary, tables, picture and nodes.
func (s *Schedule) MIMEBundle() map[string]any { return s.bundle(true) }

// String renders the schedule as text.
func (s *Schedule) String() string { return s.bundle(true)["text/plain"].(string) }

// plural renders a count with its noun: "1 node", "3 nodes".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
