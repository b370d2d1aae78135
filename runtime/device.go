package runtime

import (
	"fmt"
	"strings"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/tensor"
)

// Memory returns the device's free and total memory in bytes, opening it. Free is what
// the backend reports (the driver's budget on Vulkan, available memory on the CPU);
// a backend that cannot tell reports its total less what gml allocated on it.
func (d *PhysicalDevice) Memory() (free, total int64, err error) {
	b, err := d.Open()
	if err != nil {
		return 0, 0, err
	}
	if m, ok := b.(MemoryReporter); ok {
		free, total = m.MemoryInfo()
		return free, total, nil
	}
	total = b.Info().MemoryBytes
	return max(total-backendUsed(b), 0), total, nil
}

// backendUsed sums what a backend reports allocated per pool, when it reports it.
func backendUsed(b Backend) int64 {
	u, ok := b.(interface{ Used(Pool) int64 })
	if !ok {
		return 0
	}
	var n int64
	for p := Pool(0); p < NumPools; p++ {
		n += u.Used(p)
	}
	return n
}

// Abilities lists the optional abilities of the device's backend (abilities.go),
// opening it: "async-transfer", "events", "fill", "copy",
// "ranged-io", "host-visible", "memory-info", "explains-support".
func (d *PhysicalDevice) Abilities() ([]string, error) {
	b, err := d.Open()
	if err != nil {
		return nil, err
	}
	return abilitiesOf(b), nil
}

func abilitiesOf(b Backend) []string {
	var out []string
	add := func(ok bool, name string) {
		if ok {
			out = append(out, name)
		}
	}
	_, async := b.(AsyncTransfer)
	_, events := b.(EventRecorder)
	_, fill := b.(Filler)
	_, cp := b.(Copier)
	_, rio := b.(RangeIO)
	_, host := b.(HostVisibility)
	_, mem := b.(MemoryReporter)
	_, why := b.(SupportExplainer)
	add(async, "async-transfer")
	add(events, "events")
	add(fill, "fill")
	add(cp, "copy")
	add(rio, "ranged-io")
	add(host, "host-visible")
	add(mem, "memory-info")
	add(why, "explains-support")
	return out
}

// Support answers PhysicalDevice.Supports: whether the device runs a node, how, and if not,
// why (the scheduler then runs the node on the CPU).
type Support struct {
	Device string // the device's ID
	Node   string // the node asked about: "#2 matmul f16[64 64]"
	OK     bool
	How    string // "kernel", or "decomposition into exp, sum, div" for a fused op
	Reason string // why not, when !OK
}

// String renders the answer in one line.
func (s Support) String() string {
	if s.OK {
		return fmt.Sprintf("%s runs %s: %s", s.Device, s.Node, s.How)
	}
	return fmt.Sprintf("%s does not run %s: %s", s.Device, s.Node, s.Reason)
}

// Supports reports whether the device runs node n (its op with its dtypes, shapes and
// attributes), directly or through the op's decomposition, opening the device.
func (d *PhysicalDevice) Supports(n *tensor.Node) Support {
	s := Support{Device: d.id, Node: n.String()}
	b, err := d.Open()
	if err != nil {
		s.Reason = err.Error()
		return s
	}
	return supportOn(b, n, s)
}

func supportOn(b Backend, n *tensor.Node, s Support) Support {
	if b.Supports(n) {
		s.OK, s.How = true, "kernel"
		return s
	}
	if sub, _, ok := decomposition(n, b, map[*tensor.Node]bool{}); ok {
		var ops []string
		seen := map[tensor.Op]bool{}
		for _, x := range sub {
			if x.Op().Kind() != tensor.KindSource && !seen[x.Op()] {
				seen[x.Op()] = true
				ops = append(ops, x.Op().String())
			}
		}
		s.OK, s.How = true, "decomposition into "+strings.Join(ops, ", ")
		return s
	}
	s.Reason = whyUnsupported(b, n)
	return s
}

// whyUnsupported asks the backend why it lacks n, or says what the scheduler knows.
func whyUnsupported(b Backend, n *tensor.Node) string {
	if e, ok := b.(SupportExplainer); ok {
		if why := e.WhyUnsupported(n); why != "" {
			return why
		}
	}
	return fmt.Sprintf("%s has no kernel for %s on %s", b.Name(), n.Op(), n.DType())
}

// Operand is the dtype and shape of one input, for SupportsOp.
type Operand struct {
	DType tensor.DType
	Shape tensor.Shape
}

