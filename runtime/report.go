package runtime

import (
	"fmt"
	"time"

	"github.com/gml-dev/gml/display"
)

// ProfileReport is the per-op-kind profile of the runs since Profiling was turned on.
// In a notebook it renders as a table: op, count, total time, share, achieved GFLOP/s.
type ProfileReport struct {
	Device string
	Rows   []OpStat
}

// Total is the time summed over all rows.
func (p ProfileReport) Total() time.Duration {
	var t time.Duration
	for _, r := range p.Rows {
		t += r.Time
	}
	return t
}

func (p ProfileReport) table() *display.Table {
	t := display.NewTable("op", "count", "total", "share", "GFLOP/s")
	total := p.Total()
	for _, r := range p.Rows {
		share, gflops := 0.0, 0.0
		if total > 0 {
			share = 100 * float64(r.Time) / float64(total)
		}
		if r.Time > 0 {
			gflops = r.FLOPs / r.Time.Seconds() / 1e9
		}
		t.Row(r.Op.String(), r.Count, r.Time.Round(time.Microsecond).String(), fmt.Sprintf("%.1f%%", share), fmt.Sprintf("%.2f", gflops))
	}
	return t.Caption(fmt.Sprintf("profile on %s: %v in %d op kinds", p.Device, total.Round(time.Microsecond), len(p.Rows)))
}

// MIMEBundle renders the profile as an HTML table with a text fallback.
func (p ProfileReport) MIMEBundle() map[string]any { return p.table().MIMEBundle() }

// String renders the profile as a text table.
func (p ProfileReport) String() string { return p.table().String() }

func (m MemoryReport) table() *display.Table {
	t := display.NewTable("backend", "pool", "in use", "peak")
	for _, r := range m.Rows {
		t.Row(r.Backend, r.Pool.String(), FormatBytes(r.Bytes), FormatBytes(r.Peak))
	}
	return t.Caption("memory: " + FormatBytes(m.Total()) + " in use")
}

// MIMEBundle renders the memory report as an HTML table with a text fallback.
func (m MemoryReport) MIMEBundle() map[string]any { return m.table().MIMEBundle() }

// String renders the memory report as a text table.
func (m MemoryReport) String() string { return m.table().String() }

// DeviceList describes every registered backend: the ones that opened and why the
// others did not.
type DeviceList struct {
	Devices []DeviceInfo
	Errors  map[string]string // backend name -> why it is unavailable
}

// Devices opens every registered backend (once per process) and describes them.
func Devices() DeviceList {
	l := DeviceList{Errors: map[string]string{}}
	for _, name := range Registered() {
		b, err := open(name)
		if err != nil {
			l.Errors[name] = err.Error()
			continue
		}
		l.Devices = append(l.Devices, b.Info())
	}
	return l
}

func (l DeviceList) table() *display.Table {
	t := display.NewTable("backend", "device", "kind", "driver", "memory", "max alloc", "fp16", "bf16", "coopmat KHR", "coopmat NV", "subgroup", "threads")
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	for _, d := range l.Devices {
		t.Row(d.Backend, d.Name, d.Kind, d.Driver, FormatBytes(d.MemoryBytes), FormatBytes(d.MaxAlloc), yes(d.FP16), yes(d.BF16), yes(d.CoopMatKHR), yes(d.CoopMatNV), d.SubgroupSize, d.Threads)
	}
	for name, why := range l.Errors {
		t.Row(name, "unavailable: "+why, "", "", "", "", "", "", "", "", "", "")
	}
	return t.Caption(fmt.Sprintf("%d device(s)", len(l.Devices)))
}

// MIMEBundle renders the device list as an HTML table with a text fallback.
func (l DeviceList) MIMEBundle() map[string]any { return l.table().MIMEBundle() }

// String renders the device list as a text table.
func (l DeviceList) String() string { return l.table().String() }
