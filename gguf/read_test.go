package gguf

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// raw assembles GGUF bytes field by field, so tests can write what the Writer refuses.
type raw []byte

func (r raw) u32(v uint32) raw { return binary.LittleEndian.AppendUint32(r, v) }
func (r raw) u64(v uint64) raw { return binary.LittleEndian.AppendUint64(r, v) }
func (r raw) str(s string) raw { return append(r.u64(uint64(len(s))), s...) }
func (r raw) pad(a int) raw {
	for len(r)%a != 0 {
		r = append(r, 0)
	}
	return r
}

// header starts a version-3 file with the given counts.
func header(tensors, kvs uint64) raw {
	return raw(Magic).u32(3).u64(tensors).u64(kvs)
}

// oneTensor is a file with a single tensor info and its data (zeros).
func oneTensor(dims []uint64, typ Type, offset uint64, dataBytes int) raw {
	r := header(1, 0).str("w").u32(uint32(len(dims)))
	for _, d := range dims {
		r = r.u64(d)
	}
	r = r.u32(uint32(typ)).u64(offset).pad(DefaultAlignment)
	return append(r, make([]byte, dataBytes)...)
}

func TestCorruptFiles(t *testing.T) {
	cases := []struct {
		name string
		data raw
		want string // a fragment of the error
	}{
		{"empty", raw{}, "magic"},
		{"bad magic", raw("GGUL").u32(3), "magic"},
		{"version 1", raw(Magic).u32(1), "version 1"},
		{"version 4", raw(Magic).u32(4).u64(0).u64(0), "unsupported version 4"},
		{"big-endian", raw(Magic).u32(3 << 24), "big-endian"},
		{"no counts", raw(Magic).u32(3), "truncated"},
		{"huge kv count", header(0, 1<<62), "metadata count"},
		{"huge tensor count", header(1<<62, 0), "tensor count"},
		{"key past end", header(0, 1).u64(1 << 40).u64(0).u64(0), "truncated"},
		{"unknown value type", header(0, 1).str("k").u32(13).u32(0), "unknown metadata value type 13"},
		{"bool 2", append(header(0, 1).str("k").u32(uint32(MetaBool)), 2), "neither 0 nor 1"},
		{"string past end", header(0, 1).str("k").u32(uint32(MetaString)).u64(math.MaxUint64), "truncated"},
		{"array count too big", header(0, 1).str("k").u32(uint32(MetaArray)).u32(uint32(MetaUint64)).u64(1 << 61), "array length"},
		{"array of unknown", header(0, 1).str("k").u32(uint32(MetaArray)).u32(99).u64(0), "unknown array element type"},
		{"duplicate key", header(0, 2).str("k").u32(uint32(MetaUint32)).u32(1).str("k").u32(uint32(MetaUint32)).u32(2), "appears twice"},
		{"alignment not a power of two", header(0, 1).str("general.alignment").u32(uint32(MetaUint32)).u32(24), "power-of-two"},
		{"alignment zero", header(0, 1).str("general.alignment").u32(uint32(MetaUint32)).u32(0), "power-of-two"},
		{"alignment as string", header(0, 1).str("general.alignment").u32(uint32(MetaString)).str("32"), "power-of-two"},
		{"rank 17", header(1, 0).str("w").u32(17).u64(0).u64(0), "rank 17"},
		{"dims overflow", oneTensor([]uint64{1 << 32, 1 << 32}, F32, 0, 0), "overflow"},
		{"dim beyond int64", oneTensor([]uint64{1 << 63}, I8, 0, 0), "overflow"},
		{"bytes overflow", oneTensor([]uint64{1 << 62, 2}, F32, 0, 0), "overflow"},
		{"partial block", oneTensor([]uint64{33}, Q8_0, 0, 64), "not whole blocks"},
		{"quantised scalar", oneTensor(nil, Q4_0, 0, 32), "not whole blocks"},
		{"offset out of range", oneTensor([]uint64{8}, F32, 1<<40, 32), "outside"},
		{"offset wraps", oneTensor([]uint64{8}, F32, math.MaxUint64-31, 32), "outside"},
		{"data truncated", oneTensor([]uint64{64}, F32, 0, 100), "outside"},
		{"offset unaligned", oneTensor([]uint64{8}, F32, 4, 64), "alignment"},
		{"data section missing", header(1, 0).str("w").u32(1).u64(8).u32(0).u64(0), "past the end"},
		{"duplicate tensor", header(2, 0).str("w").u32(1).u64(8).u32(0).u64(0).str("w").u32(1).u64(8).u32(0).u64(32).pad(32), "appears twice"},
	}
	// Arrays nested past the limit.
	deep := header(0, 1).str("k").u32(uint32(MetaArray))
	for range maxNesting + 1 {
		deep = deep.u32(uint32(MetaArray)).u64(1)
	}
	cases = append(cases, struct {
		name string
		data raw
		want string
	}{"nesting", deep.u32(uint32(MetaUint8)).u64(0), "nested"})
	for _, c := range cases {
		f, err := Parse(c.data)
		if err == nil {
			t.Errorf("%s: no error (file %+v)", c.name, f.Tensors())
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q lacks %q", c.name, err, c.want)
		}
	}
}

// TestEveryTruncation cuts a valid file at every length: each prefix is an error (a
// prefix long enough to hold everything but the last padding excepted), never a panic.
func TestEveryTruncation(t *testing.T) {
	data, _, _ := writeTestFile(t)
	f, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	tis := f.Tensors()
	last := tis[len(tis)-1]
	for _, ti := range tis {
		if ti.Offset > last.Offset {
			last = ti
		}
	}
	end := f.dataOffset + int(last.Offset) + int(last.Size)
	for n := range len(data) {
		_, err := Parse(data[:n])
		if (err == nil) != (n >= end) {
			t.Fatalf("prefix of %d of %d bytes (data ends at %d): error %v", n, len(data), end, err)
		}
	}
}

func TestUnknownTypeStillOpens(t *testing.T) {
	f, err := Parse(oneTensor([]uint64{10}, Type(77), 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := f.TensorInfo("w")
	if ti.Size != -1 || ti.Type.String() != "type(77)" {
		t.Errorf("unknown type info %+v", ti)
	}
	if _, err := f.TensorData("w"); err == nil || !strings.Contains(err.Error(), "unsupported type type(77)") {
		t.Errorf("TensorData of unknown type: %v", err)
	}
	if _, err := f.RawData("w"); err == nil {
		t.Error("RawData of unknown type: no error")
	}
	if !strings.Contains(f.String(), "type(77)") {
		t.Error("summary does not list the unknown type")
	}
}

func TestParseTypeNames(t *testing.T) {
	for typ, ti := range types {
		got, err := ParseType(strings.ToLower(ti.name))
		if err != nil || got != typ {
			t.Errorf("ParseType(%q) = %v, %v", ti.name, got, err)
		}
		if qf, ok := typ.Format(); ok && (qf.BlockSize() != typ.BlockSize() || qf.String() != typ.String()) {
			t.Errorf("%s: block format %s disagrees", typ, qf)
		}
	}
	if _, err := ParseType("Q9_9"); err == nil {
		t.Error("ParseType(Q9_9): no error")
	}
}
