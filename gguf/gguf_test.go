package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gml-dev/gml/tensor"
)

// allMeta is one value of every metadata type, arrays of every element type included.
func allMeta(t testing.TB) map[string]any {
	inner1, _ := ValueOf([]int32{1, -2})
	inner2, _ := ValueOf([]string{"x"})
	return map[string]any{
		"general.architecture": "toy",
		"general.name":         "Tiny test model ünïcode",
		"general.alignment":    uint32(64),
		"t.u8":                 uint8(200),
		"t.i8":                 int8(-100),
		"t.u16":                uint16(60000),
		"t.i16":                int16(-30000),
		"t.u32":                uint32(4000000000),
		"t.i32":                int32(-2000000000),
		"t.f32":                float32(1.5e-3),
		"t.bool":               true,
		"t.u64":                uint64(1 << 63),
		"t.i64":                int64(-1 << 62),
		"t.f64":                math.Pi,
		"t.empty":              "",
		"t.a.u8":               []uint8{1, 2, 255},
		"t.a.i8":               []int8{-1, 2},
		"t.a.u16":              []uint16{1, 65535},
		"t.a.i16":              []int16{-1, 2},
		"t.a.u32":              []uint32{7},
		"t.a.i32":              []int32{-7, 8},
		"t.a.f32":              []float32{0.5, -2},
		"t.a.bool":             []bool{true, false, true},
		"t.a.str":              []string{"a", "", "ccc"},
		"t.a.u64":              []uint64{1 << 60},
		"t.a.i64":              []int64{-5},
		"t.a.f64":              []float64{1e300},
		"t.a.empty":            []string{},
		"t.a.nested":           []Value{inner1, inner2},
	}
}

// testTensors are tensors of every type the writer encodes, with their data.
type testTensor struct {
	name  string
	shape []int
	typ   Type
	data  *tensor.Tensor
}

func testTensors(rng *rand.Rand) []testTensor {
	floats := func(shape ...int) *tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		t, _ := tensor.FromFloat32s(tensor.Shape(shape), x)
		return t
	}
	ints := func(lo, hi int, shape ...int) *tensor.Tensor {
		n := 1
		for _, d := range shape {
			n *= d
		}
		x := make([]int, n)
		for i := range x {
			x[i] = lo + rng.IntN(hi-lo+1)
		}
		t, _ := tensor.FromInts(tensor.Shape(shape), x)
		return t
	}
	return []testTensor{
		{"emb.weight", []int{5, 64}, F32, floats(5, 64)},
		{"scalar", nil, F32, floats()},
		{"blk.0.f16", []int{3, 7}, F16, floats(3, 7)},
		{"blk.0.bf16", []int{2, 2, 3}, BF16, floats(2, 2, 3)},
		{"f64", []int{4}, F64, floats(4)},
		{"i8", []int{6}, I8, ints(-128, 127, 6)},
		{"i16", []int{2, 3}, I16, ints(-32768, 32767, 2, 3)},
		{"i32", []int{5}, I32, ints(-1000000, 1000000, 5)},
		{"i64", []int{2}, I64, ints(-1<<40, 1<<40, 2)},
		{"blk.0.q4_0", []int{3, 64}, Q4_0, floats(3, 64)},
		{"blk.0.q8_0", []int{2, 2, 32}, Q8_0, floats(2, 2, 32)},
		{"blk.0.q4_k", []int{2, 512}, Q4_K, floats(2, 512)},
		{"empty", []int{0, 32}, Q8_0, floats(0, 32)},
	}
}

// writeTestFile writes every metadata value and test tensor and returns the bytes.
func writeTestFile(t testing.TB) ([]byte, map[string]any, []testTensor) {
	t.Helper()
	w := NewWriter()
	meta := allMeta(t)
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	for _, k := range keys {
		if err := w.Set(k, meta[k]); err != nil {
			t.Fatal(err)
		}
	}
	tts := testTensors(rand.New(rand.NewPCG(1, 1)))
	for _, tt := range tts {
		if err := w.AddTensor(tt.name, tt.data, tt.typ); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	n, err := w.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo: %d, %v (buffer has %d)", n, err, buf.Len())
	}
	return buf.Bytes(), meta, tts
}

