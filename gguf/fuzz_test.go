package gguf

import (
	"bytes"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the parser and, when a file parses, decodes every
// tensor and renders the summary: none of it may panic, hang or allocate beyond what
// the input's size allows. `make test` runs it for a short budget with -fuzz.
func FuzzParse(f *testing.F) {
	valid, _, _ := writeTestFile(f)
	f.Add(valid)
	w := NewWriter()
	w.Set("general.architecture", "seed")
	for typ := range types {
		bs := typ.BlockSize()
		w.AddRaw("t."+typ.String(), []int{bs}, typ, bytes.Repeat([]byte{0x5a}, typ.BlockBytes()))
	}
	var buf bytes.Buffer
	w.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(oneTensor([]uint64{1 << 32, 1 << 32}, F32, 0, 0)))
	f.Add([]byte(header(0, 1).str("k").u32(uint32(MetaArray)).u32(uint32(MetaArray)).u64(1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		for _, ti := range file.Tensors() {
			if out, err := file.TensorData(ti.Name); err == nil && int64(len(out)) != ti.Elements {
				t.Fatalf("tensor %q: %d values for %d elements", ti.Name, len(out), ti.Elements)
			}
			file.RawData(ti.Name)
		}
		_ = file.String()
		_ = file.TensorTable().String()
	})
}
