package notebook

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Notebook is an nbformat 4 notebook.
type Notebook struct {
	Cells         []*Cell        `json:"cells"`
	Metadata      map[string]any `json:"metadata"`
	NBFormat      int            `json:"nbformat"`
	NBFormatMinor int            `json:"nbformat_minor"`
}

// Cell is one notebook cell. Outputs and ExecutionCount belong to code cells only.
type Cell struct {
	ID             string
	Type           string // "code", "markdown" or "raw"
	Metadata       map[string]any
	Source         string
	Outputs        []*Output
	ExecutionCount *int
	Attachments    map[string]any // markdown and raw cells
}

// Output is one output of a code cell.
type Output struct {
	Type           string // "stream", "display_data", "execute_result" or "error"
	Name           string // stream: "stdout" or "stderr"
	Text           string // stream
	Data           map[string]any
	Metadata       map[string]any
	ExecutionCount *int // execute_result
	EName, EValue  string
	Traceback      []string
	// DisplayID is the transient display id of a display_data output, used while
	// running to apply updates; it is not written.
	DisplayID string
}

// New returns an empty notebook with gml's kernelspec and language metadata.
func New() *Notebook {
	return &Notebook{
		Metadata: map[string]any{
			"kernelspec":    map[string]any{"name": "gml", "display_name": "Go (gml)", "language": "go"},
			"language_info": map[string]any{"name": "go", "file_extension": ".go", "mimetype": "text/x-go"},
		},
		NBFormat: 4, NBFormatMinor: 5,
	}
}

// Read parses the notebook file at path.
func Read(path string) (*Notebook, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	nb, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return nb, nil
}

// Parse decodes a notebook from JSON.
func Parse(b []byte) (*Notebook, error) {
	var nb Notebook
	if err := json.Unmarshal(b, &nb); err != nil {
		return nil, fmt.Errorf("not a notebook: %w", err)
	}
	if nb.NBFormat != 4 {
		return nil, fmt.Errorf("nbformat %d is not supported (only 4)", nb.NBFormat)
	}
	if nb.Metadata == nil {
		nb.Metadata = map[string]any{}
	}
	return &nb, nil
}

