package runtime

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gml-dev/gml/display"
)

// Timeline records when work ran, per device and queue, while it is active: every event
// (transfers, computations started without waiting), every segment an executable runs
// and every input it uploads. It renders as a Gantt chart, so an upload that overlaps a
// computation shows as two bars at the same time on two lanes. Lanes are named
// "<device> compute" and "<device> transfer".
type Timeline struct {
	mu      sync.Mutex
	started time.Time
	stopped time.Time
	spans   []TimelineSpan
	events  []*Event
}

// TimelineSpan is one piece of work.
type TimelineSpan struct {
	Lane, Label string
	Start, End  time.Time
}

var (
	timelineMu sync.Mutex
	active     *Timeline
)

// StartTimeline starts recording a timeline, which replaces any active one, and
// returns it. Recording costs a clock reading per piece of work.
func StartTimeline() *Timeline {
	t := &Timeline{started: time.Now()}
	timelineMu.Lock()
	if active != nil {
		active.stop()
	}
	active = t
	timelineMu.Unlock()
	return t
}

func activeTimeline() *Timeline {
	timelineMu.Lock()
	defer timelineMu.Unlock()
	return active
}

// Stop ends the recording and waits for the events it recorded, so that their times are
// known. Further work is not recorded.
func (t *Timeline) Stop() {
	timelineMu.Lock()
	if active == t {
		active = nil
	}
	timelineMu.Unlock()
	t.stop()
	for _, e := range t.eventList() {
		e.Synchronize()
	}
}

func (t *Timeline) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped.IsZero() {
		t.stopped = time.Now()
	}
}

func (t *Timeline) eventList() []*Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*Event(nil), t.events...)
}

func (t *Timeline) addEvent(e *Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, e)
}

// add records work that ran on the host's clock.
func (t *Timeline) add(lane, label string, start, end time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spans = append(t.spans, TimelineSpan{Lane: lane, Label: label, Start: start, End: end})
}

func eventLane(e *Event) string {
	if e.kind == "compute" {
		return e.device + " compute"
	}
	return e.device + " transfer"
}

// Spans returns the recorded work in time order: the spans of events that completed,
// and of the executables' segments and uploads. Events still running are left out.
func (t *Timeline) Spans() []TimelineSpan {
	t.mu.Lock()
	out := append([]TimelineSpan(nil), t.spans...)
	events := append([]*Event(nil), t.events...)
	t.mu.Unlock()
	for _, e := range events {
		if e.kind == "record" {
			continue
		}
		if start, end, ok := e.Span(); ok {
			label := e.kind
			if e.bytes > 0 {
				label += " " + FormatBytes(e.bytes)
			}
			out = append(out, TimelineSpan{Lane: eventLane(e), Label: label, Start: start, End: end})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// Busy is the total time some span on a lane whose name contains lane was running.
func (t *Timeline) Busy(lane string) time.Duration {
	return total(union(t.matching(lane)))
}

// Overlap is the time during which work on a lane containing a and work on a lane
// containing b ran at once: Overlap("transfer", "compute") is the transfer time hidden
// under computation.
func (t *Timeline) Overlap(a, b string) time.Duration {
	x, y := union(t.matching(a)), union(t.matching(b))
	var d time.Duration
	for _, p := range x {
		for _, q := range y {
			if s, e := later(p[0], q[0]), earlier(p[1], q[1]); e.After(s) {
				d += e.Sub(s)
			}
		}
	}
	return d
}

func (t *Timeline) matching(lane string) []TimelineSpan {
	var out []TimelineSpan
	for _, s := range t.Spans() {
		if strings.Contains(s.Lane, lane) {
			out = append(out, s)
		}
	}
	return out
}

// union merges spans into disjoint intervals, in order.
func union(spans []TimelineSpan) [][2]time.Time {
	sort.Slice(spans, func(i, j int) bool { return spans[i].Start.Before(spans[j].Start) })
	var out [][2]time.Time
	for _, s := range spans {
		if n := len(out); n > 0 && !s.Start.After(out[n-1][1]) {
			out[n-1][1] = later(out[n-1][1], s.End)
			continue
		}
		out = append(out, [2]time.Time{s.Start, s.End})
	}
	return out
}

func total(iv [][2]time.Time) time.Duration {
	var d time.Duration
	for _, p := range iv {
		d += p[1].Sub(p[0])
	}
	return d
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// chart converts the timeline for display, times from its first span.
func (t *Timeline) chart() *display.Timeline {
	spans := t.Spans()
	c := &display.Timeline{Title: "timeline"}
	if len(spans) == 0 {
		return c
	}
	origin := spans[0].Start
	var lanes []string
	seen := map[string]bool{}
	for _, s := range spans {
		if !seen[s.Lane] {
			seen[s.Lane] = true
			lanes = append(lanes, s.Lane)
		}
		c.Spans = append(c.Spans, display.Span{Lane: s.Lane, Label: s.Label, Start: s.Start.Sub(origin), End: s.End.Sub(origin)})
	}
	sort.Strings(lanes)
	c.Lanes = lanes
	end := spans[0].End
	for _, s := range spans {
		end = later(end, s.End)
	}
	c.Title = fmt.Sprintf("timeline: %d spans over %v", len(spans), end.Sub(origin).Round(time.Microsecond))
	if ov := t.Overlap("transfer", "compute"); ov > 0 {
		c.Title += fmt.Sprintf("; transfers overlapped compute for %v", ov.Round(time.Microsecond))
	}
	return c
}

// MIMEBundle renders the timeline as a chart with a text fallback.
func (t *Timeline) MIMEBundle() map[string]any { return t.chart().MIMEBundle() }

// String renders the timeline as text.
func (t *Timeline) String() string { return t.chart().String() }
