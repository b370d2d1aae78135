package gguf

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gml-dev/gml/display"
	"github.com/gml-dev/gml/internal/sysmem"
)

// Summary is a file's overview as tables: the file (version, architecture, counts,
// sizes), its tensor types with their share of the bytes, and its metadata. It renders
// as HTML in a notebook and as aligned text elsewhere.
type Summary struct {
	Overview, Types, Metadata *display.Table
}

// MIMEBundle renders the three tables.
func (s *Summary) MIMEBundle() map[string]any {
	tables := []*display.Table{s.Overview, s.Types, s.Metadata}
	var h, t []string
	for _, tb := range tables {
		h = append(h, tb.HTML())
		t = append(t, tb.String())
	}
	return display.Bundle{"text/html": strings.Join(h, "\n"), "text/plain": strings.Join(t, "\n\n")}
}

// String is the text form of the summary.
func (s *Summary) String() string { return s.MIMEBundle()["text/plain"].(string) }

// MIMEBundle renders the file as its Summary, so a File shows as tables in a cell.
func (f *File) MIMEBundle() map[string]any { return f.Summary().MIMEBundle() }

// String is the text form of the file's summary.
func (f *File) String() string { return f.Summary().String() }

// metaValueWidth is how much of a metadata value the summary shows.
const metaValueWidth = 80

// Summary builds the file's overview tables.
func (f *File) Summary() *Summary {
	type agg struct {
		tensors        int
		elements, size int64
	}
	byType := map[Type]*agg{}
	var params, dataBytes int64
	unknown := false
	for _, ti := range f.tensors {
		a := byType[ti.Type]
		if a == nil {
			a = &agg{}
			byType[ti.Type] = a
		}
		a.tensors++
		a.elements += ti.Elements
		params += ti.Elements
		if ti.Size < 0 {
			unknown = true
			continue
		}
		a.size += ti.Size
		dataBytes += ti.Size
	}

	ov := display.NewTable("property", "value").Caption("GGUF file")
	if f.path != "" {
		ov.Row("file", f.path)
	}
	ov.Row("version", f.version)
	if arch := f.Architecture(); arch != "" {
		ov.Row("architecture", arch)
	}
	if name, ok := f.Meta("general.name").Text(); ok {
		ov.Row("name", name)
	}
	ov.Row("tensors", len(f.tensors))
	ov.Row("parameters", fmt.Sprintf("%s (%d)", humanCount(params), params))
	size := sysmem.FormatBytes(uint64(dataBytes))
	if unknown {
		size += " (plus tensors of unknown types)"
	}
	ov.Row("tensor data", size)
	ov.Row("metadata keys", len(f.meta))
	ov.Row("alignment", f.alignment)

	ts := make([]Type, 0, len(byType))
	for t := range byType {
		ts = append(ts, t)
	}
	// Largest share first: what the reader most wants to know is what the bytes are.
	sort.Slice(ts, func(i, j int) bool {
		a, b := byType[ts[i]], byType[ts[j]]
		if a.size != b.size {
			return a.size > b.size
		}
		return ts[i] < ts[j]
	})
	types := display.NewTable("type", "tensors", "parameters", "bytes", "share", "bits/weight").Caption("tensor types")
	for _, t := range ts {
		a := byType[t]
		share, bpw, bytes := "?", "?", "?"
		if t.Known() {
			bytes = sysmem.FormatBytes(uint64(a.size))
			bpw = fmt.Sprintf("%.2f", t.BitsPerWeight())
			if dataBytes > 0 {
				share = fmt.Sprintf("%.1f%%", 100*float64(a.size)/float64(dataBytes))
			}
		}
		types.Row(t, a.tensors, humanCount(a.elements), bytes, share, bpw)
	}

	meta := display.NewTable("key", "type", "value").Caption("metadata")
	for _, kv := range f.meta {
		typ := kv.Value.typ.String()
		if kv.Value.typ == MetaArray {
			typ = fmt.Sprintf("[%d]%s", kv.Value.Len(), kv.Value.elem)
		}
		meta.Row(kv.Key, typ, clip(kv.Value.format(8), metaValueWidth))
	}
	return &Summary{Overview: ov, Types: types, Metadata: meta}
}

// TensorTable lists every tensor: name, shape (outermost first), type, elements, bytes.
func (f *File) TensorTable() *display.Table {
	t := display.NewTable("name", "shape", "type", "elements", "bytes").Caption(fmt.Sprintf("%d tensors", len(f.tensors)))
	for _, ti := range f.tensors {
		size := "?"
		if ti.Size >= 0 {
			size = sysmem.FormatBytes(uint64(ti.Size))
		}
		t.Row(ti.Name, fmt.Sprint(ti.Shape), ti.Type, ti.Elements, size)
	}
	return t
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f K", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