// Write encodes nb as nbformat 4.5 JSON (one-space indentation, as Jupyter writes) and
// saves it at path.
func (nb *Notebook) Write(path string) error {
	b, err := nb.Marshal()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Marshal encodes nb as nbformat 4.5 JSON, giving cells without an id one derived from
// their position.
func (nb *Notebook) Marshal() ([]byte, error) {
	nb.NBFormat, nb.NBFormatMinor = 4, max(nb.NBFormatMinor, 5)
	used := map[string]bool{}
	for _, c := range nb.Cells {
		used[c.ID] = true
	}
	for k, c := range nb.Cells {
		if c.ID == "" {
			id := fmt.Sprintf("cell-%d", k+1)
			for used[id] {
				id += "x"
			}
			c.ID, used[id] = id, true
		}
	}
	b, err := json.MarshalIndent(nb, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// lines splits text into nbformat's list of lines, each but the last ending in "\n".
func lines(s string) []string {
	if s == "" {
		return []string{}
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// multiline decodes nbformat's multi-line string: a string or a list of strings.
func multiline(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var l []string
	if err := json.Unmarshal(raw, &l); err != nil {
		return "", fmt.Errorf("expected a string or a list of strings: %w", err)
	}
	return strings.Join(l, ""), nil
}

type cellJSON struct {
	ID             string          `json:"id,omitempty"`
	Type           string          `json:"cell_type"`
	Metadata       map[string]any  `json:"metadata"`
	Source         json.RawMessage `json:"source"`
	Outputs        []*Output       `json:"outputs,omitempty"`
	ExecutionCount *int            `json:"execution_count,omitempty"`
	Attachments    map[string]any  `json:"attachments,omitempty"`
}

// MarshalJSON writes the cell with the keys nbformat requires for its type.
func (c *Cell) MarshalJSON() ([]byte, error) {
	src, err := json.Marshal(lines(c.Source))
	if err != nil {
		return nil, err
	}
	md := c.Metadata
	if md == nil {
		md = map[string]any{}
	}
	if c.Type != "code" {
		return json.Marshal(cellJSON{ID: c.ID, Type: c.Type, Metadata: md, Source: src, Attachments: c.Attachments})
	}
	outs := c.Outputs
	if outs == nil {
		outs = []*Output{}
	}
	return json.Marshal(struct {
		ID             string          `json:"id,omitempty"`
		Type           string          `json:"cell_type"`
		Metadata       map[string]any  `json:"metadata"`
		Source         json.RawMessage `json:"source"`
		Outputs        []*Output       `json:"outputs"`
		ExecutionCount *int            `json:"execution_count"`
	}{c.ID, c.Type, md, src, outs, c.ExecutionCount})
}

// UnmarshalJSON reads a cell, accepting string or list-of-lines sources.
func (c *Cell) UnmarshalJSON(b []byte) error {
	var j cellJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	src, err := multiline(j.Source)
	if err != nil {
		return fmt.Errorf("cell source: %w", err)
	}
	switch j.Type {
	case "code", "markdown", "raw":
	default:
		return fmt.Errorf("unknown cell_type %q", j.Type)
	}
	*c = Cell{ID: j.ID, Type: j.Type, Metadata: j.Metadata, Source: src, Outputs: j.Outputs, ExecutionCount: j.ExecutionCount, Attachments: j.Attachments}
	return nil
}

// MarshalJSON writes the output with the keys nbformat requires for its type.
func (o *Output) MarshalJSON() ([]byte, error) {
	md := o.Metadata
	if md == nil {
		md = map[string]any{}
	}
	switch o.Type {
	case "stream":
		return json.Marshal(map[string]any{"output_type": o.Type, "name": o.Name, "text": lines(o.Text)})
	case "display_data":
		return json.Marshal(map[string]any{"output_type": o.Type, "data": dataJSON(o.Data), "metadata": md})
	case "execute_result":
		return json.Marshal(map[string]any{"output_type": o.Type, "data": dataJSON(o.Data), "metadata": md, "execution_count": o.ExecutionCount})
	case "error":
		tb := o.Traceback
		if tb == nil {
			tb = []string{}
		}
		return json.Marshal(map[string]any{"output_type": o.Type, "ename": o.EName, "evalue": o.EValue, "traceback": tb})
	}
	return nil, fmt.Errorf("unknown output_type %q", o.Type)
}

// dataJSON writes text MIME types as lists of lines, leaving JSON data as it is.
func dataJSON(d map[string]any) map[string]any {
	out := make(map[string]any, len(d))
	for k, v := range d {
		if s, ok := v.(string); ok && !strings.HasSuffix(k, "json") {
			out[k] = lines(s)
		} else {
			out[k] = v
		}
	}
	return out
}

// UnmarshalJSON reads an output, joining multi-line strings.
func (o *Output) UnmarshalJSON(b []byte) error {
	var j struct {
		Type           string                     `json:"output_type"`
		Name           string                     `json:"name"`
		Text           json.RawMessage            `json:"text"`
		Data           map[string]json.RawMessage `json:"data"`
		Metadata       map[string]any             `json:"metadata"`
		ExecutionCount *int                       `json:"execution_count"`
		EName          string                     `json:"ename"`
		EValue         string                     `json:"evalue"`
		Traceback      []string                   `json:"traceback"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	text, err := multiline(j.Text)
	if err != nil {
		return fmt.Errorf("stream text: %w", err)
	}
	var data map[string]any
	if j.Data != nil {
		data = map[string]any{}
		for k, raw := range j.Data {
			if strings.HasSuffix(k, "json") {
				var v any
				if err := json.Unmarshal(raw, &v); err != nil {
					return fmt.Errorf("output data %s: %w", k, err)
				}
				data[k] = v
				continue
			}
			s, err := multiline(raw)
			if err != nil {
				return fmt.Errorf("output data %s: %w", k, err)
			}
			data[k] = s
		}
	}
	*o = Output{Type: j.Type, Name: j.Name, Text: text, Data: data, Metadata: j.Metadata, ExecutionCount: j.ExecutionCount, EName: j.EName, EValue: j.EValue, Traceback: j.Traceback}
	return nil
}