// expected decodes what the writer should have stored for tt.
func expected(t *testing.T, tt testTensor) []float32 {
	switch tt.typ {
	case F16, BF16:
		return tt.data.Convert(map[Type]tensor.DType{F16: tensor.F16, BF16: tensor.BF16}[tt.typ]).Convert(tensor.F32).Float32s()
	case Q4_0, Q8_0, Q4_K:
		qf, _ := tt.typ.Format()
		x := tt.data.Float32s()
		n, _ := qf.Bytes(len(x))
		q := make([]byte, n)
		if err := qf.Quantize(q, x); err != nil {
			t.Fatal(err)
		}
		y := make([]float32, len(x))
		if err := qf.Dequantize(y, q); err != nil {
			t.Fatal(err)
		}
		return y
	}
	out := make([]float32, tt.data.Len())
	for i := range out {
		out[i] = float32(tt.data.Float(i))
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	data, meta, tts := writeTestFile(t)
	path := filepath.Join(t.TempDir(), "toy.gguf")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Version() != 3 || f.Alignment() != 64 || f.Architecture() != "toy" || f.Path() != path {
		t.Errorf("version %d alignment %d architecture %q path %q", f.Version(), f.Alignment(), f.Architecture(), f.Path())
	}
	if len(f.Keys()) != len(meta) {
		t.Errorf("%d keys, wrote %d", len(f.Keys()), len(meta))
	}
	for k, want := range meta {
		got := f.Meta(k)
		wv, _ := ValueOf(want)
		if !got.Valid() || got.Type() != wv.Type() || got.ElemType() != wv.ElemType() || !reflect.DeepEqual(got.Any(), wv.Any()) {
			t.Errorf("key %s: got %s %#v, want %s %#v", k, got.Type(), got.Any(), wv.Type(), wv.Any())
		}
	}
	if f.Meta("missing").Valid() {
		t.Error("missing key is valid")
	}
	infos := f.Tensors()
	if len(infos) != len(tts) {
		t.Fatalf("%d tensors, wrote %d", len(infos), len(tts))
	}
	for i, tt := range tts {
		ti := infos[i]
		if ti.Name != tt.name || ti.Type != tt.typ || !sameShape(ti.Shape, tt.shape) || ti.Offset%64 != 0 {
			t.Errorf("tensor %d: %+v, wrote %s %v %s", i, ti, tt.name, tt.shape, tt.typ)
		}
		got, err := f.TensorData(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		want := expected(t, tt)
		if !reflect.DeepEqual(got, want) && len(want) > 0 {
			t.Errorf("tensor %s (%s): data differs\n got %v\nwant %v", tt.name, tt.typ, head(got), head(want))
		}
		ht, err := f.Tensor(tt.name)
		if err != nil || !sameShape(ht.Shape(), tt.shape) || ht.DType() != tt.typ.DType() {
			t.Errorf("Tensor(%s): %v, %v", tt.name, ht, err)
			continue
		}
		if hv := ht.Convert(tensor.F32).Float32s(); !reflect.DeepEqual(hv, got) && len(got) > 0 {
			t.Errorf("Tensor(%s) as f32 differs from TensorData", tt.name)
		}
		if ht.DType().IsQuantized() { // a quantised tensor writes back unchanged
			w := NewWriter()
			w.AddTensor("again", ht, tt.typ)
			var buf bytes.Buffer
			w.WriteTo(&buf)
			g, _ := Parse(buf.Bytes())
			if raw, _ := g.RawData("again"); !bytes.Equal(raw, mustRaw(t, f, tt.name)) {
				t.Errorf("%s: rewriting the quantised tensor changed its blocks", tt.name)
			}
		}
	}
	// Parse of the same bytes sees the same file.
	g, err := Parse(data)
	if err != nil || !reflect.DeepEqual(g.Tensors(), f.Tensors()) || !reflect.DeepEqual(g.Metadata(), f.Metadata()) {
		t.Errorf("Parse differs from Open: %v", err)
	}
}

func sameShape(a, b []int) bool { return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b)) }

