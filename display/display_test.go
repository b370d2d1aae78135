package display

import (
	"strings"
	"testing"
	"time"
)

type recorder struct {
	shown   []Bundle
	ids     []string
	updates []bool
	cleared int
}

func (r *recorder) Display(data, _ map[string]any, id string, update bool) {
	r.shown = append(r.shown, data)
	r.ids = append(r.ids, id)
	r.updates = append(r.updates, update)
}
func (r *recorder) ClearOutput(bool) { r.cleared++ }

func TestOutputs(t *testing.T) {
	cases := []struct {
		name string
		out  Output
		mime string
		text string
	}{
		{"html", HTML("<i>x</i> &lt;"), "text/html", "x <"},
		{"markdown", Markdown("# T"), "text/markdown", "# T"},
		{"png", PNG([]byte{1, 2, 3}), "image/png", "<PNG image, 3 bytes>"},
		{"svg", SVG("<svg/>"), "image/svg+xml", "<SVG image, 6 bytes>"},
		{"json", JSON([]int{1}), "application/json", "[\n  1\n]"},
		{"text", Text("t"), "text/plain", "t"},
	}
	for _, c := range cases {
		b := c.out.MIMEBundle()
		if _, ok := b[c.mime]; !ok {
			t.Errorf("%s: bundle lacks %s: %v", c.name, c.mime, b)
		}
		if got := c.out.String(); got != c.text {
			t.Errorf("%s: text %q, want %q", c.name, got, c.text)
		}
	}
	if got := JSON(func() {}).String(); !strings.Contains(got, "cannot encode") {
		t.Errorf("JSON of a func: %q", got)
	}
}

func TestPublisherAndHandles(t *testing.T) {
	r := &recorder{}
	SetPublisher(r)
	defer SetPublisher(nil)
	Show(HTML("<b>a</b>"), 42)
	h := NewDisplay(Text("v1"))
	h.Update(Text("v2"))
	ClearOutput(true)
	if len(r.shown) != 4 || r.cleared != 1 {
		t.Fatalf("got %d displays, %d clears", len(r.shown), r.cleared)
	}
	if r.shown[1]["text/plain"] != "42" || r.ids[2] != h.ID() || r.ids[3] != h.ID() || !r.updates[3] || r.updates[2] {
		t.Errorf("unexpected publications: %v %v %v", r.shown, r.ids, r.updates)
	}
}

func TestProgressThrottlesAndFormats(t *testing.T) {
	r := &recorder{}
	SetPublisher(r)
	defer SetPublisher(nil)
	now := time.Unix(0, 0)
	p := NewProgress(10, WithLabel("train"), WithWidth(10), withClock(func() time.Time { return now }))
	for i := 0; i < 5; i++ {
		p.Add(1) // same instant: throttled
	}
	now = now.Add(time.Second)
	p.Postfix("loss=0.5")
	p.Done()
	if len(r.shown) != 3 {
		t.Fatalf("got %d publications, want 3 (first, one after a second, done)", len(r.shown))
	}
	want := "train [#####-----] 5/10  50% 1s<1s loss=0.5"
	if got := r.shown[2]["text/plain"]; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if html := r.shown[2]["text/html"].(string); !strings.Contains(html, `<progress value="5" max="10"`) {
		t.Errorf("html %q", html)
	}
}

func TestLinePlotMismatchedSeries(t *testing.T) {
	p := LinePlot("bad", "x", "y", Series{Name: "s", X: []float64{1, 2}, Y: []float64{1}})
	if _, err := p.Encode("png"); err == nil || !strings.Contains(err.Error(), "2 x values and 1 y values") {
		t.Errorf("err = %v", err)
	}
}
