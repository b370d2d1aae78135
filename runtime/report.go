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