func mustRaw(t *testing.T, f *File, name string) []byte {
	raw, err := f.RawData(name)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func head(x []float32) []float32 { return x[:min(len(x), 6)] }

func TestVersion2(t *testing.T) {
	data, _, tts := writeTestFile(t)
	data = append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(data[4:], 2) // v2 has v3's layout for little-endian files
	f, err := Parse(data)
	if err != nil || f.Version() != 2 {
		t.Fatalf("v2: %v", err)
	}
	if _, err := f.TensorData(tts[0].name); err != nil {
		t.Error(err)
	}
}

// TestEveryDecodableType stores random blocks of each type with AddRaw and checks that
// TensorData decodes them as the block decoder does (which quant checks against its
// float64 reference).
func TestEveryDecodableType(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	w := NewWriter()
	var decodable []Type
	for typ := range types {
		if !typ.Decodable() {
			continue
		}
		decodable = append(decodable, typ)
		bs := typ.BlockSize()
		shape := []int{3, 2 * max(bs, 32)}
		raw := make([]byte, 3*2*max(bs, 32)/bs*typ.BlockBytes())
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		if err := w.AddRaw("t."+typ.String(), shape, typ, raw); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range decodable {
		name := "t." + typ.String()
		raw, err := f.RawData(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.TensorData(name)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		want := make([]float32, len(got))
		if err := decodeRange(typ, want, raw); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s element %d: %g, want %g", typ, i, got[i], want[i])
			}
		}
	}
}

// TestParallelDecode decodes a tensor large enough to be split across workers.
func TestParallelDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	x := make([]float32, 4*parallelMin)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	src, _ := tensor.FromFloat32s(tensor.Shape{len(x) / 256, 256}, x)
	w := NewWriter()
	if err := w.AddTensor("big", src, Q4_K); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w.WriteTo(&buf)
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.TensorData("big")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := f.RawData("big")
	want := make([]float32, len(x))
	if err := decodeRange(Q4_K, want, raw); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("parallel decode differs from a serial one")
	}
}

func TestUnsupportedType(t *testing.T) {
	w := NewWriter()
	if err := w.AddRaw("blk.0.attn_q.weight", []int{1, 256}, IQ2_XXS, make([]byte, 66)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w.WriteTo(&buf)
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.TensorData("blk.0.attn_q.weight")
	if err == nil || !strings.Contains(err.Error(), "unsupported type IQ2_XXS") || !strings.Contains(err.Error(), "blk.0.attn_q.weight") {
		t.Errorf("error %v does not name the tensor and its unsupported type", err)
	}
	if raw, err := f.RawData("blk.0.attn_q.weight"); err != nil || len(raw) != 66 {
		t.Errorf("RawData of an undecodable type: %d bytes, %v", len(raw), err)
	}
	if _, err := f.TensorData("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("missing tensor: %v", err)
	}
}

func TestClose(t *testing.T) {
	data, _, tts := writeTestFile(t)
	path := filepath.Join(t.TempDir(), "c.gguf")
	os.WriteFile(path, data, 0o644)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := f.TensorData(tts[0].name); err != ErrClosed {
		t.Errorf("TensorData after Close: %v", err)
	}
	if _, err := f.RawData(tts[0].name); err != ErrClosed {
		t.Errorf("RawData after Close: %v", err)
	}
	if f.Architecture() != "toy" || len(f.Tensors()) != len(tts) {
		t.Error("metadata lost on Close")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "absent.gguf")); err == nil {
		t.Error("Open of a missing file: no error")
	}
	empty := filepath.Join(t.TempDir(), "empty.gguf")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Open(empty); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("Open of an empty file: %v", err)
	}
}

