package runtime

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// Schedule is how a runtime would run a graph: the scheduler's passes run as Compile
// runs them, with placeholder buffers, so nothing is allocated, uploaded or prepared.
// It renders as a summary, tables of segments, fallbacks, transfers and nodes, and a
// picture of the graph.
type Schedule struct {
	Device    string // the preferred device's ID
	Outputs   []*tensor.Node
	Nodes     []NodePlacement // every node the outputs need, in schedule order
	Segments  []SegmentInfo
	Fallbacks []Fallback      // nodes the preferred device cannot run, computed on the CPU
	Lowered   []Lowering      // fused ops computed through their decomposition
	Transfers []TransferInfo  // values copied between devices before a segment
	Buffers   BufferReuse     // how activations share buffers
	Memory    [NumPools]int64 // bytes the executable would own, per pool (variables not counted)
	FLOPs     float64         // estimated floating-point operations of one run
	Bytes     int64           // estimated bytes the computing nodes read and write
}

// NodePlacement is where one node runs and which buffer holds it.
type NodePlacement struct {
	Node *tensor.Node
	// Role: "input", "constant", "variable", "compute", "fallback" (compute on the CPU
	// because the device lacks it), "in-place" (writes a variable), "view" (a reshape
	// sharing its input's buffer), "fused" (computed through its decomposition, whose
	// result's buffer it shares).
	Role    string
	Device  string       // the device that computes it, or holds it (variables); "" for inputs and constants, which go where they are read
	Segment int          // its segment, or -1
	Buffer  int          // its activation buffer's number on its device, or -1
	Reuses  *tensor.Node // the value whose buffer it takes over after that value's last reader
	FLOPs   float64
	Bytes   int64 // its output's bytes
}

// SegmentInfo is a run of nodes one device prepares and runs as one program (one
// command buffer on a GPU).
type SegmentInfo struct {
	Index  int
	Device string
	Nodes  []*tensor.Node
	FLOPs  float64
	Bytes  int64 // read and written by its nodes
}

// Fallback is a node that runs on the CPU, and why.
type Fallback struct {
	Node   *tensor.Node
	Reason string
}

// Lowering is a fused node the device computes through its decomposition.
type Lowering struct {
	Node   *tensor.Node
	Result *tensor.Node // the decomposition's result
	Ops    []string     // the decomposition's ops
}

// TransferInfo is a value copied between devices before a segment runs.
type TransferInfo struct {
	Node     *tensor.Node
	From, To string
	Bytes    int64
	Before   int // the segment that reads it
}

// BufferReuse counts the activations of a run and the buffers that hold them: after a
// value's last reader, its buffer holds a later value of the same size.
type BufferReuse struct {
	Values   int   // activations computed
	Buffers  int   // buffers allocated for them
	Bytes    int64 // bytes of those buffers
	Unshared int64 // bytes they would take with a buffer each
}

