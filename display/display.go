package display

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

// Bundle is a MIME bundle: MIME type to content ("text/plain" to a string, "image/png"
// to base64 text, "application/json" to a JSON-encodable value).
type Bundle = map[string]any

// Renderer is implemented by any value that can show itself richly in a notebook.
// The returned bundle must contain "text/plain".
type Renderer interface {
	MIMEBundle() map[string]any
}

// Publisher receives the output of the running cell. The kernel implements it; without
// one, display writes text to standard output.
type Publisher interface {
	// Display shows data (a MIME bundle) as display_data, or updates the output carrying
	// displayID in place when update is true.
	Display(data, metadata map[string]any, displayID string, update bool)
	// ClearOutput clears the cell's output, when the next output arrives if wait is true.
	ClearOutput(wait bool)
}

// InputPublisher is a Publisher that can ask the user for a line of input.
type InputPublisher interface {
	Input(prompt string, password bool) (string, error)
}

var (
	pubMu     sync.RWMutex
	publisher Publisher
	displayID atomic.Uint64
	stdinBuf  = bufio.NewReader(os.Stdin)
)

// SetPublisher installs p as the receiver of display output; nil restores the text
// fallback. The kernel calls it around each cell.
func SetPublisher(p Publisher) {
	pubMu.Lock()
	publisher = p
	pubMu.Unlock()
}

func currentPublisher() Publisher {
	pubMu.RLock()
	defer pubMu.RUnlock()
	return publisher
}

// Output is a ready-made MIME bundle, as returned by HTML, Markdown, PNG, SVG, JSON and
// Text. As a cell's last value it renders richly; String gives its text form.
type Output struct {
	bundle Bundle
}

// MIMEBundle returns the bundle of o.
func (o Output) MIMEBundle() map[string]any { return o.bundle }

// String returns the text/plain form of o.
func (o Output) String() string { return textOf(o.bundle) }

// HTML returns an Output that renders s as HTML; its text form is s with tags removed.
func HTML(s string) Output {
	return Output{Bundle{"text/html": s, "text/plain": stripTags(s)}}
}

// Markdown returns an Output that renders s as Markdown; its text form is s itself.
func Markdown(s string) Output {
	return Output{Bundle{"text/markdown": s, "text/plain": s}}
}

// PNG returns an Output that shows a PNG image given as encoded bytes.
func PNG(png []byte) Output {
	return Output{Bundle{
		"image/png":  base64.StdEncoding.EncodeToString(png),
		"text/plain": fmt.Sprintf("<PNG image, %d bytes>", len(png)),
	}}
}

// SVG returns an Output that shows an SVG document.
func SVG(svg string) Output {
	return Output{Bundle{"image/svg+xml": svg, "text/plain": fmt.Sprintf("<SVG image, %d bytes>", len(svg))}}
}

// JSON returns an Output that shows v as an interactive JSON tree where the front end
// supports it, and as indented JSON text otherwise. A value that cannot be encoded gives
// an Output whose text names the error.
func JSON(v any) Output {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return Text(fmt.Sprintf("display.JSON: cannot encode %T: %v", v, err))
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return Text(fmt.Sprintf("display.JSON: cannot decode %T: %v", v, err))
	}
	return Output{Bundle{"application/json": tree, "text/plain": string(b)}}
}

// Text returns an Output that shows s as plain text.
func Text(s string) Output {
	return Output{Bundle{"text/plain": s}}
}

// BundleOf returns the MIME bundle of v: its own when v is a Renderer with a usable
// bundle, otherwise text/plain from fmt's %v.
func BundleOf(v any) Bundle {
	if r, ok := v.(Renderer); ok && r != nil {
		if b := r.MIMEBundle(); b != nil {
			if _, ok := b["text/plain"]; !ok {
				b["text/plain"] = fmt.Sprint(v)
			}
			return b
		}
	}
	return Bundle{"text/plain": fmt.Sprint(v)}
}

// Show displays each value in turn: richly in a notebook, as text elsewhere.
func Show(values ...any) {
	for _, v := range values {
		publish(BundleOf(v), "", false)
	}
}

// Handle names one displayed output so that it can be replaced in place.
type Handle struct {
	id string
}

// NewDisplay displays v and returns a Handle whose Update replaces that output in place.
func NewDisplay(v any) *Handle {
	h := &Handle{id: fmt.Sprintf("gml-%d-%d", os.Getpid(), displayID.Add(1))}
	publish(BundleOf(v), h.id, false)
	return h
}

// ID returns the display id of h, as used in update_display_data messages.
func (h *Handle) ID() string { return h.id }

// Update replaces the output of h with v. Without a notebook it prints v again.
func (h *Handle) Update(v any) {
	publish(BundleOf(v), h.id, true)
}

// ClearOutput clears the output of the running cell; with wait, the clearing happens
// when the next output arrives, which avoids flicker. Without a notebook it does nothing.
func ClearOutput(wait bool) {
	if p := currentPublisher(); p != nil {
		p.ClearOutput(wait)
	}
}

// Input asks the user for one line of text, showing prompt, and returns it without the
// line ending. In a notebook the front end shows an input box; elsewhere the prompt goes
// to standard output and the line is read from standard input.
func Input(prompt string) (string, error) {
	if p, ok := currentPublisher().(InputPublisher); ok {
		return p.Input(prompt, false)
	}
	fmt.Print(prompt)
	line, err := stdinBuf.ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("display.Input: reading standard input: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func publish(b Bundle, id string, update bool) {
	if p := currentPublisher(); p != nil {
		p.Display(b, map[string]any{}, id, update)
		return
	}
	fmt.Println(textOf(b))
}

func textOf(b Bundle) string {
	if s, ok := b["text/plain"].(string); ok {
		return s
	}
	return fmt.Sprint(b["text/plain"])
}

// stripTags removes HTML tags and unescapes entities, for the text form of HTML output.
func stripTags(s string) string {
	var sb strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			sb.WriteRune(r)
		}
	}
	return html.UnescapeString(sb.String())
}