func TestWriterErrors(t *testing.T) {
	f32, _ := tensor.FromFloat32s(tensor.Shape{2, 48}, make([]float32, 96))
	i32, _ := tensor.FromInts(tensor.Shape{2}, []int{1, 300})
	r5, _ := tensor.FromFloat32s(tensor.Shape{1, 1, 1, 1, 32}, make([]float32, 32))
	w := NewWriter()
	if err := w.AddTensor("a", f32, F32); err != nil {
		t.Fatal(err)
	}
	cases := map[string]error{
		"duplicate name":     w.AddTensor("a", f32, F32),
		"empty name":         w.AddTensor("", f32, F32),
		"long name":          w.AddTensor(strings.Repeat("n", 64), f32, F32),
		"partial Q4_0 block": w.AddTensor("q", f32, Q4_0),
		"partial Q4_K block": w.AddTensor("k", f32, Q4_K),
		"Q6_K encoding":      w.AddTensor("q6", f32, Q6_K),
		"ints as float":      w.AddTensor("i", i32, F16),
		"floats as int":      w.AddTensor("j", f32, I32),
		"I8 overflow":        w.AddTensor("o", i32, I8),
		"rank 5":             w.AddTensor("r", r5, F32),
		"unknown type":       w.AddTensor("u", f32, Type(99)),
		"nil tensor":         w.AddTensor("nil", nil, F32),
		"raw size":           w.AddRaw("raw", []int{32}, Q8_0, make([]byte, 33)),
		"negative dim":       w.AddRaw("neg", []int{-32}, Q8_0, nil),
		"alignment":          w.Set("general.alignment", uint32(48)),
		"alignment type":     w.Set("general.alignment", 64),
		"empty key":          w.Set("", 1),
		"bad value":          w.Set("k", struct{}{}),
		"array of scalars":   w.Set("k", []Value{{typ: MetaUint8, v: uint8(1)}}),
	}
	for name, err := range cases {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := w.Set("k", 1); err != nil {
		t.Fatal(err)
	}
	if err := w.Set("k", "replaced"); err != nil || len(w.meta) != 1 || w.meta[0].Value.Any() != "replaced" {
		t.Errorf("Set did not replace: %v %v", err, w.meta)
	}
}

func TestValueAccessors(t *testing.T) {
	v := func(x any) Value {
		val, err := ValueOf(x)
		if err != nil {
			t.Fatal(err)
		}
		return val
	}
	if n, ok := v(uint32(7)).Int(); !ok || n != 7 {
		t.Error("Int of uint32")
	}
	if _, ok := v(uint64(math.MaxUint64)).Int(); ok {
		t.Error("Int of a uint64 beyond int64")
	}
	if x, ok := v(int16(-3)).Float(); !ok || x != -3 {
		t.Error("Float of int16")
	}
	if _, ok := v("s").Int(); ok {
		t.Error("Int of a string")
	}
	if s, ok := v("s").Text(); !ok || s != "s" {
		t.Error("Text")
	}
	if b, ok := v(true).Bool(); !ok || !b {
		t.Error("Bool")
	}
	if ns, ok := v([]uint16{1, 2}).Ints(); !ok || !reflect.DeepEqual(ns, []int64{1, 2}) {
		t.Error("Ints")
	}
	if _, ok := v([]float32{1}).Ints(); ok {
		t.Error("Ints of floats")
	}
	if fs, ok := v([]int8{-1}).Floats(); !ok || fs[0] != -1 {
		t.Error("Floats")
	}
	if v([]string{"a", "b"}).Len() != 2 || v(3).Len() != 0 {
		t.Error("Len")
	}
	long := make([]string, 100)
	for i := range long {
		long[i] = "tok"
	}
	for x, want := range map[string]string{
		v("plain").String():               "plain",
		v(float32(0.1)).String():          "0.1",
		v([]int32{1, 2}).String():         "[1 2]",
		v(long).String():                  `["tok" "tok" "tok" "tok" "tok" "tok" "tok" "tok" … 100 strings]`,
		v([]bool{true}).String():          "[true]",
		Value{}.String():                  "<none>",
		v([]Value{v([]int8{1})}).String(): "[[1]]",
	} {
		if x != want {
			t.Errorf("String: %q, want %q", x, want)
		}
	}
}

func TestSummary(t *testing.T) {
	data, _, _ := writeTestFile(t)
	w := NewWriter()
	w.Set("general.architecture", "toy")
	w.AddRaw("odd", []int{256}, IQ2_XXS, make([]byte, 66))
	var buf bytes.Buffer
	w.WriteTo(&buf)
	for _, b := range [][]byte{data, buf.Bytes()} {
		f, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		bundle := f.MIMEBundle()
		text, html := bundle["text/plain"].(string), bundle["text/html"].(string)
		for _, want := range []string{"architecture", "toy", "tensor types", "metadata", "bits/weight"} {
			if !strings.Contains(text, want) || !strings.Contains(html, want) {
				t.Errorf("summary lacks %q:\n%s", want, text)
			}
		}
		if strings.Count(html, "<table>") != 3 {
			t.Errorf("want 3 HTML tables:\n%s", html)
		}
		if f.TensorTable().String() == "" {
			t.Error("empty tensor table")
		}
	}
	f, _ := Parse(data)
	s := f.String()
	for _, want := range []string{"Q4_K", "Q8_0", "[3]bool", "t.a.nested", "Tiny test model"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}