// SupportsOp reports whether the device runs op with attribute attr (nil for the op's
// defaults) on inputs of the given dtypes and shapes. Inputs the op rejects (a shape
// mismatch) give an answer whose Reason is the op's error.
func (d *PhysicalDevice) SupportsOp(op tensor.Op, attr any, inputs ...Operand) Support {
	g := tensor.NewGraph()
	var n *tensor.Node
	err := tensor.Catch(func() {
		ins := make([]*tensor.Node, len(inputs))
		for i, in := range inputs {
			ins[i] = g.Input(fmt.Sprint("x", i), in.DType, in.Shape...)
		}
		n = tensor.Apply(op, attr, ins...)
	})
	if err != nil {
		return Support{Device: d.id, Node: op.String(), Reason: err.Error()}
	}
	return d.Supports(n)
}

// rows describes the device as label/value pairs. Abilities and free memory need the
// device open; they show only once it is.
func (d *PhysicalDevice) rows() [][2]string {
	in := d.info
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	r := [][2]string{
		{"index", fmt.Sprint(d.index)}, {"ID", d.id}, {"name", in.Name}, {"type", string(in.Kind)},
		{"backend", in.Backend}, {"driver", in.Driver}, {"memory", FormatBytes(in.MemoryBytes)},
	}
	openMu.Lock()
	b, isOpen := opened[d.id]
	openMu.Unlock()
	if isOpen {
		if free, _, err := d.Memory(); err == nil {
			r = append(r, [2]string{"free", FormatBytes(free)})
		}
	}
	r = append(r, [2]string{"max allocation", FormatBytes(in.MaxAlloc)}, [2]string{"fp16", yes(in.FP16)}, [2]string{"bf16", yes(in.BF16)},
		[2]string{"cooperative matrices", coopText(in)})
	if in.SubgroupSize > 0 {
		r = append(r, [2]string{"subgroup size", fmt.Sprint(in.SubgroupSize)})
	}
	if in.Threads > 0 {
		r = append(r, [2]string{"threads", fmt.Sprint(in.Threads)})
	}
	if in.MaxWorkgroup > 0 {
		r = append(r, [2]string{"limits", fmt.Sprintf("binding %s, shared %s, workgroup %d", FormatBytes(in.MaxBinding), FormatBytes(in.SharedMemory), in.MaxWorkgroup)})
	}
	if isOpen {
		r = append(r, [2]string{"abilities", strings.Join(abilitiesOf(b), ", ")})
	} else {
		r = append(r, [2]string{"abilities", "(not opened)"})
	}
	for _, n := range in.Notes {
		r = append(r, [2]string{"note", n})
	}
	return r
}

func coopText(in DeviceInfo) string {
	var s []string
	if in.CoopMatKHR {
		s = append(s, "KHR")
	}
	if in.CoopMatNV {
		s = append(s, "NV")
	}
	if len(s) == 0 {
		return "no"
	}
	return strings.Join(s, ", ")
}

func (d *PhysicalDevice) table() *display.Table {
	t := display.NewTable("property", "value")
	for _, r := range d.rows() {
		t.Row(r[0], r[1])
	}
	return t.Caption("device " + d.id)
}

// MIMEBundle renders the device as a two-column table.
func (d *PhysicalDevice) MIMEBundle() map[string]any { return d.table().MIMEBundle() }

func (l DeviceList) table() *display.Table {
	t := display.NewTable("index", "ID", "device", "type", "memory", "max alloc", "fp16", "bf16", "coopmat", "subgroup", "threads", "opened")
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	for _, d := range l.Devices {
		in := d.info
		openMu.Lock()
		_, isOpen := opened[d.id]
		openMu.Unlock()
		t.Row(d.index, d.id, in.Name, string(in.Kind), FormatBytes(in.MemoryBytes), FormatBytes(in.MaxAlloc), yes(in.FP16), yes(in.BF16), coopText(in), in.SubgroupSize, in.Threads, yes(isOpen))
	}
	for name, why := range l.Errors {
		t.Row("", name, "unavailable: "+why, "", "", "", "", "", "", "", "", "")
	}
	return t.Caption(fmt.Sprintf("%d device(s)", len(l.Devices)))
}

// MIMEBundle renders the device list as an HTML table with a text fallback.
func (l DeviceList) MIMEBundle() map[string]any { return l.table().MIMEBundle() }

// String renders the device list as a text table.
func (l DeviceList) String() string { return l.table().String() }
