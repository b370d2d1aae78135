package ag

import (
	"fmt"
	"time"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/runtime"
)

// profileStep accumulates where time goes in one run of a tape and the reads after it.
type profileStep struct {
	record, signature, compile, run, download time.Duration
	hits, misses, downloads                   int
	nodes                                     int
	before                                    runtime.Stats
}

// profiler keeps the per-run rows of a tape whose profiling is on.
type profiler struct {
	rows []StepProfile
	cur  profileStep
	open bool
}

// maxProfileRows bounds how many runs a profile keeps (the most recent).
const maxProfileRows = 10000

// StepProfile is one run of a tape (a step, in a training loop) and the reads after it:
// the time recording ops before the run, finding the compiled trace (signature) or
// compiling it, computing (uploads of inputs included), and reading values back; the
// host<->device crossings the runtime counted; the graph size.
type StepProfile struct {
	Record, Signature, Compile, Compute, Download time.Duration
	CacheHit                                      bool
	Nodes                                         int
	Uploads, Downloads                            int
	UploadBytes, DownloadBytes                    int64
}

// Profile turns per-step profiling of the current tape on (with a fresh profile) or off.
// It costs a few clock readings per run when on, nothing when off.
func Profile(on bool) { CurrentTape().Profile(on) }

// ProfileReport returns the current tape's profile.
func ProfileReport() *StepReport { return CurrentTape().ProfileReport() }

// Profile turns per-step profiling on (with a fresh profile) or off.
func (t *Tape) Profile(on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if on {
		t.prof = &profiler{}
	} else {
		t.prof = nil
	}
}

// beginRun closes the previous row and starts one for the run of tr.
func (p *profiler) beginRun(t *Tape, tr *trace) {
	p.closeRow(t)
	p.cur = profileStep{record: time.Since(tr.start), nodes: tr.g.Len(), before: t.rt.Stats()}
	p.open = true
}

// closeRow files the current row.
func (p *profiler) closeRow(t *Tape) {
	if !p.open {
		return
	}
	s := t.rt.Stats()
	c := p.cur
	row := StepProfile{
		Record: c.record, Signature: c.signature, Compile: c.compile, Compute: c.run, Download: c.download,
		CacheHit: c.hits > 0, Nodes: c.nodes,
		Uploads: s.Uploads - c.before.Uploads, UploadBytes: s.UploadBytes - c.before.UploadBytes,
		Downloads: s.Downloads - c.before.Downloads, DownloadBytes: s.DownloadBytes - c.before.DownloadBytes,
	}
	if len(p.rows) == maxProfileRows {
		p.rows = p.rows[1:]
	}
	p.rows = append(p.rows, row)
	p.open = false
}

// StepReport is a tape's per-step profile: one row per run, and the means. In a
// notebook it renders as a table of the last steps and a summary that shows where a
// slow loop spends its time.
type StepReport struct {
	Device string
	Steps  []StepProfile
}

// ProfileReport returns the profile gathered since Profile(true), including the run in
// progress.
func (t *Tape) ProfileReport() *StepReport {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &StepReport{Device: t.rt.DeviceInfo().Name}
	if t.prof == nil {
		return r
	}
	t.prof.closeRow(t)
	r.Steps = append(r.Steps, t.prof.rows...)
	return r
}

// Mean averages the steps.
func (r *StepReport) Mean() StepProfile {
	var m StepProfile
	n := len(r.Steps)
	if n == 0 {
		return m
	}
	hits := 0
	for _, s := range r.Steps {
		m.Record += s.Record
		m.Signature += s.Signature
		m.Compile += s.Compile
		m.Compute += s.Compute
		m.Download += s.Download
		m.Nodes += s.Nodes
		m.Uploads += s.Uploads
		m.Downloads += s.Downloads
		m.UploadBytes += s.UploadBytes
		m.DownloadBytes += s.DownloadBytes
		if s.CacheHit {
			hits++
		}
	}
	d := time.Duration(n)
	m.Record, m.Signature, m.Compile, m.Compute, m.Download = m.Record/d, m.Signature/d, m.Compile/d, m.Compute/d, m.Download/d
	m.Nodes, m.Uploads, m.Downloads = m.Nodes/n, m.Uploads/n, m.Downloads/n
	m.UploadBytes, m.DownloadBytes = m.UploadBytes/int64(n), m.DownloadBytes/int64(n)
	m.CacheHit = hits*2 > n
	return m
}

func (r *StepReport) table() *display.Table {
	t := display.NewTable("step", "record", "signature", "compile / cache", "compute", "download", "uploads", "downloads", "nodes")
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3) }
	row := func(name string, s StepProfile, cache string) {
		t.Row(name, us(s.Record), us(s.Signature), cache, us(s.Compute), us(s.Download),
			fmt.Sprintf("%d (%s)", s.Uploads, runtime.FormatBytes(s.UploadBytes)),
			fmt.Sprintf("%d (%s)", s.Downloads, runtime.FormatBytes(s.DownloadBytes)), s.Nodes)
	}
	first := max(0, len(r.Steps)-10)
	hits := 0
	for i, s := range r.Steps {
		if s.CacheHit {
			hits++
		}
		if i < first {
			continue
		}
		cache := "hit"
		if !s.CacheHit {
			cache = "compiled in " + us(s.Compile)
		}
		row(fmt.Sprint(i), s, cache)
	}
	m := r.Mean()
	row("mean", m, fmt.Sprintf("%d/%d hits, %s compiling", hits, len(r.Steps), us(m.Compile)))
	return t.Caption(fmt.Sprintf("per-step profile on %s: %d runs (the last 10 shown)", r.Device, len(r.Steps)))
}

// MIMEBundle renders the profile as an HTML table.
func (r *StepReport) MIMEBundle() map[string]any { return r.table().MIMEBundle() }

// String renders the profile as a text table.
func (r *StepReport) String() string { return r.table().String() }
