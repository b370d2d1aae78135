package notebook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gml-dev/gml/kernel/exec"
)

// Failure is a code cell that failed while running.
type Failure struct {
	Index int // position of the cell in the notebook, from 0
	Count int // its execution count
	Err   *exec.Error
}

// RunOptions configures Run.
type RunOptions struct {
	// Timeout bounds each cell; 0 means no limit.
	Timeout time.Duration
	// OnStart, when set, is called before each code cell runs.
	OnStart func(c *Cell)
	// OnCell, when set, is called after each code cell with the cell and its failure
	// (nil on success).
	OnCell func(c *Cell, f *Failure)
	// Live, when set, receives each cell's outputs as text while the cell runs: printed
	// text as it comes, the text form of displays and results, and errors. A display
	// updated in place (a progress bar) rewrites its line with a carriage return, at
	// most once a second, and shows its last state when the next output comes. While
	// a cell runs the interpreter captures file descriptors 1 and 2, so Live must not
	// write to them: give it a duplicate of standard output taken beforehand.
	Live io.Writer
}

// Run executes the code cells of nb in order with interp, replacing their outputs and
// execution counts. Every code cell's outputs are cleared first, so a notebook written
// part way (from OnCell) holds only what this run produced. It runs every cell, also
// after a failure, until ctx is done, and returns the failures.
func Run(ctx context.Context, nb *Notebook, interp *exec.Interp, opt RunOptions) []Failure {
	for _, c := range nb.Cells {
		if c.Type == "code" {
			c.Outputs, c.ExecutionCount = nil, nil
		}
	}
	var failures []Failure
	count := 0
	for k, c := range nb.Cells {
		if c.Type != "code" {
			continue
		}
		if ctx.Err() != nil {
			break // interrupted: keep what finished
		}
		count++
		n := count
		c.ExecutionCount = &n
		if opt.OnStart != nil {
			opt.OnStart(c)
		}
		col := &collector{}
		if opt.Live != nil {
			col.live = &liveText{w: opt.Live, open: -1}
		}
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if opt.Timeout > 0 {
			cctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		}
		r := interp.Execute(cctx, c.Source, col)
		cancel()
		var f *Failure
		if r.Err != nil {
			col.add(&Output{Type: "error", EName: r.Err.Name, EValue: r.Err.Value, Traceback: r.Err.Traceback})
			failures = append(failures, Failure{Index: k, Count: n, Err: r.Err})
			f = &failures[len(failures)-1]
		} else if r.Data != nil {
			col.add(&Output{Type: "execute_result", Data: r.Data, Metadata: r.Metadata, ExecutionCount: &n})
		}
		col.finish()
		c.Outputs = col.outputs
		if opt.OnCell != nil {
			opt.OnCell(c, f)
		}
	}
	return failures
}

// collector is the exec.Publisher of `gml run`: it builds a cell's outputs and, with
// live set, shows them as text as they come.
type collector struct {
	mu        sync.Mutex
	outputs   []*Output
	clearWait bool
	live      *liveText
}

func (c *collector) add(o *Output) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addLocked(o)
}

func (c *collector) addLocked(o *Output) {
	if c.clearWait {
		c.outputs, c.clearWait = nil, false
	}
	c.live.output(o, len(c.outputs))
	if o.Type == "stream" && len(c.outputs) > 0 {
		if last := c.outputs[len(c.outputs)-1]; last.Type == "stream" && last.Name == o.Name {
			last.Text += o.Text
			return
		}
	}
	c.outputs = append(c.outputs, o)
}

// Stream implements exec.Publisher.
func (c *collector) Stream(name, text string) {
	c.add(&Output{Type: "stream", Name: name, Text: text})
}

// Display implements exec.Publisher: an update replaces every output with that
// display id, and is dropped when there is none, as in Jupyter.
func (c *collector) Display(data, metadata map[string]any, id string, update bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if update {
		for i, o := range c.outputs {
			if o.DisplayID == id && id != "" {
				o.Data, o.Metadata = data, metadata
				c.live.update(i, o)
			}
		}
		return
	}
	c.addLocked(&Output{Type: "display_data", Data: data, Metadata: metadata, DisplayID: id})
}

// ClearOutput implements exec.Publisher.
func (c *collector) ClearOutput(wait bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live.close() // text already written stays; later outputs start a new line
	if wait {
		c.clearWait = true
		return
	}
	c.outputs = nil
}

// finish shows the last state of a display left pending and ends the open line.
func (c *collector) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live.close()
}

// liveText writes a cell's outputs as text while it runs (RunOptions.Live). A nil
// liveText does nothing.
type liveText struct {
	w       io.Writer
	open    int    // index of the output whose text ends the last line written, or -1
	width   int    // length of that text, to blank it when rewritten shorter
	pending string // the open display's latest text, not yet written
	last    time.Time
}

// liveInterval is the least time between two rewrites of a display's line.
const liveInterval = time.Second

// output shows a new output, which gets index i among the cell's outputs.
func (l *liveText) output(o *Output, i int) {
	if l == nil {
		return
	}
	l.close()
	switch o.Type {
	case "stream":
		io.WriteString(l.w, o.Text)
	case "display_data":
		// Left open: a progress bar rewrites this line as it moves.
		text := plainText(o.Data)
		io.WriteString(l.w, text)
		l.open, l.width, l.last = i, len(text), time.Now()
	default:
		io.WriteString(l.w, outputText(o))
	}
}

// update shows output i, a display updated in place: its line is rewritten if it is the
// last one written (throttled), else it is written again.
func (l *liveText) update(i int, o *Output) {
	if l == nil {
		return
	}
	text := plainText(o.Data)
	if l.open != i {
		l.close()
		io.WriteString(l.w, text)
		l.open, l.width, l.last = i, len(text), time.Now()
		return
	}
	if time.Since(l.last) < liveInterval {
		l.pending = text
		return
	}
	l.rewrite(text)
}

// rewrite replaces the open line with text.
func (l *liveText) rewrite(text string) {
	io.WriteString(l.w, "\r"+text+strings.Repeat(" ", max(0, l.width-len(text))))
	l.width, l.pending, l.last = len(text), "", time.Now()
}

// close writes the open display's pending state and ends its line.
func (l *liveText) close() {
	if l == nil || l.open == -1 {
		return
	}
	if l.pending != "" {
		l.rewrite(l.pending)
	}
	io.WriteString(l.w, "\n")
	l.open = -1
}

// errNoStdin is what a cell reading input gets from `gml run`, which has no user.
var errNoStdin = errors.New("gml run: this notebook asks for input, but a headless run has no user to answer")

// Input implements exec.Publisher.
func (c *collector) Input(string, bool) (string, error) { return "", errNoStdin }

// outputText is the text form of an output, newline-terminated unless it is stream text.
func outputText(o *Output) string {
	switch o.Type {
	case "stream":
		return o.Text
	case "display_data":
		return plainText(o.Data) + "\n"
	case "execute_result":
		return fmt.Sprintf("Out[%d]: %s\n", *o.ExecutionCount, plainText(o.Data))
	case "error":
		return strings.Join(o.Traceback, "\n") + "\n"
	}
	return ""
}

// plainText returns the text/plain of a bundle, or names its MIME types when it has none.
func plainText(d map[string]any) string {
	if s, ok := d["text/plain"].(string); ok {
		return s
	}
	var kinds []string
	for k := range d {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return "<" + strings.Join(kinds, ", ") + ">"
}
