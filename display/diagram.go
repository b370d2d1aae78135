package display

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
)

// Diagram draws a directed acyclic graph left to right: nodes in columns by their depth
// (longest path from a node without inputs), edges as curves, and groups of nodes
// (the segments of a schedule, say) as tinted boxes behind them.
type Diagram struct {
	Title  string
	Nodes  []DiagramNode
	Edges  []DiagramEdge
	Groups []DiagramGroup
	Legend []DiagramGroup // colour keys shown under the drawing (ID unused)
}

// DiagramNode is one box. Lines are its text, first line bold.
type DiagramNode struct {
	ID      string
	Lines   []string
	Group   string // the ID of the group it belongs to, or ""
	Fill    string // CSS colour; "" is white
	Round   bool   // rounded (sources), else square
	Dashed  bool   // an outline of dashes: a node that is not computed itself
	Tooltip string
}

// DiagramEdge is one arrow from a node to another.
type DiagramEdge struct {
	From, To string
	Label    string
	Color    string // "" is grey
	Dashed   bool
}

// DiagramGroup is a set of nodes drawn inside one box.
type DiagramGroup struct {
	ID, Label, Color string
}

const (
	diagramCharW = 6.6
	diagramLineH = 14.0
	diagramGapX  = 56.0
	diagramGapY  = 18.0
	diagramPad   = 10.0
)

type placed struct {
	x, y, w, h float64
	layer      int
}

// layout places every node: columns by depth, each column ordered by group and then by
// the mean position of the node's inputs (a few sweeps), so connected nodes line up.
func (d *Diagram) layout() (map[string]*placed, float64, float64) {
	index := map[string]int{}
	for i, n := range d.Nodes {
		index[n.ID] = i
	}
	ins := make([][]int, len(d.Nodes))
	for _, e := range d.Edges {
		f, okf := index[e.From]
		t, okt := index[e.To]
		if okf && okt && f != t {
			ins[t] = append(ins[t], f)
		}
	}
	// Depth by longest path; nodes are expected in topological order, but a few passes
	// settle any order.
	layer := make([]int, len(d.Nodes))
	for range 3 {
		for i := range d.Nodes {
			for _, f := range ins[i] {
				layer[i] = max(layer[i], layer[f]+1)
			}
		}
	}
	nLayers := 0
	for _, l := range layer {
		nLayers = max(nLayers, l+1)
	}
	cols := make([][]int, nLayers)
	for i, l := range layer {
		cols[l] = append(cols[l], i)
	}
	groupRank := map[string]int{}
	for i, g := range d.Groups {
		groupRank[g.ID] = i
	}
	pos := make([]float64, len(d.Nodes))
	for _, c := range cols {
		for k, i := range c {
			pos[i] = float64(k)
		}
	}
	for range 4 {
		for _, c := range cols {
			key := map[int]float64{}
			for _, i := range c {
				if len(ins[i]) == 0 {
					key[i] = pos[i]
					continue
				}
				s := 0.0
				for _, f := range ins[i] {
					s += pos[f]
				}
				key[i] = s / float64(len(ins[i]))
			}
			sort.SliceStable(c, func(a, b int) bool {
				ga, gb := groupRank[d.Nodes[c[a]].Group], groupRank[d.Nodes[c[b]].Group]
				if ga != gb {
					return ga < gb
				}
				return key[c[a]] < key[c[b]]
			})
			for k, i := range c {
				pos[i] = float64(k)
			}
		}
	}
	// The gap before a column fits the labels of the edges that enter it.
	gap := make([]float64, nLayers)
	for _, e := range d.Edges {
		if t, ok := index[e.To]; ok && e.Label != "" {
			gap[layer[t]] = max(gap[layer[t]], float64(len([]rune(e.Label)))*diagramCharW*0.9+16)
		}
	}
	out := map[string]*placed{}
	x := 20.0
	height := 0.0
	colH := make([]float64, nLayers)
	for l, c := range cols {
		if l > 0 {
			x += max(diagramGapX, gap[l])
		}
		w := 0.0
		h := 0.0
		for _, i := range c {
			n := d.Nodes[i]
			nw, nh := d.size(n)
			w = max(w, nw)
			h += nh + diagramGapY
		}
		colH[l] = h
		height = max(height, h)
		for _, i := range c {
			n := d.Nodes[i]
			nw, nh := d.size(n)
			out[n.ID] = &placed{x: x + (w-nw)/2, w: nw, h: nh, layer: l}
		}
		x += w
	}
	top := 40.0
	if d.Title == "" {
		top = 16
	}
	for l, c := range cols {
		y := top + (height-colH[l])/2
		for _, i := range c {
			p := out[d.Nodes[i].ID]
			p.y = y
			y += p.h + diagramGapY
		}
	}
	return out, x + 20, top + height
}

