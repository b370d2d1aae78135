package display

import (
	"fmt"
	"html"
	"os"
	"strings"
	"sync"
	"time"
)

// progressInterval is the least time between two in-place notebook updates.
const progressInterval = 100 * time.Millisecond

// Progress is a progress bar: an HTML bar updated in place in a notebook (at most about
// ten updates a second), a carriage-return text bar on standard output elsewhere.
// Its methods are safe for concurrent use.
type Progress struct {
	mu      sync.Mutex
	total   int
	n       int
	label   string
	postfix string
	width   int
	start   time.Time
	last    time.Time
	handle  *Handle
	done    bool
	now     func() time.Time
}

// ProgressOption configures a Progress.
type ProgressOption func(*Progress)

// WithLabel sets the text shown before the bar.
func WithLabel(s string) ProgressOption { return func(p *Progress) { p.label = s } }

// WithWidth sets the width of the text bar in characters (default 30).
func WithWidth(n int) ProgressOption {
	return func(p *Progress) {
		if n > 0 {
			p.width = n
		}
	}
}

// withClock makes the bar read time from now; tests use it for stable ETA text.
func withClock(now func() time.Time) ProgressOption { return func(p *Progress) { p.now = now } }

// NewProgress starts a progress bar counting to total (total <= 0 means unknown) and
// shows it at zero.
func NewProgress(total int, options ...ProgressOption) *Progress {
	p := &Progress{total: total, width: 30, now: time.Now}
	for _, o := range options {
		o(p)
	}
	p.start = p.now()
	p.render(true)
	return p
}

// Set moves the bar to n.
func (p *Progress) Set(n int) {
	p.mu.Lock()
	p.n = n
	p.mu.Unlock()
	p.render(false)
}

// Add advances the bar by delta.
func (p *Progress) Add(delta int) {
	p.mu.Lock()
	p.n += delta
	p.mu.Unlock()
	p.render(false)
}

// Label replaces the text shown before the bar.
func (p *Progress) Label(s string) {
	p.mu.Lock()
	p.label = s
	p.mu.Unlock()
	p.render(false)
}

// Postfix replaces the free-form text shown after the counts, for example
// "loss=0.31 acc=0.89".
func (p *Progress) Postfix(s string) {
	p.mu.Lock()
	p.postfix = s
	p.mu.Unlock()
	p.render(false)
}

// Done draws the final state of the bar and ends it (a newline in a terminal).
func (p *Progress) Done() {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	p.done = true
	p.mu.Unlock()
	p.render(true)
}

// String returns the text form of the bar, e.g.
// "train [##########----------] 5/10 50% 1.2s<1.2s loss=0.3".
func (p *Progress) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.text()
}

// MIMEBundle renders the bar as HTML and text.
func (p *Progress) MIMEBundle() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bundle()
}

func (p *Progress) fraction() float64 {
	if p.total <= 0 {
		return 0
	}
	return min(1, max(0, float64(p.n)/float64(p.total)))
}

func (p *Progress) timing() string {
	elapsed := p.now().Sub(p.start)
	s := elapsed.Round(100 * time.Millisecond).String()
	if f := p.fraction(); f > 0 && f < 1 {
		eta := time.Duration(float64(elapsed) * (1 - f) / f)
		s += "<" + eta.Round(100*time.Millisecond).String()
	}
	return s
}

func (p *Progress) counts() string {
	if p.total <= 0 {
		return fmt.Sprintf("%d", p.n)
	}
	return fmt.Sprintf("%d/%d %3.0f%%", p.n, p.total, 100*p.fraction())
}

func (p *Progress) text() string {
	var parts []string
	if p.label != "" {
		parts = append(parts, p.label)
	}
	if p.total > 0 {
		fill := int(p.fraction() * float64(p.width))
		parts = append(parts, "["+strings.Repeat("#", fill)+strings.Repeat("-", p.width-fill)+"]")
	}
	parts = append(parts, p.counts(), p.timing())
	if p.postfix != "" {
		parts = append(parts, p.postfix)
	}
	return strings.Join(parts, " ")
}

func (p *Progress) bundle() Bundle {
	var sb strings.Builder
	sb.WriteString(`<div style="font-family:monospace">`)
	if p.label != "" {
		fmt.Fprintf(&sb, "%s ", html.EscapeString(p.label))
	}
	if p.total > 0 {
		fmt.Fprintf(&sb, `<progress value="%d" max="%d" style="width:20em;vertical-align:middle"></progress> `, min(p.n, p.total), p.total)
	}
	fmt.Fprintf(&sb, "%s %s", html.EscapeString(p.counts()), html.EscapeString(p.timing()))
	if p.postfix != "" {
		fmt.Fprintf(&sb, " %s", html.EscapeString(p.postfix))
	}
	sb.WriteString("</div>")
	return Bundle{"text/html": sb.String(), "text/plain": p.text()}
}

// render shows the current state: in a notebook through the display handle (throttled
// unless force), otherwise as a text line rewritten with a carriage return.
func (p *Progress) render(force bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !force && now.Sub(p.last) < progressInterval {
		return
	}
	p.last = now
	pub := currentPublisher()
	if pub == nil {
		end := ""
		if p.done {
			end = "\n"
		}
		fmt.Fprintf(os.Stdout, "\r%s%s", p.text(), end)
		return
	}
	if p.handle == nil {
		p.handle = &Handle{id: fmt.Sprintf("gml-progress-%d-%d", os.Getpid(), displayID.Add(1))}
		pub.Display(p.bundle(), map[string]any{}, p.handle.id, false)
		return
	}
	pub.Display(p.bundle(), map[string]any{}, p.handle.id, true)
}
