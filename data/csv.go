package data

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// Table is a CSV file held by column: every column keeps its text, and columns whose
// every cell parses as a number also have their values.
type Table struct {
	Header []string
	text   [][]string  // per column
	nums   [][]float64 // per column; nil when the column is not numeric
}

// CSVOption configures ReadCSV.
type CSVOption func(*csvConfig)

type csvConfig struct {
	comma  rune
	header bool
}

// Comma sets the field delimiter (default ',').
func Comma(r rune) CSVOption { return func(c *csvConfig) { c.comma = r } }

// NoHeader says the first line is data; columns are then named "c0", "c1", ...
func NoHeader() CSVOption { return func(c *csvConfig) { c.header = false } }

// ReadCSV reads a delimited text file with a header line (unless NoHeader).
func ReadCSV(path string, opts ...CSVOption) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	t, err := DecodeCSV(f, opts...)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	return t, nil
}

// DecodeCSV reads a delimited table from r.
func DecodeCSV(r io.Reader, opts ...CSVOption) (*Table, error) {
	cfg := csvConfig{comma: ',', header: true}
	for _, o := range opts {
		o(&cfg)
	}
	cr := csv.NewReader(interruptible(r))
	cr.Comma = cfg.comma
	cr.TrimLeadingSpace = true
	records, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("empty CSV")
	}
	t := &Table{}
	if cfg.header {
		t.Header, records = records[0], records[1:]
	} else {
		for i := range records[0] {
			t.Header = append(t.Header, "c"+strconv.Itoa(i))
		}
	}
	cols := len(t.Header)
	t.text = make([][]string, cols)
	t.nums = make([][]float64, cols)
	for j := 0; j < cols; j++ {
		t.text[j] = make([]string, len(records))
		t.nums[j] = make([]float64, len(records))
	}
	for i, rec := range records {
		for j, cell := range rec {
			cell = strings.TrimSpace(cell)
			t.text[j][i] = cell
			if t.nums[j] == nil {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				t.nums[j] = nil
				continue
			}
			t.nums[j][i] = v
		}
	}
	return t, nil
}

// Len is the number of data rows.
func (t *Table) Len() int {
	if len(t.text) == 0 {
		return 0
	}
	return len(t.text[0])
}

// column finds a column by name.
func (t *Table) column(name string) (int, error) {
	for j, h := range t.Header {
		if h == name {
			return j, nil
		}
	}
	return 0, fmt.Errorf("data: no column %q (have %s)", name, strings.Join(t.Header, ", "))
}

// Text returns a column's cells as text.
func (t *Table) Text(name string) ([]string, error) {
	j, err := t.column(name)
	if err != nil {
		return nil, err
	}
	return t.text[j], nil
}

// Tensor returns the named numeric columns (all numeric columns when none are named) as
// an F32 tensor [rows, columns].
func (t *Table) Tensor(names ...string) (*tensor.Tensor, error) {
	var cols []int
	if len(names) == 0 {
		for j := range t.Header {
			if t.nums[j] != nil {
				cols = append(cols, j)
			}
		}
	}
	for _, n := range names {
		j, err := t.column(n)
		if err != nil {
			return nil, err
		}
		if t.nums[j] == nil {
			return nil, fmt.Errorf("data: column %q is not numeric; encode it with Labels", n)
		}
		cols = append(cols, j)
	}
	out := tensor.New(tensor.F32, t.Len(), len(cols))
	o := out.Float32s()
	for i := 0; i < t.Len(); i++ {
		for k, j := range cols {
			o[i*len(cols)+k] = float32(t.nums[j][i])
		}
	}
	return out, nil
}

// Labels encodes a categorical column as I64 class ids [rows], numbering the distinct
// values in sorted order, and returns the class names in id order.
func (t *Table) Labels(name string) (*tensor.Tensor, []string, error) {
	j, err := t.column(name)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var classes []string
	for _, v := range t.text[j] {
		if !seen[v] {
			seen[v] = true
			classes = append(classes, v)
		}
	}
	sort.Strings(classes)
	id := make(map[string]int, len(classes))
	for k, c := range classes {
		id[c] = k
	}
	out := tensor.New(tensor.I64, t.Len())
	o := out.Int64s()
	for i, v := range t.text[j] {
		o[i] = int64(id[v])
	}
	return out, classes, nil
}