func (d *Diagram) size(n DiagramNode) (float64, float64) {
	w := 40.0
	for _, l := range n.Lines {
		w = max(w, float64(len([]rune(l)))*diagramCharW+2*diagramPad)
	}
	return w, float64(max(len(n.Lines), 1))*diagramLineH + 10
}

// SVG renders the diagram.
func (d *Diagram) SVG() string {
	pl, width, height := d.layout()
	legendH := 0.0
	if len(d.Legend) > 0 {
		legendH = 28
	}
	width = math.Max(width, 320)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="11">`, width, height+legendH+10, width, height+legendH+10)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>`)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>`)
	if d.Title != "" {
		fmt.Fprintf(&b, `<text x="20" y="22" font-size="14" font-weight="bold">%s</text>`, html.EscapeString(d.Title))
	}
	for _, g := range d.Groups {
		x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, n := range d.Nodes {
			if n.Group != g.ID {
				continue
			}
			p := pl[n.ID]
			x0, y0 = math.Min(x0, p.x), math.Min(y0, p.y)
			x1, y1 = math.Max(x1, p.x+p.w), math.Max(y1, p.y+p.h)
		}
		if math.IsInf(x0, 1) {
			continue
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="8" fill="%s" fill-opacity="0.12" stroke="%s" stroke-width="1.5"/>`,
			x0-8, y0-16, x1-x0+16, y1-y0+22, g.Color, g.Color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s" font-size="10" font-weight="bold">%s</text>`, x0-4, y0-5, g.Color, html.EscapeString(g.Label))
	}
	for _, e := range d.Edges {
		f, t := pl[e.From], pl[e.To]
		if f == nil || t == nil {
			continue
		}
		color := e.Color
		if color == "" {
			color = "#888"
		}
		x0, y0 := f.x+f.w, f.y+f.h/2
		x1, y1 := t.x, t.y+t.h/2
		if t.layer <= f.layer { // should not happen in a DAG laid out by depth
			x0, x1 = f.x+f.w/2, t.x+t.w/2
		}
		mid := (x0 + x1) / 2
		dash := ""
		if e.Dashed {
			dash = ` stroke-dasharray="5,3"`
		}
		fmt.Fprintf(&b, `<path d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" stroke-width="1.3"%s marker-end="url(#arrow)"/>`, x0, y0, mid, y0, mid, y1, x1, y1, color, dash)
		if e.Label != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s" font-size="10" text-anchor="middle">%s</text>`, mid, (y0+y1)/2-4, color, html.EscapeString(e.Label))
		}
	}
	for _, n := range d.Nodes {
		p := pl[n.ID]
		fill := n.Fill
		if fill == "" {
			fill = "white"
		}
		rx := 2.0
		if n.Round {
			rx = p.h / 2
		}
		dash := ""
		if n.Dashed {
			dash = ` stroke-dasharray="4,3"`
		}
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="%.1f" fill="%s" stroke="#333"%s/>`,
			html.EscapeString(n.Tooltip), p.x, p.y, p.w, p.h, rx, fill, dash)
		for i, l := range n.Lines {
			weight := ""
			if i == 0 {
				weight = ` font-weight="bold"`
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle"%s>%s</text>`, p.x+p.w/2, p.y+5+diagramLineH*float64(i+1)-3, weight, html.EscapeString(l))
		}
		b.WriteString(`</g>`)
	}
	x := 20.0
	for _, l := range d.Legend {
		y := height + 16
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="12" height="12" fill="%s" stroke="#333"/>`, x, y, l.Color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`, x+16, y+10, html.EscapeString(l.Label))
		x += 28 + float64(len(l.Label))*diagramCharW
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// String lists the nodes with their inputs, one per line.
func (d *Diagram) String() string {
	var b strings.Builder
	if d.Title != "" {
		b.WriteString(d.Title + "\n")
	}
	from := map[string][]string{}
	for _, e := range d.Edges {
		s := e.From
		if e.Label != "" {
			s += " (" + e.Label + ")"
		}
		from[e.To] = append(from[e.To], s)
	}
	for _, n := range d.Nodes {
		fmt.Fprintf(&b, "%s: %s", n.ID, strings.Join(n.Lines, ", "))
		if f := from[n.ID]; len(f) > 0 {
			fmt.Fprintf(&b, " <- %s", strings.Join(f, ", "))
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// MIMEBundle renders the diagram as SVG with the node list as text.
func (d *Diagram) MIMEBundle() map[string]any {
	return Bundle{"image/svg+xml": d.SVG(), "text/plain": d.String()}
}
