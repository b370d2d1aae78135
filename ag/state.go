package ag

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/gml-dev/gml/tensor"
)

// SaveModel writes every parameter and buffer of model (NamedParameters, Buffers) to
// path in the safetensors layout (a little-endian header length, a JSON header naming
// each tensor's dtype, shape and byte range, then the raw data), so other tools
// (Python's safetensors, PyTorch) read it. It runs pending work first.
func SaveModel(path string, model any) error {
	named := append(NamedParameters(model), Buffers(model)...)
	if len(named) == 0 {
		return errors.New("ag: SaveModel: the model holds no parameters")
	}
	ts := make(map[string]*tensor.Tensor, len(named))
	for _, n := range named {
		if _, dup := ts[n.Name]; dup {
			return fmt.Errorf("ag: SaveModel: two tensors named %q", n.Name)
		}
		var v *tensor.Tensor
		if err := Catch(func() { v = n.Tensor.value("save_model") }); err != nil {
			return fmt.Errorf("ag: SaveModel: reading %s: %w", n.Name, err)
		}
		ts[n.Name] = v
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("ag: SaveModel: %w", err)
	}
	w := bufio.NewWriter(f)
	if err := writeSafetensors(w, ts); err != nil {
		f.Close()
		return fmt.Errorf("ag: SaveModel %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("ag: SaveModel %s: %w", path, err)
	}
	return f.Close()
}

// LoadModel reads a safetensors file into model's parameters and buffers by name. The
// names and shapes must match exactly: a tensor missing on either side or shaped
// differently is an error that lists both sides.
func LoadModel(path string, model any) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ag: LoadModel: %w", err)
	}
	defer f.Close()
	ts, err := readSafetensors(bufio.NewReader(f))
	if err != nil {
		return fmt.Errorf("ag: LoadModel %s: %w", path, err)
	}
	named := append(NamedParameters(model), Buffers(model)...)
	have := map[string]*Tensor{}
	for _, n := range named {
		have[n.Name] = n.Tensor
	}
	var problems []string
	for _, n := range named {
		t, ok := ts[n.Name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s (%v%v) is missing from the file", n.Name, n.Tensor.dtype, n.Tensor.shape))
		case t.DType() != n.Tensor.dtype || !t.Shape().Equal(n.Tensor.shape):
			problems = append(problems, fmt.Sprintf("%s is %v%v in the model, %v%v in the file", n.Name, n.Tensor.dtype, n.Tensor.shape, t.DType(), t.Shape()))
		}
	}
	for name, t := range ts {
		if have[name] == nil {
			problems = append(problems, fmt.Sprintf("%s (%v%v) in the file is not in the model", name, t.DType(), t.Shape()))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("ag: LoadModel %s: the file does not match the model:\n  %s\nmodel: %s\nfile:  %s",
			path, strings.Join(problems, "\n  "), listNamed(named), listFile(ts))
	}
	for _, n := range named {
		if err := n.Tensor.load(ts[n.Name]); err != nil {
			return fmt.Errorf("ag: LoadModel: %s: %w", n.Name, err)
		}
	}
	return nil
}

// load writes v into parameter t on its device, after any pending write.
func (t *Tensor) load(v *tensor.Tensor) error {
	tp := t.tape
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.open != nil && tp.open.pendingWrite(t.p.v) {
		if err := tp.flush(); err != nil {
			return err
		}
	}
	if err := tp.rt.Write(t.p.v, v); err != nil {
		return err
	}
	t.p.version++
	return nil
}

func listNamed(ns []Named) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprintf("%s %v%v", n.Name, n.Tensor.dtype, n.Tensor.shape)
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

func listFile(ts map[string]*tensor.Tensor) string {
	s := make([]string, 0, len(ts))
	for n, t := range ts {
		s = append(s, fmt.Sprintf("%s %v%v", n, t.DType(), t.Shape()))
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// safetensors dtype names.
var stDTypes = map[tensor.DType]string{tensor.F32: "F32", tensor.F16: "F16", tensor.BF16: "BF16", tensor.I32: "I32", tensor.I64: "I64", tensor.Bool: "BOOL"}

type stEntry struct {
	DType   string   `json:"dtype"`
	Shape   []int    `json:"shape"`
	Offsets [2]int64 `json:"data_offsets"`
}

// writeSafetensors writes tensors in name order.
func writeSafetensors(w io.Writer, ts map[string]*tensor.Tensor) error {
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	header := map[string]any{"__metadata__": map[string]string{"format": "pt", "producer": "gml/ag"}}
	var off int64
	for _, n := range names {
		t := ts[n]
		dt, ok := stDTypes[t.DType()]
		if !ok {
			return fmt.Errorf("%s: dtype %v has no safetensors name", n, t.DType())
		}
		size := int64(len(t.Bytes()))
		header[n] = stEntry{DType: dt, Shape: append([]int{}, t.Shape()...), Offsets: [2]int64{off, off + size}}
		off += size
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 { // the data starts 8-byte aligned
		h = append(h, ' ')
	}
	if err := binary.Write(w, binary.LittleEndian, uint64(len(h))); err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := w.Write(ts[n].Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// readSafetensors reads a whole safetensors stream.
func readSafetensors(r io.Reader) (map[string]*tensor.Tensor, error) {
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return nil, fmt.Errorf("not a safetensors file (no header length): %w", err)
	}
	if n == 0 || n > 100<<20 {
		return nil, fmt.Errorf("not a safetensors file (header length %d)", n)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, fmt.Errorf("truncated header: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(h, &raw); err != nil {
		return nil, fmt.Errorf("corrupt header: %w", err)
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	byName := map[string]tensor.DType{}
	for d, s := range stDTypes {
		byName[s] = d
	}
	out := map[string]*tensor.Tensor{}
	for name, m := range raw {
		if name == "__metadata__" {
			continue
		}
		var e stEntry
		if err := json.Unmarshal(m, &e); err != nil {
			return nil, fmt.Errorf("%s: corrupt entry: %w", name, err)
		}
		dt, ok := byName[e.DType]
		if !ok {
			return nil, fmt.Errorf("%s: unsupported dtype %q", name, e.DType)
		}
		b, end := e.Offsets[0], e.Offsets[1]
		if b < 0 || end < b || end > int64(len(body)) {
			return nil, fmt.Errorf("%s: data range %v outside the %d bytes of data", name, e.Offsets, len(body))
		}
		t, err := tensor.FromBytes(dt, tensor.Shape(e.Shape), body[b:end])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}
