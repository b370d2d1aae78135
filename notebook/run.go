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
	// OnCell, when set, is called after each code cell with the cell and its failure
	// (nil on success).
	OnCell func(c *Cell, f *Failure)
}

// Run executes the code cells of nb in order with interp, replacing their outputs and
// execution counts. It runs every cell, also after a failure, and returns the failures.
func Run(ctx context.Context, nb *Notebook, interp *exec.Interp, opt RunOptions) []Failure {
	var failures []Failure
	count := 0
	for k, c := range nb.Cells {
		if c.Type != "code" {
			continue
		}
		count++
		n := count
		c.ExecutionCount = &n
		col := &collector{}
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
		c.Outputs = col.outputs
		if opt.OnCell != nil {
			opt.OnCell(c, f)
		}
	}
	return failures
}

// collector is the exec.Publisher of `gml run`: it builds a cell's outputs.
type collector struct {
	mu        sync.Mutex
	outputs   []*Output
	clearWait bool
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
		for _, o := range c.outputs {
			if o.DisplayID == id && id != "" {
				o.Data, o.Metadata = data, metadata
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
	if wait {
		c.clearWait = true
		return
	}
	c.outputs = nil
}

// errNoStdin is what a cell reading input gets from `gml run`, which has no user.
var errNoStdin = errors.New("gml run: this notebook asks for input, but a headless run has no user to answer")

// Input implements exec.Publisher.
func (c *collector) Input(string, bool) (string, error) { return "", errNoStdin }

// WriteText writes the outputs of the notebook's code cells as text: stream text as
// is, the text/plain form of rich outputs, "Out[N]: " before results and the traceback
// of errors.
func WriteText(w io.Writer, nb *Notebook) error {
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			var s string
			switch o.Type {
			case "stream":
				s = o.Text
			case "display_data":
				s = plainText(o.Data) + "\n"
			case "execute_result":
				s = fmt.Sprintf("Out[%d]: %s\n", *o.ExecutionCount, plainText(o.Data))
			case "error":
				s = strings.Join(o.Traceback, "\n") + "\n"
			}
			if _, err := io.WriteString(w, s); err != nil {
				return err
			}
		}
	}
	return nil
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