// Explain reports how the runtime would run the graph that computes outputs (the
// graph's results, Graph.Sinks, when none are given), without allocating anything.
func (r *Runtime) Explain(g *tensor.Graph, outputs ...*tensor.Node) (s *Schedule, err error) {
	if len(outputs) == 0 {
		if g == nil {
			return nil, fmt.Errorf("runtime: Explain needs a graph or outputs")
		}
		outputs = g.Sinks()
		if len(outputs) == 0 {
			return nil, fmt.Errorf("runtime: Explain: the graph computes nothing (it has %d source nodes and no other)", g.Len())
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if cerr := tensor.Catch(func() { s, err = r.explain(outputs) }); cerr != nil {
		return nil, cerr
	}
	return s, err
}

// Explain reports how the default runtime would run a graph (Runtime.Explain).
func Explain(g *tensor.Graph, outputs ...*tensor.Node) (*Schedule, error) {
	r, err := Default()
	if err != nil {
		return nil, err
	}
	return r.Explain(g, outputs...)
}

// dryAllocator hands the allocate pass placeholder buffers and the variables' real
// ones where they are resident: Explain's allocator.
type dryAllocator struct{ r *Runtime }

type dryBuffer struct{ size int64 }

func (b *dryBuffer) Size() int64 { return b.size }

func (a dryAllocator) alloc(b Backend, bytes int64, pool Pool) (Buffer, error) {
	return &dryBuffer{size: max(bytes, 4)}, nil
}
func (a dryAllocator) free(Backend, Buffer, Pool)           {}
func (a dryAllocator) upload(Backend, Buffer, []byte) error { return nil }
func (a dryAllocator) variable(v *tensor.Variable, on Backend) (*resident, error) {
	if res, ok := a.r.vars[v]; ok {
		return res, nil
	}
	return &resident{backend: on, buf: &dryBuffer{size: int64(v.DType().Bytes(v.Shape().Size()))}, pool: PoolWeights}, nil
}

func nodeBytes(n *tensor.Node) int64 { return int64(n.DType().Bytes(n.Shape().Size())) }

// explain runs the passes with placeholders and describes the result. r.mu is held.
func (r *Runtime) explain(outputs []*tensor.Node) (*Schedule, error) {
	sc, err := r.plan(outputs, dryAllocator{r})
	if err != nil {
		return nil, err
	}
	s := &Schedule{Device: backendID(r.preferred), Outputs: outputs}
	segOf := map[*tensor.Node]int{}
	for i, seg := range sc.segs {
		info := SegmentInfo{Index: i, Device: backendID(seg.backend), Nodes: seg.nodes}
		for _, n := range seg.nodes {
			segOf[n] = i
			f, b := FLOPs(n), nodeBytes(n)
			for _, in := range n.Inputs() {
				b += nodeBytes(in)
			}
			if n.Op() == tensor.OpReshape {
				f, b = 0, 0
			}
			info.FLOPs += f
			info.Bytes += b
		}
		s.FLOPs += info.FLOPs
		s.Bytes += info.Bytes
		s.Segments = append(s.Segments, info)
	}
	fellBack := map[*tensor.Node]bool{}
	for _, n := range sc.fallbacks {
		fellBack[n] = true
		s.Fallbacks = append(s.Fallbacks, Fallback{Node: n, Reason: whyUnsupported(r.preferred, n)})
	}
	// The lowered fused nodes, in schedule order of their results.
	var fused []*tensor.Node
	for n := range sc.al {
		fused = append(fused, n)
	}
	sort.Slice(fused, func(i, j int) bool { return fused[i].ID() < fused[j].ID() })
	for _, n := range fused {
		d := sc.al[n]
		var ops []string
		seen := map[tensor.Op]bool{}
		var walk func(x *tensor.Node)
		inputs := map[*tensor.Node]bool{}
		for _, in := range n.Inputs() {
			inputs[in] = true
		}
		visited := map[*tensor.Node]bool{}
		walk = func(x *tensor.Node) {
			if visited[x] || inputs[x] || x.Op().Kind() == tensor.KindSource {
				return
			}
			visited[x] = true
			if !seen[x.Op()] {
				seen[x.Op()] = true
				ops = append(ops, x.Op().String())
			}
			for _, in := range x.Inputs() {
				walk(in)
			}
		}
		walk(d)
		s.Lowered = append(s.Lowered, Lowering{Node: n, Result: d, Ops: ops})
	}
	for i, pre := range sc.place.pre {
		for _, t := range pre {
			s.Transfers = append(s.Transfers, TransferInfo{Node: t.node, From: backendID(t.from), To: backendID(t.to), Bytes: nodeBytes(t.node), Before: i})
		}
	}
	for _, o := range sc.place.owned {
		s.Memory[o.pool] += o.buf.Size()
	}
	// Nodes: sources first (where they are read), then the schedule, with buffers.
	bufNum := map[Buffer]int{}
	owner := map[Buffer]*tensor.Node{}
	seenBuf := map[Buffer]bool{}
	var sources []NodePlacement
	placed := map[*tensor.Node]bool{}
	addSource := func(n *tensor.Node) {
		if placed[n] {
			return
		}
		placed[n] = true
		p := NodePlacement{Node: n, Segment: -1, Buffer: -1, Bytes: nodeBytes(n)}
		switch n.Op() {
		case tensor.OpInput:
			p.Role = "input"
		case tensor.OpConst:
			p.Role = "constant"
		default:
			p.Role = "variable"
			p.Device = backendID(sc.homes[n.Variable()])
		}
		sources = append(sources, p)
	}
	var computed []NodePlacement
	for _, n := range sc.nodes {
		if isSource(n) {
			addSource(n)
			continue
		}
		for _, in := range n.Inputs() {
			if isSource(in) {
				addSource(in)
			}
		}
		seg := segOf[n]
		b := sc.segs[seg].backend
		p := NodePlacement{Node: n, Role: "compute", Device: backendID(b), Segment: seg, Buffer: -1, FLOPs: FLOPs(n), Bytes: nodeBytes(n)}
		switch {
		case fellBack[n] && len(n.Op().Writes()) > 0:
			p.Role = "in-place"
		case fellBack[n]:
			p.Role = "fallback"
		case n.Op() == tensor.OpReshape:
			p.Role, p.FLOPs = "view", 0
		case len(n.Op().Writes()) > 0:
			p.Role = "in-place"
		}
		if p.Role == "compute" || p.Role == "fallback" {
			buf := sc.place.bufs[valueKey{n, b}]
			if _, ok := bufNum[buf]; !ok {
				bufNum[buf] = len(bufNum)
			}
			p.Buffer = bufNum[buf]
			if prev := owner[buf]; prev != nil {
				p.Reuses = prev
			}
			owner[buf] = n
			s.Buffers.Values++
			s.Buffers.Unshared += max(p.Bytes, 4)
			if !seenBuf[buf] {
				seenBuf[buf] = true
				s.Buffers.Buffers++
				s.Buffers.Bytes += buf.Size()
			}
		}
		computed = append(computed, p)
	}
	s.Nodes = append(sources, computed...)
	for _, l := range s.Lowered {
		s.Nodes = append(s.Nodes, NodePlacement{Node: l.Node, Role: "fused", Device: backendID(sc.on[l.Node]), Segment: -1, Buffer: -1, Bytes: nodeBytes(l.Node)})
	}
	return s, nil
}

// placement describes where a node runs, for tables.
func (p NodePlacement) placement() string {
	switch p.Role {
	case "input":
		return "fed per run"
	case "constant":
		return "uploaded once"
	case "variable":
		return "resident on " + p.Device
	case "view":
		return fmt.Sprintf("%s, view of #%d", p.Device, p.Node.Input(0).ID())
	case "fused":
		return p.Device + " through its decomposition"
	}
	s := fmt.Sprintf("%s, segment %d", p.Device, p.Segment)
	if p.Role == "fallback" {
		s += " (fallback)"
	}
	if p.Role == "in-place" {
		s += " (writes its variable)"
	}
	return s
}

func (p NodePlacement) bufferText() string {
	if p.Buffer < 0 {
		return ""
	}
	s := fmt.Sprintf("b%d", p.Buffer)
	if p.Reuses != nil {
		s += fmt.Sprintf(" (after #%d)", p.Reuses.ID())
	}
	return s
}

// Summary is the schedule in a few sentences.
func (s *Schedule) Summary() string {
	var b strings.Builder
	computing := 0
	for _, n := range s.Nodes {
		if n.Segment >= 0 {
			computing++
		}
	}
	fmt.Fprintf(&b, "%d nodes (%d computed) in %d segment(s) on %s", len(s.Nodes), computing, len(s.Segments), s.Device)
	devs := map[string]bool{}
	for _, seg := range s.Segments {
		devs[seg.Device] = true
	}
	if len(devs) > 1 {
		var names []string
		for d := range devs {
			names = append(names, d)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, " (devices: %s)", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "; %d fallback(s), %d lowered, %d transfer(s)", len(s.Fallbacks), len(s.Lowered), len(s.Transfers))
	fmt.Fprintf(&b, "; about %s FLOPs and %s moved per run", formatCount(s.FLOPs), FormatBytes(s.Bytes))
	if s.Buffers.Values > 0 {
		fmt.Fprintf(&b, "; %d activations in %d buffers (%s, %s without reuse)", s.Buffers.Values, s.Buffers.Buffers, FormatBytes(s.Buffers.Bytes), FormatBytes(s.Buffers.Unshared))
	}
	var total int64
	for _, m := range s.Memory {
		total += m
	}
	fmt.Fprintf(&b, "; %s of buffers", FormatBytes(total))
	return b.String()
}

// formatCount renders a count with an SI prefix: "1.2 G".
func formatCount(v float64) string {
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.div {
			return fmt.Sprintf("%.3g %s", v/u.div, u.unit)
		}
	}
	return fmt.Sprintf("%.0f", v)
}
